#!/usr/bin/env bash
# Builds the tack-agent binary a controller uploads to its managed hosts: static
# x86_64-unknown-linux-musl (override with TACK_AGENT_TARGET), release, stripped, in its own
# target directory (TACK_AGENT_TARGET_DIR, default target/agent) so it never waits on the
# main build's lock. Adds the rustup target when it is missing. When the target cannot be had
# or does not build, builds the controller's own-architecture binary instead and says why.
#
# Idempotent: a second run with nothing changed is cargo's no-op. The binary's path is the
# last line on stdout; everything else goes to stderr.
#
#   agent=$(scripts/build-agent.sh) && file "$agent"
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
target=${TACK_AGENT_TARGET:-x86_64-unknown-linux-musl}
target_dir=${TACK_AGENT_TARGET_DIR:-$root/target/agent}
cargo=${CARGO:-cargo}

# The agent is shipped, not debugged in place: no debug info, symbols stripped. Set here, not
# in Cargo.toml, so the controller's own release profile is untouched.
export CARGO_PROFILE_RELEASE_DEBUG=false
export CARGO_PROFILE_RELEASE_STRIP=symbols

build() {
    "$cargo" build --manifest-path "$root/Cargo.toml" --release -p tack-agent --bin tack-agent \
        --target-dir "$target_dir" "$@" >&2
}

why_not=""
if ! command -v rustup >/dev/null 2>&1; then
    why_not="rustup is not installed, so the $target target cannot be added"
elif ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    echo "build-agent: adding the $target target" >&2
    rustup target add "$target" >&2 || why_not="'rustup target add $target' failed"
fi

if [ -z "$why_not" ]; then
    if build --target "$target"; then
        echo "build-agent: built the static $target agent" >&2
        echo "$target_dir/$target/release/tack-agent"
        exit 0
    fi
    why_not="the $target build failed (see above)"
fi

host=$(rustc -vV | sed -n 's/^host: //p')
echo "build-agent: FALLING BACK to the controller's own architecture ($host): $why_not" >&2
build
echo "$target_dir/release/tack-agent"
