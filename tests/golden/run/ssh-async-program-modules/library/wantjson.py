#!/usr/bin/python
# WANT_JSON
import json
import sys

with open(sys.argv[1]) as f:
    args = json.load(f)
print(json.dumps({"changed": True, "items": args.get("items"), "verbosity": args["_ansible_verbosity"]}))
