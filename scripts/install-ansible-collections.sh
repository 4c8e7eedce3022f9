#!/bin/sh
# The collections the `ansible` 14.x package ships (it pairs with ansible-core 2.21), for the
# goldens that run collection content: installed once, without dependencies and outside any
# interpreter's sys.path, into DIR (default /opt/ansible-collections), which goldens name
# with ANSIBLE_COLLECTIONS_PATH. Later calls print DIR and do nothing else.
# Needs the reference (scripts/install-ansible-ref.sh) for its pip.
# usage: scripts/install-ansible-collections.sh [DIR]
set -eu
dir=${1:-/opt/ansible-collections}
version=14.5.0
if [ -f "$dir/ansible-$version.dist-info/METADATA" ] &&
  [ -d "$dir/ansible_collections/community/general" ]; then
  echo "$dir"
  exit 0
fi
ref=$(dirname "$0")/install-ansible-ref.sh
pip="$("$ref")/bin/pip"
rm -rf "$dir.partial"
"$pip" install -q --no-deps --no-compile --target "$dir.partial" "ansible==$version"
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "$dir"
