#!/bin/sh
# The reference the golden cases were recorded from, and what the Python-path cases run
# ansible-core's module code with: ansible-core 2.21.5 in a venv at DIR (default
# /opt/ansible-ref), made once; later calls print DIR and do nothing else.
# ansible-core 2.21 needs Python 3.12 or newer: the newest such python3.N found on PATH or
# under pyenv is used.
# usage: scripts/install-ansible-ref.sh [DIR]
set -eu
dir=${1:-/opt/ansible-ref}
if [ -x "$dir/bin/ansible-playbook" ] && "$dir/bin/python" -c 'import ansible' 2>/dev/null; then
  echo "$dir"
  exit 0
fi
py=""
for candidate in python3.14 python3.13 python3.12 $(ls -d "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do
  # pyenv's shims name versions that are not selected; running one tells.
  if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    py=$candidate
    break
  fi
done
[ -n "$py" ] || { echo "$0: no Python 3.12 or newer found for ansible-core 2.21" >&2; exit 1; }
"$py" -m venv "$dir"
# cryptography 51 warns on stderr whenever ansible-core imports its ssh-agent code (every
# command), which no recording may carry: the releases before it, as the goldens were made with.
"$dir/bin/pip" install -q 'ansible-core==2.21.5' passlib 'cryptography<51'
echo "$dir"
