#!/bin/sh
echo "script sees $GREETING"
