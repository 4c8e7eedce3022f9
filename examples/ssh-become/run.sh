#!/bin/sh
# Runs site.yml over ssh with become against a loopback sshd of its own:
#
#   examples/ssh-become/run.sh [extra tack playbook arguments, e.g. -v, --check, -K]
#
# It starts scripts/sshd-loopback.sh in a temporary directory (a host key, a client key
# authorized for the current user, a known_hosts naming the server), writes an inventory
# for 127.0.0.1 with the server's port, user, key and known_hosts, runs `tack playbook` and
# stops the server (and the run's ssh ControlMasters) on exit. The binary is $TACK, else
# target/release/tack, else target/debug/tack (build it first: cargo build). TACK may also name an ansible-playbook
# (tack itself under that name, or ansible-core's) to run the same play with it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ -n "${TACK:-}" ]; then
    tack=$TACK
elif [ -x "$root/target/release/tack" ]; then
    tack=$root/target/release/tack
elif [ -x "$root/target/debug/tack" ]; then
    tack=$root/target/debug/tack
else
    echo "$0: no tack binary: build one (cargo build) or set TACK" >&2
    exit 1
fi
# An ansible-playbook (tack's own name for `tack playbook`, or ansible-core's) takes the
# same arguments without the subcommand.
case $(basename "$tack") in
    ansible-playbook) ;;
    *) set -- playbook "$@" ;;
esac

state=$(mktemp -d "${TMPDIR:-/tmp}/tack-loopback.XXXXXX")
cleanup() {
    # The ssh ControlMasters the run left (ControlPersist) end with the server. The listener
    # tack's agent leaves on the host (docs/engine.md) ends by itself within that time, 60 s.
    for socket in "$state"/cp/*; do
        [ -S "$socket" ] && ssh -o ControlPath="$socket" -O exit 127.0.0.1 2>/dev/null || true
    done
    sh "$root/scripts/sshd-loopback.sh" stop "$state/sshd" || true
    rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$(sh "$root/scripts/sshd-loopback.sh" start "$state/sshd")
user=$(cat "$state/sshd/user")
cat > "$state/inventory" <<INV
[loopback]
127.0.0.1 ansible_port=$port ansible_user=$user ansible_ssh_private_key_file=$state/sshd/client_key ansible_ssh_common_args='-o UserKnownHostsFile=$state/sshd/known_hosts -o StrictHostKeyChecking=yes' ansible_python_interpreter=auto_silent ansible_control_path_dir=$state/cp
INV

status=0
"$tack" "$@" -i "$state/inventory" "$here/site.yml" || status=$?
exit $status
