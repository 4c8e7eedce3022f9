#!/usr/bin/python
# A surrogate pair is one character, which UTF-8 encodes.
print('{"changed": false, "msg": "smile \\ud83d\\ude00"}')
