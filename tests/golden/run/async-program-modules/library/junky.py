#!/usr/bin/python
from __future__ import annotations

import json
import sys


def main():
    print("noise before the result")
    print(json.dumps(dict(changed=False, source='user')))
    print("noise after the result")
    print("more", file=sys.stderr)


if __name__ == '__main__':
    main()
