#!/usr/bin/env bash
# Builds the release artifact a user downloads: a static x86_64-unknown-linux-musl `tack`
# (no debug info, symbols stripped) with the static agent embedded, packed as
#
#   dist/tack-<version>-x86_64-linux-musl.tar.gz          tack-<version>/{tack, README,
#   dist/tack-<version>-x86_64-linux-musl.tar.gz.sha256     ansible-playbook, ansible,
#                                                           ansible-inventory, ansible-vault}
#
# where the four ansible names are relative symlinks to `tack` (tack acts as the matching
# command under each name) and <version> is the tack crate's. The .sha256 file is in
# `sha256sum` format: `cd dist && sha256sum -c tack-*.sha256` checks it.
#
#   scripts/release.sh                                   # -> dist/, builds in target/
#   CARGO_TARGET_DIR=/elsewhere scripts/release.sh       # builds (and the agent) elsewhere
#
# Adds the rustup musl target when it is missing, and installs musl-tools with apt-get (for
# musl-gcc, which compiles the bundled SQLite and other C code for musl) when no musl C
# compiler is found. The agent is built by scripts/build-agent.sh (in $CARGO_TARGET_DIR/agent
# when CARGO_TARGET_DIR is set, else target/agent) unless TACK_AGENT_BIN names one; either way
# it must be statically linked. Cargo.toml's profiles are left alone: the overrides below are
# environment variables. Idempotent: a second run with nothing changed is cargo's no-op and
# writes the same tarball, byte for byte (file times are the last commit's, owners are 0).
# The tarball's path is the last line on stdout; everything else goes to stderr.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
target=x86_64-unknown-linux-musl
cargo=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-$root/target}
dist=${TACK_DIST_DIR:-$root/dist}

say() { echo "release: $*" >&2; }
die() { say "$*"; exit 1; }

# Whether an ELF binary asks for a program interpreter (the dynamic loader): a static one
# does not, and runs on any x86_64 Linux.
is_static() {
    headers=$(LC_ALL=C readelf -lW "$1") || return 1
    case $headers in *INTERP*) return 1 ;; esac
}

pkgid=$("$cargo" pkgid --manifest-path "$root/Cargo.toml" -p tack)
version=${pkgid##*[#@]}
case $version in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) die "cannot read tack's version from '$pkgid'" ;;
esac
name=tack-$version
artifact=$name-x86_64-linux-musl.tar.gz
say "tack $version for $target"

# The Rust target.
if command -v rustup >/dev/null 2>&1 \
    && ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    say "adding the $target target"
    rustup target add "$target" >&2
fi

# A C compiler for musl (cc-rs looks for x86_64-linux-musl-gcc, then musl-gcc), and readelf.
if ! command -v x86_64-linux-musl-gcc >/dev/null 2>&1 && ! command -v musl-gcc >/dev/null 2>&1
then
    say "installing musl-tools (musl-gcc) with apt-get"
    sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get install -y --no-install-recommends musl-tools >&2 \
        || { $sudo apt-get update >&2 && $sudo apt-get install -y --no-install-recommends musl-tools >&2; }
fi
command -v readelf >/dev/null 2>&1 || die "readelf (binutils) is needed to check the binaries are static"

# The agent to embed: built here on purpose (not by tack-connect's build script) so a failed
# musl build stops the release instead of falling back to a dynamically linked agent.
agent=${TACK_AGENT_BIN:-}
if [ -z "$agent" ]; then
    if [ -n "${CARGO_TARGET_DIR:-}" ]; then
        export TACK_AGENT_TARGET_DIR=${TACK_AGENT_TARGET_DIR:-$CARGO_TARGET_DIR/agent}
    fi
    # build-agent.sh prints the binary's path as its last line.
    agent=$(TACK_AGENT_TARGET="$target" "$root/scripts/build-agent.sh")
    agent=${agent##*$'\n'}
fi
[ -f "$agent" ] || die "no agent binary at '$agent'"
is_static "$agent" || die "the agent $agent is dynamically linked; a release embeds a static one"
say "embedding the agent $agent"

# The controller: release, for musl (static by the target's default), no debug info, stripped.
CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols TACK_AGENT_BIN="$agent" \
    "$cargo" build --manifest-path "$root/Cargo.toml" --locked --release -p tack --bin tack \
    --target "$target" --target-dir "$target_dir" >&2
bin=$target_dir/$target/release/tack
is_static "$bin" || die "$bin is dynamically linked"

# It must start on its own and name a static agent.
about=$(env -i "$bin" --version)
case $about in
    *"agent x86_64, static"*) say "$about" ;;
    *) die "the built tack does not name a static x86_64 agent: $about" ;;
esac

# The tree, staged away from dist/ so a failed run leaves no half-made artifact.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin" "$stage/$name/tack"
chmod 0755 "$stage/$name/tack"
for alias in ansible-playbook ansible ansible-inventory ansible-vault; do
    ln -s tack "$stage/$name/$alias"
done
cat > "$stage/$name/README" <<EOF
tack $version for x86_64 Linux
===============================

tack runs the Ansible playbooks, roles, inventories and vaults you already have, with
ansible-core's results, output and exit codes, much faster. This directory holds one
statically linked program, \`tack\`, that needs nothing else installed on this machine:
no Rust, no Python, no shared libraries. It carries the small static agent it copies to
each ssh host on first contact (into the host's cache; later runs reuse it), so managed
hosts need no Python either for the modules tack implements itself.

Python is needed only here, on the controller, and only when a playbook uses a module
tack has no native code for (such a module runs through ansible-core's own module code).
For those, install ansible-core (for example with pipx or in a virtualenv) and either
leave its ansible-playbook on PATH after this directory, or name its interpreter with
\`--ansible-python PATH\` or the TACK_ANSIBLE_PYTHON variable.

Using it
--------

  tack playbook -i inventory site.yml     # the same as ansible-playbook -i inventory site.yml
  tack --help                             # every command (plan, serve, adhoc, inventory...)

The files ansible-playbook, ansible, ansible-inventory and ansible-vault are links to
tack: run under one of those names, tack behaves as that ansible command and takes its
flags. Put this directory first on PATH and scripts that call ansible-playbook run tack:

  export PATH="\$PWD:\$PATH"
  ansible-playbook --version

ssh hosts are reached with the system's own \`ssh\` client, found on PATH, so your
~/.ssh/config applies.
EOF

# The tarball: sorted entries, fixed owners and times, no gzip timestamp, so the same build
# gives the same bytes. Written beside its final name, then moved into place.
mtime=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
mkdir -p "$dist"
tmp=$dist/.$artifact.tmp
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
    --format=gnu -cf - "$name" | gzip -n -9 > "$tmp"
mv -f "$tmp" "$dist/$artifact"
(cd "$dist" && sha256sum "$artifact" > "$artifact.sha256")

say "$(cat "$dist/$artifact.sha256")"
say "binary $(stat -c %s "$bin") bytes, tarball $(stat -c %s "$dist/$artifact") bytes"
echo "$dist/$artifact"
