//! `reboot` against a loopback ssh host whose reboot and boot id are scripts the test
//! controls, for what the golden case `run/ssh-reboot` cannot show: messages holding the
//! commands' stderr (ansible runs them under `ssh -tt`, whose stderr gains `Shared connection
//! to ... closed.`; tack's do not), an empty boot id, `connect_timeout`, the delays, and the
//! shutdown line ansible builds for Linux.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::Sshd;

/// A "reboot": the boot id file counts up, and the ssh session that ran this ends (its
/// nearest sshd ancestor is killed), as a real reboot would end it. With `empty` the next
/// boot id read answers nothing once.
const REBOOT: &str = r#"#!/bin/sh
dir=$(dirname "$0")
n=$(cat "$dir/boot_id")
echo "$((n + 1))" > "$dir/boot_id"
[ "${1:-}" = empty ] && touch "$dir/empty-once"
pid=$$
while [ "$pid" -gt 1 ]; do
  case $(cat /proc/$pid/comm) in
    sshd*) kill "$pid"; exit 0 ;;
  esac
  pid=$(cut -d' ' -f4 /proc/$pid/stat)
done
"#;

/// The boot id, each read counted; nothing, once, after a reboot that asked for it.
const BOOT_ID: &str = r#"#!/bin/sh
dir=$(dirname "$0")
echo x >> "$dir/reads"
if [ -e "$dir/empty-once" ]; then rm "$dir/empty-once"; exit 0; fi
cat "$dir/boot_id"
"#;

fn run(dir: &Path, playbook: &str) -> Output {
    let (_sshd, line) = Sshd::start(&dir.join(".sshd"));
    std::fs::write(dir.join("hosts"), line).unwrap();
    std::fs::write(dir.join("site.yml"), playbook).unwrap();
    std::fs::write(dir.join("reboot.sh"), REBOOT).unwrap();
    std::fs::write(dir.join("boot-id.sh"), BOOT_ID).unwrap();
    std::fs::write(dir.join("boot_id"), "1\n").unwrap();
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs")
}

const HEAD: &str =
    "- hosts: all\n  gather_facts: false\n  vars:\n    d: \"{{ playbook_dir }}\"\n  tasks:\n";

#[test]
fn a_failing_reboot_command_is_not_a_reboot() {
    let dir = tempfile::tempdir().unwrap();
    let play = format!(
        "{HEAD}    - reboot:\n        reboot_command: /bin/sh -c 'echo out; echo err >&2; exit 3'\n        boot_time_command: sh {{{{ d }}}}/boot-id.sh\n      register: r\n      failed_when: false\n    - debug: msg=\"{{{{ r.msg }}}}|{{{{ r.rebooted }}}}|{{{{ r.start is string }}}}\"\n"
    );
    let out = run(dir.path(), &play);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("\"msg\": \"Reboot command failed. Error was: 'out, err'|False|True\""),
        "{stdout}"
    );
}

#[test]
fn a_failing_boot_id_command_fails_before_any_reboot() {
    let dir = tempfile::tempdir().unwrap();
    let play = format!(
        "{HEAD}    - reboot:\n        reboot_command: /bin/sh {{{{ d }}}}/reboot.sh\n        boot_time_command: echo no >&2; exit 4\n      ignore_errors: true\n"
    );
    let out = run(dir.path(), &play);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let wanted = "Task failed: Action failed: reboot: failed to get host boot time info, rc: 4, \
                  stdout: , stderr: no\n";
    assert!(stdout.contains(wanted), "{stdout}");
    // Nothing was rebooted.
    assert_eq!(std::fs::read_to_string(dir.path().join("boot_id")).unwrap(), "1\n");
}

#[test]
fn an_empty_boot_id_is_not_a_new_boot() {
    let dir = tempfile::tempdir().unwrap();
    let play = format!(
        "{HEAD}    - reboot:\n        reboot_command: /bin/sh {{{{ d }}}}/reboot.sh empty\n        boot_time_command: sh {{{{ d }}}}/boot-id.sh\n        connect_timeout: 5\n        post_reboot_delay: 1\n      register: r\n    - debug: msg=\"{{{{ r.rebooted }}}} {{{{ r.elapsed >= 1 }}}}\"\n    - command: echo after\n"
    );
    let out = run(dir.path(), &play);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("\"msg\": \"True True\""), "{stdout}");
    // Before the reboot, the empty answer after it, the new id: three reads.
    let reads = std::fs::read_to_string(dir.path().join("reads")).unwrap();
    assert_eq!(reads.lines().count(), 3, "{stdout}");
    assert!(stdout.contains("ok=3") && stdout.contains("changed=2"), "{stdout}");
}

#[test]
fn the_shutdown_line_is_ansibles_for_linux() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("bin")).unwrap();
    let shutdown = "#!/bin/sh\nd=$(dirname \"$0\")/..\nprintf '%s|' \"$@\" > \"$d/args\"\nn=$(cat \"$d/boot_id\")\necho $((n + 1)) > \"$d/boot_id\"\n";
    let path = dir.path().join("bin/shutdown");
    std::fs::write(&path, shutdown).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let play = format!(
        "{HEAD}    - reboot:\n        search_paths: ['{{{{ d }}}}/bin']\n        boot_time_command: sh {{{{ d }}}}/boot-id.sh\n        pre_reboot_delay: 120\n        msg: going down\n"
    );
    let out = run(dir.path(), &play);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // `shutdown -r {delay_min} "{message}"`, the delay in whole minutes.
    assert_eq!(std::fs::read_to_string(dir.path().join("args")).unwrap(), "-r|2|going down|");
}
