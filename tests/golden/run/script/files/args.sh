#!/bin/sh
echo "args: $*"
echo "to stderr" >&2
echo "cwd: $(pwd)"
