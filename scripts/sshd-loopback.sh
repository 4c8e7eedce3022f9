#!/bin/sh
# A throw-away OpenSSH server on 127.0.0.1 for tests and recorders, living wholly in DIR:
#
#   port=$(scripts/sshd-loopback.sh start DIR [password])   # prints the port it listens on
#   scripts/sshd-loopback.sh stop DIR
#
# With `password` (root only) the server also takes password logins for the user tackpw,
# made when missing (useradd, home /home/tackpw, shell /bin/sh) with a random password that
# is kept in /var/lib/tack-tests/tackpw.password (0600) for every later server, and copied
# to DIR/password; DIR/password_user names the user.
#
# DIR (created when missing, mode 0700) holds everything: the host key, a client key pair
# (DIR/client_key, DIR/client_key.pub) authorized for the current user through DIR's own
# AuthorizedKeysFile (~/.ssh is left alone but for a stale known_hosts entry for the
# port, see below), DIR/home (the HOME of sessions made
# with that key, so what they leave in ~ stays in DIR), DIR/known_hosts naming the host key
# for the port (so clients can keep host key checking on), DIR/ssh_config (a client config
# naming the port, user, key and known hosts for 127.0.0.1), the config, the pid file, the log
# (DIR/sshd.log) and DIR/port and DIR/user for callers that read files rather than stdout.
# The port is free on 127.0.0.1: random ports are tried until sshd listens on one.
# openssh-server is installed with apt only when /usr/sbin/sshd is missing.
set -eu

usage() { echo "usage: $0 start DIR [password] | stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
cmd=$1
dir=$2
mode=${3:-key}
[ "$mode" = key ] || [ "$mode" = password ] || usage
pw_user=tackpw
pw_store=/var/lib/tack-tests

# The password user and its password, made once per machine; several servers start at once,
# so under a lock.
password_user() {
    [ "$(id -u)" = 0 ] || { echo "$0: password logins need root (to make the user $pw_user)" >&2; exit 1; }
    mkdir -p "$pw_store"
    chmod 700 "$pw_store"
    (
        flock 9
        fresh=
        if ! id -u "$pw_user" >/dev/null 2>&1; then
            useradd -m -s /bin/sh "$pw_user" >&2
            fresh=1
        fi
        if [ ! -s "$pw_store/$pw_user.password" ]; then
            (umask 077 && od -An -N12 -tx1 /dev/urandom | tr -d ' \n' > "$pw_store/$pw_user.password")
            fresh=1
        fi
        if [ -n "$fresh" ]; then
            printf '%s:%s\n' "$pw_user" "$(cat "$pw_store/$pw_user.password")" | chpasswd
        fi
    ) 9> "$pw_store/lock"
    (umask 077 && cp "$pw_store/$pw_user.password" "$dir/password")
    echo "$pw_user" > "$dir/password_user"
}

stop() {
    [ -f "$dir/sshd.pid" ] || return 0
    pid=$(cat "$dir/sshd.pid")
    kill "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/sshd.pid"
}

start() {
    if [ ! -x /usr/sbin/sshd ]; then
        command -v apt-get >/dev/null || { echo "$0: /usr/sbin/sshd is missing and apt-get is not here" >&2; exit 1; }
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server; } >&2 ||
            { echo "$0: could not install openssh-server" >&2; exit 1; }
    fi
    mkdir -p "$dir"
    chmod 700 "$dir"
    dir=$(cd "$dir" && pwd)
    stop
    [ -f "$dir/host_key" ] || ssh-keygen -q -t ed25519 -N '' -C tack-loopback-host -f "$dir/host_key"
    [ -f "$dir/client_key" ] || ssh-keygen -q -t ed25519 -N '' -C tack-loopback-client -f "$dir/client_key"
    mkdir -p "$dir/home"
    chmod 700 "$dir/home"
    printf 'environment="HOME=%s/home" %s\n' "$dir" "$(cat "$dir/client_key.pub")" > "$dir/authorized_keys"
    chmod 600 "$dir/authorized_keys" "$dir/client_key" "$dir/host_key"
    user=$(id -un)
    allow=$user
    password_auth=no
    if [ "$mode" = password ]; then
        password_user
        allow="$user $pw_user"
        password_auth=yes
    fi
    # Privilege separation needs its empty directory when sshd runs as root.
    if [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd && chmod 755 /run/sshd; fi
    tries=0
    while :; do
        # 20000-32767 from the kernel's random bytes: clear of the well-known ports and of
        # Linux's ephemeral range (32768-60999), where a client's own end may sit.
        port=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12768 + 20000 ))
        cat > "$dir/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PidFile $dir/sshd.pid
AllowUsers $allow
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication $password_auth
KbdInteractiveAuthentication no
UsePAM no
PermitUserEnvironment yes
StrictModes no
MaxStartups 100:30:200
MaxSessions 100
LogLevel ERROR
Subsystem sftp /usr/lib/openssh/sftp-server
CFG
        # OpenSSH 9.2 daemonizes before it binds: it exits 0 on a taken port, and its
        # daemon logs "Cannot bind any address." and ends. It writes its pid file once it
        # listens, so the pid file, not the exit status, says whether this port is its.
        rm -f "$dir/sshd.pid"
        : > "$dir/sshd.log"
        if /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"; then
            i=0
            while [ ! -s "$dir/sshd.pid" ] && ! grep -q 'Cannot bind' "$dir/sshd.log" &&
                [ $i -lt 100 ]; do
                sleep 0.05
                i=$((i + 1))
            done
            if [ -s "$dir/sshd.pid" ] && kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null; then break; fi
        fi
        tries=$((tries + 1))
        [ $tries -lt 20 ] || { echo "$0: sshd did not start (see $dir/sshd.log)" >&2; exit 1; }
    done
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_key.pub")" > "$dir/known_hosts"
    # Clients that skip host key checking (ansible's host_key_checking=False) still record the
    # key in the user's own known_hosts (ssh reads the passwd home, not $HOME). An entry left
    # there by an earlier throw-away server on this port names another key, and ssh's
    # "REMOTE HOST IDENTIFICATION HAS CHANGED" warning would then reach the caller's output.
    # The port is this server's now, so the stale entry goes.
    known="$(getent passwd "$(id -u)" | cut -d: -f6)/.ssh/known_hosts"
    if [ -f "$known" ] && ssh-keygen -F "[127.0.0.1]:$port" -f "$known" >/dev/null 2>&1; then
        ssh-keygen -R "[127.0.0.1]:$port" -f "$known" >/dev/null 2>&1 || true
    fi
    # A client config for callers that reach the server by name only (ProxyJump, -F).
    cat > "$dir/ssh_config" <<CFG
Host 127.0.0.1
  Port $port
  User $user
  IdentityFile $dir/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
CFG
    echo "$port" > "$dir/port"
    echo "$user" > "$dir/user"
    echo "$port"
}

case $cmd in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
