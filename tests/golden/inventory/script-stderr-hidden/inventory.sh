#!/bin/sh
# Succeeds, and says things on its standard error as it goes.
if [ "$1" = "--host" ]; then
  echo "looking up $2" >&2
  echo '{"looked_up": true}'
  exit 0
fi
echo "warning: the cloud answered slowly" >&2
echo "second line of notes" >&2
cat <<'JSON'
{"web": {"hosts": ["w1", "w2"], "vars": {"port": 80}}}
JSON
