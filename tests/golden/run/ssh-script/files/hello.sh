#!/bin/sh
echo "args: $#"
for a in "$@"; do echo "arg=$a"; done
touch "$(dirname "$1")/ran-$2"
