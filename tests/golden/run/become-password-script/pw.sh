#!/bin/sh
echo not-a-real-password
