#!/bin/sh
id -un
