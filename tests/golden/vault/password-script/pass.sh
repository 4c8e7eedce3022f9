#!/bin/sh
printf "secret\r\n\n"
