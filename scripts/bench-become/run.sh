#!/bin/sh
# The become benchmark of docs/benchmarks.md: a three-task playbook on N ssh hosts (all the
# loopback sshd of ../shared/tools/loopback-sshd.sh on port 2222), run without become, then
# with become to `nobody`, each twice (the second run finds the agents cached).
# usage: scripts/bench-become/run.sh TACK [N]
set -eu
tack=$1; n=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
inv=$(mktemp)
sh "$here/../../../shared/bench/fleet/mkinv.sh" "$n" ssh > "$inv"
for play in plain plain become become; do
  s=$(date +%s.%N)
  ANSIBLE_HOST_KEY_CHECKING=False "$tack" playbook -i "$inv" "$here/$play.yml" > /dev/null 2>&1
  echo "$play $(echo "$(date +%s.%N) - $s" | bc)s"
done
rm -f "$inv"
