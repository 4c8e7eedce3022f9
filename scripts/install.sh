#!/bin/sh
# Installs tack from this checkout: the controller with the static agent embedded (built by
# scripts/build-agent.sh through the build, as any cargo build of tack does), stripped, into
# PREFIX/bin, with the names ansible-playbook, ansible, ansible-inventory and ansible-vault
# beside it as links to it (tack answers to them as the matching commands).
#
#   scripts/install.sh [--prefix DIR] [--no-ansible-names] [--debug]
#
# PREFIX is ~/.local unless --prefix says otherwise. A file already at one of the ansible
# names that is not a link to this tack (a pip-installed ansible, say) is left alone and the
# install stops, naming it: pass --no-ansible-names, or choose another prefix. --debug
# installs a debug build (what the test suite builds already, so it is quick; CI's install
# test uses it). Running it again replaces what it installed.
set -eu

prefix="${HOME:?}/.local"
names=yes
profile=release
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "$0: --prefix needs a directory" >&2; exit 2; }
                  prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --no-ansible-names) names=no; shift ;;
        --debug) profile=debug; shift ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "$0: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$prefix/bin"
bin=$(cd "$prefix/bin" && pwd)

# Check the names before building, so a refusal costs nothing.
ansible_names="ansible-playbook ansible ansible-inventory ansible-vault"
if [ "$names" = yes ]; then
    for name in $ansible_names; do
        if [ -e "$bin/$name" ] || [ -L "$bin/$name" ]; then
            if [ ! -L "$bin/$name" ] || [ "$(readlink "$bin/$name")" != tack ]; then
                echo "$0: $bin/$name exists and is not tack's; install with --no-ansible-names or another --prefix" >&2
                exit 1
            fi
        fi
    done
fi

if [ "$profile" = release ]; then
    # Line tables (the release profile's, for backtraces in development) and symbols are
    # left out of what is installed: 118 MB with them.
    CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=true \
        cargo install --locked --force --path "$root/crates/tack" --root "$prefix" \
        --target-dir "$root/target/install"
else
    cargo install --locked --force --debug --path "$root/crates/tack" --root "$prefix" \
        --target-dir "$root/target"
fi

if [ "$names" = yes ]; then
    for name in $ansible_names; do
        ln -sfn tack "$bin/$name"
    done
fi

echo "installed $("$bin/tack" --version | head -1) in $bin"
[ "$names" = yes ] && echo "with $ansible_names"
case ":$PATH:" in
    *":$bin:"*) ;;
    *) echo "$bin is not on PATH: add it to use these commands by name" ;;
esac
