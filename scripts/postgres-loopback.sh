#!/bin/sh
# A throw-away PostgreSQL server on 127.0.0.1 for the run store's tests, living wholly in DIR:
#
#   url=$(scripts/postgres-loopback.sh start DIR)   # prints postgres://tack@127.0.0.1:PORT/tack
#   scripts/postgres-loopback.sh stop DIR
#
# The cluster (DIR/data), its socket, log (DIR/postgres.log) and port (DIR/port) stay in DIR;
# the server trusts the one user `tack` on loopback and nothing else. PostgreSQL refuses to
# run as root, so as root the cluster belongs to the `postgres` user the package made.
# The server binaries are found under /usr/lib/postgresql/*/bin or on PATH; the package
# `postgresql` is installed with apt only when they are missing.
set -eu

usage() { echo "usage: $0 start DIR | stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2

bindir() {
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
    done
    command -v pg_ctl >/dev/null 2>&1 && { dirname "$(command -v pg_ctl)"; return; }
    return 1
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        su postgres -s /bin/sh -c "$*"
    else
        sh -c "$*"
    fi
}

stop() {
    [ -f "$dir/data/postmaster.pid" ] || return 0
    bin=$(bindir)
    as_owner "'$bin/pg_ctl' -D '$dir/data' -m immediate stop" >/dev/null 2>&1 || true
}

start() {
    if ! bin=$(bindir); then
        command -v apt-get >/dev/null || { echo "$0: PostgreSQL is missing and apt-get is not here" >&2; exit 1; }
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >&2 ||
            { echo "$0: could not install postgresql" >&2; exit 1; }
        bin=$(bindir)
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    stop
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    chmod 700 "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "'$bin/initdb' -D '$dir/data' -U tack -A trust --no-sync -E UTF8" >/dev/null
    fi
    tries=0
    while :; do
        port=$(( (($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000)) + 30000 ))
        if as_owner "'$bin/pg_ctl' -D '$dir/data' -l '$dir/postgres.log' -w -t 30 \
            -o \"-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir' -c fsync=off\" start" >/dev/null 2>&1; then
            break
        fi
        tries=$((tries + 1))
        [ $tries -lt 10 ] || { echo "$0: PostgreSQL did not start; see $dir/postgres.log" >&2; exit 1; }
    done
    as_owner "'$bin/psql' -h 127.0.0.1 -p $port -U tack -d postgres -q -c 'CREATE DATABASE tack'" >/dev/null 2>&1 || true
    echo "$port" > "$dir/port"
    echo "postgres://tack@127.0.0.1:$port/tack"
}

case $cmd in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
