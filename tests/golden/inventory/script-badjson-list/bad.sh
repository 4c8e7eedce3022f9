#!/bin/sh
echo '{"g": {"hosts": ["a"]},'
