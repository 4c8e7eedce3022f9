#!/usr/bin/python
# Answers with a string holding an escape no other surrogate pairs with: Python can hold it,
# UTF-8 cannot encode it.
print('{"changed": false, "nested": {"list": ["fine", "bad \\udc80\\udc81 end"]}, "msg": "hi \\udc80 mom"}')
