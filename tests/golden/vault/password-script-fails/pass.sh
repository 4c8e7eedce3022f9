#!/bin/sh
echo oops >&2
exit 3
