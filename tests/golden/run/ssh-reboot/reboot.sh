#!/bin/sh
# A "reboot" for the test host: a new boot id, then the end of the ssh session that ran
# this (its nearest sshd ancestor), as a real reboot would end it.
dir=$(dirname "$0")
n=$(cat "$dir/boot_id")
echo "$((n + 1))" > "$dir/boot_id"
pid=$$
while [ "$pid" -gt 1 ]; do
  case $(cat /proc/$pid/comm) in
    sshd*) kill "$pid"; exit 0 ;;
  esac
  pid=$(cut -d' ' -f4 /proc/$pid/stat)
done
exit 0
