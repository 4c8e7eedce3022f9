#!/bin/sh
echo 'partial'
echo 'it broke' >&2
exit 3
