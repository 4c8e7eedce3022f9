#!/bin/sh
[ "$1" = --vault-id ] && [ "$2" = dev ] && echo other && exit 0
echo "no secret for $2" >&2
exit 2
