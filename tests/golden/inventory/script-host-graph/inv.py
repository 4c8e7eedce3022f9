#!/bin/sh
if [ "$1" = "--list" ]; then
  echo '{"db": {"hosts": ["d1", "d2"]}, "malformed": {"k": "v"}}'
elif [ "$1" = "--host" ] && [ "$2" = "d1" ]; then
  echo '{"port": 5432}'
else
  echo '{}'
fi
