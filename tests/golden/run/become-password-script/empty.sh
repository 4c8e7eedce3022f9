#!/bin/sh
printf "\n"
