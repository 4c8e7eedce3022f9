#!/bin/sh
# The whole test suite, as CI runs it (.ci/run calls this). Installs what the tests need,
# idempotently, then checks formatting and lints and runs every test.
set -eu
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
