#!/bin/sh
echo "args: $*"
