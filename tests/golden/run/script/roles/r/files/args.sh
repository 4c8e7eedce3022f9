#!/bin/sh
echo "role's own script: $*"
