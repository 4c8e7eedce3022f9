#!/bin/sh
echo nope >&2
exit 3
