#!/bin/sh
# The install as a user makes it, into a temporary prefix: scripts/install.sh (a debug build,
# which the test suite has built already; the release build is the same script without
# --debug), then, with only the installed names ahead of the system's on PATH,
# `ansible-playbook --version` and a play over ssh with become against a loopback sshd
# (scripts/sshd-loopback.sh). scripts/test.sh runs it after the tests; it fails on any error.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
cleanup() {
    "$root/scripts/sshd-loopback.sh" stop "$tmp/sshd" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

"$root/scripts/install.sh" --prefix "$tmp/prefix" --debug >/dev/null
PATH="$tmp/prefix/bin:/usr/bin:/bin"
export PATH

version=$(ansible-playbook --version)
case "$version" in
    *"ansible-core 2.21.5"*) ;;
    *) echo "install-test: ansible-playbook --version says: $version" >&2; exit 1 ;;
esac
[ "$(command -v ansible-playbook)" = "$tmp/prefix/bin/ansible-playbook" ]

port=$("$root/scripts/sshd-loopback.sh" start "$tmp/sshd")
user=$(cat "$tmp/sshd/user")
mkdir -p "$tmp/play"
cat > "$tmp/play/hosts" <<EOF
target ansible_host=127.0.0.1 ansible_port=$port ansible_user=$user ansible_ssh_private_key_file=$tmp/sshd/client_key ansible_ssh_common_args='-o UserKnownHostsFile=$tmp/sshd/known_hosts' ansible_python_interpreter=/usr/bin/python3
EOF
cat > "$tmp/play/site.yml" <<'EOF'
- hosts: target
  gather_facts: false
  become: true
  tasks:
    - command: id -un
      register: who
      changed_when: false
    - assert:
        that: who.stdout == 'root'
    - command: id -un
      become_user: nobody
      register: other
      changed_when: false
    - assert:
        that: other.stdout == 'nobody'
    - copy:
        content: "installed\n"
        dest: "{{ lookup('env', 'INSTALL_TEST_DIR') }}/copied.txt"
        mode: "0600"
EOF
mkdir -p "$tmp/out"
chmod 0777 "$tmp/out"
cd "$tmp/play"
INSTALL_TEST_DIR="$tmp/out" HOME="$tmp/home" ANSIBLE_NOCOLOR=1 \
    ansible-playbook -i hosts site.yml > "$tmp/transcript" 2>&1 || {
    cat "$tmp/transcript" >&2
    echo "install-test: the ssh play with become failed" >&2
    exit 1
}
grep -q "target *: ok=5 *changed=1 *unreachable=0 *failed=0" "$tmp/transcript" || {
    cat "$tmp/transcript" >&2
    exit 1
}
[ "$(cat "$tmp/out/copied.txt")" = installed ]
echo "install-test: installed into a temporary prefix; ansible-playbook ran an ssh play with become"
