#!/bin/sh
# The run server on a big recorded run (docs/benchmarks.md, "The run server on a 1,000-host
# run"): records a run of HOSTS local hosts (1,000) and 30 tasks with `tack playbook --record`
# into a fresh SQLite store in DIR, serves it with `tack serve`, and times (curl's total time,
# five times each) the run page, the run page with a task chosen and a later page of its hosts,
# and the tasks API (default page and host_limit=1000).
#
#   scripts/bench-server-big-run.sh [TACK] [DIR] [HOSTS]
#
# TACK defaults to target/release/tack; DIR to a new temporary directory (left for a look).
set -eu

tack=${1:-target/release/tack}
dir=${2:-$(mktemp -d)}
hosts=${3:-1000}
port=$(( ($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000) + 30000 ))
mkdir -p "$dir"
db="sqlite://$dir/runs.db"

{
    echo "[fleet]"
    i=0
    while [ "$i" -lt "$hosts" ]; do
        echo "h$i ansible_connection=local"
        i=$((i + 1))
    done
} > "$dir/hosts"
{
    printf -- '- hosts: fleet\n  gather_facts: false\n  tasks:\n'
    t=0
    while [ "$t" -lt 30 ]; do
        printf '    - name: task %s\n      debug: msg="{{ inventory_hostname }} %s"\n' "$t" "$t"
        t=$((t + 1))
    done
} > "$dir/site.yml"

start=$(date +%s)
"$tack" playbook -i "$dir/hosts" "$dir/site.yml" -f 50 --record "$db" > /dev/null 2> "$dir/record.err"
echo "recorded $hosts hosts x 30 tasks in $(( $(date +%s) - start )) s"
id=$(sed -n 's/.*the run is recorded as \([0-9a-f]*\).*/\1/p' "$dir/record.err")
token=$("$tack" token create --role admin --name bench --db "$db")

"$tack" serve --db "$db" --listen "127.0.0.1:$port" > "$dir/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 2
curl -s -o /dev/null -H "Authorization: Bearer $token" -X POST \
    -d "{\"name\":\"big\",\"project_dir\":\"$dir\",\"playbook\":\"site.yml\",\"inventory\":\"hosts\"}" \
    "http://127.0.0.1:$port/v1/incarnations"
# The recorded run becomes the incarnation's, so the incarnation routes reach it.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE runs SET incarnation='big' WHERE id=?\", (sys.argv[2],)); c.commit()" "$dir/runs.db" "$id"

time_of() {
    label=$1
    shift
    for _ in 1 2 3 4 5; do
        curl -s -o /dev/null -w "%{time_total} %{size_download}\n" "$@"
    done | sort -n | sed -n 3p | awk -v l="$label" '{printf "%-34s median %.1f ms  (%d bytes)\n", l, $1*1000, $2}'
}
base="http://127.0.0.1:$port"
# Signed in as a browser is: the sign-in form and its cookie, then the session's cookie.
jar="$dir/cookies"
nonce=$(curl -s -c "$jar" "$base/ui/login" | sed -n 's/.*name=form value=\([0-9a-f]*\).*/\1/p')
curl -s -o /dev/null -b "$jar" -c "$jar" --data-urlencode "token=$token" -d "form=$nonce" "$base/ui/login"
time_of "run page" -b "$jar" "$base/ui/runs/$id"
time_of "run page, task 15, hosts 501-600" -b "$jar" "$base/ui/runs/$id?task=15&from=500"
time_of "index page" -b "$jar" "$base/ui/"
time_of "tasks API (100 hosts a task)" -H "Authorization: Bearer $token" "$base/v1/incarnations/big/runs/$id/tasks"
time_of "tasks API (host_limit=1000)" -H "Authorization: Bearer $token" "$base/v1/incarnations/big/runs/$id/tasks?host_limit=1000"
