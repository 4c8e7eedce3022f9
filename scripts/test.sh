#!/bin/sh
# The whole test suite, as CI runs it (.ci/run calls this). Installs what the tests need,
# idempotently, then checks formatting and lints and runs every test.
set -eu
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)" >&2; exit 1; }
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

# The cron module's cases need crontab(1); without it they are skipped (and say so).
if ! command -v crontab >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cron >/dev/null; } ||
    echo "could not install cron: the cron module's cases will be skipped" >&2
fi

# The ssh connection's tests start their own loopback sshd (scripts/sshd-loopback.sh).
if [ ! -x /usr/sbin/sshd ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null; } ||
    echo "could not install openssh-server: the ssh tests will fail" >&2
fi

# The password-login cases with password_mechanism=sshpass need sshpass.
if ! command -v sshpass >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sshpass >/dev/null; } ||
    echo "could not install sshpass: the sshpass cases will fail" >&2
fi

# The become cases escalate with sudo (on ssh hosts and locally).
if [ ! -x /usr/bin/sudo ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo >/dev/null; } ||
    echo "could not install sudo: the become cases will fail" >&2
fi

# The terminal status line's test draws it in a tmux pane (crates/tack/tests/progress.rs).
if ! command -v tmux >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; } ||
    echo "could not install tmux: the status line's test will fail" >&2
fi

# The run store's tests start their own PostgreSQL on loopback (scripts/postgres-loopback.sh).
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } ||
    echo "could not install postgresql: the run store's PostgreSQL tests will fail" >&2
fi

# The web page's browser test drives Debian's Chromium through chromedriver.
if { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; } && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } ||
    echo "could not install chromium: the browser test will fail" >&2
fi

# The apt module's cases and goldens install and purge tiny packages (sl, hello): they need
# the package lists, which a fresh machine may not have yet.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null &&
  ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
  apt-get update -qq || echo "could not update the apt lists: the apt cases will fail" >&2
fi

# The Python-path goldens and module cases run ansible-core's own module code with the
# reference's interpreter (/opt/ansible-ref/bin/python), as the recordings did.
if [ "$(id -u)" = 0 ]; then
  scripts/install-ansible-ref.sh >/dev/null ||
    echo "could not install ansible-core 2.21.5: the Python-path cases will fail" >&2
  # The collection goldens run the `ansible` package's collections (community.general, ...).
  scripts/install-ansible-collections.sh >/dev/null ||
    echo "could not install the ansible package's collections: the collection cases will fail" >&2
fi

# The agent the controller uploads to ssh hosts: static musl (scripts/build-agent.sh adds the
# rustup target, or falls back to this machine's architecture and says so), embedded in the
# controller at build time.
TACK_AGENT_BIN=$(scripts/build-agent.sh)
export TACK_AGENT_BIN

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# ansible-core 2.21.5's own integration targets that tack passes (tests/conformance/tack.tsv),
# locally, and every third of its ssh passes against a loopback sshd (docs/conformance.md).
python3 scripts/conformance.py ci --tack target/debug/tack
# The install as a user makes it (scripts/install.sh into a temporary prefix), then an ssh
# play with become through the installed ansible-playbook.
.ci/install-test.sh
# README's first command, in the debug build the tests made (the release one is the same
# command with --release): it must keep naming the binary (the workspace has two) and run.
cargo run -q --locked --bin tack -- playbook -i examples/first-run/inventory examples/first-run/site.yml >/dev/null
