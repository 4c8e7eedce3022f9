#!/bin/bash
# The warm-Python benchmark of docs/benchmarks.md: ten Python-path tasks (site.yml) on N
# distinct ssh hosts of ../shared/tools/fleet-netns.sh (started when it is down), each runner
# twice (the second run is "converged": nothing to change, links and caches as a user's
# second run finds them), tack and then each reference command given.
# usage: scripts/bench-python-path/run.sh N TACK_CMD [REF_CMD ...]
set -u
n=$1; tack=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../shared
inv=$(mktemp)
sh "$shared/bench/fleet/mkinv.sh" "$n" ssh > "$inv"
"$shared/tools/fleet-netns.sh" status >/dev/null 2>&1 || "$shared/tools/fleet-netns.sh" up >&2
t() {
  local s rc
  s=$(date +%s.%N)
  ANSIBLE_HOST_KEY_CHECKING=False ip netns exec fleet $1 -i "$inv" "$here/site.yml" > "$2" 2>&1
  rc=$?
  echo "$(echo "$(date +%s.%N) - $s" | bc)s (rc $rc)"
}
for cmd in "$tack" "$@"; do
  out=/tmp/bench-python-path-$(basename "${cmd%% *}")
  echo "$cmd: first $(t "$cmd" "$out-first.out") converged $(t "$cmd" "$out-converged.out")"
done
rm -f "$inv"
