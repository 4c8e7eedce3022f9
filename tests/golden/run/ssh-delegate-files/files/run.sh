#!/bin/sh
echo "ran $1"
