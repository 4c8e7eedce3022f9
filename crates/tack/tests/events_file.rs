//! `tack playbook --events FILE` and the ad-hoc command's refusals, through the binary: the
//! events file is private and replaces an older one, the transcript on stdout is unchanged,
//! and the ad-hoc options tack does not honour are refused by name before anything runs.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

fn tack(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(args)
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs")
}

#[test]
fn events_file_is_private_and_stdout_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").unwrap();
    std::fs::write(
        dir.path().join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=hi\n",
    )
    .unwrap();
    let events = dir.path().join("events.jsonl");
    std::fs::write(&events, "old contents\n").unwrap();
    std::fs::set_permissions(&events, std::fs::Permissions::from_mode(0o644)).unwrap();
    let plain = tack(dir.path(), &["playbook", "-i", "hosts", "site.yml"]);
    let with =
        tack(dir.path(), &["playbook", "-i", "hosts", "site.yml", "--events", "events.jsonl"]);
    assert_eq!(with.status.code(), Some(0), "{}", String::from_utf8_lossy(&with.stderr));
    assert_eq!(plain.stdout, with.stdout);
    let mode = std::fs::metadata(&events).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&events).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], r#"{"event": "play_start", "play": "all"}"#);
    assert_eq!(
        lines[1],
        r#"{"event": "task_start", "task": "debug", "action": "debug", "handler": false, "params": {"msg": "hi"}, "params_shared": true, "hosts": ["h1"]}"#
    );
    assert!(
        lines[2].starts_with(
            r#"{"event": "task_result", "host": "h1", "task": "debug", "status": "ok""#
        )
    );
    assert!(lines[3].starts_with(r#"{"event": "recap", "hosts": {"h1": {"ok": 1,"#));
    assert_eq!(lines.len(), 4);
}

#[test]
fn events_keep_the_async_poll_lines_of_the_transcript() {
    // Before: with `--events` the `ASYNC POLL`/`ASYNC OK` lines were lost from stdout.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hosts"),
        "h1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - shell: sleep 1\n      \
         async: 10\n      poll: 1\n",
    )
    .unwrap();
    let with =
        tack(dir.path(), &["playbook", "-i", "hosts", "site.yml", "--events", "events.jsonl"]);
    let stdout = String::from_utf8_lossy(&with.stdout);
    assert_eq!(with.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("ASYNC POLL on h1: jid="), "{stdout}");
    assert!(stdout.contains("ASYNC OK on h1: jid="), "{stdout}");
}

#[test]
fn an_events_path_that_is_a_symlink_is_refused_and_its_target_untouched() {
    // Before: the link was followed, its target truncated and made 0600.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").unwrap();
    std::fs::write(
        dir.path().join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=hi\n",
    )
    .unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep me\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("events.jsonl")).unwrap();
    let out =
        tack(dir.path(), &["playbook", "-i", "hosts", "site.yml", "--events", "events.jsonl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Unable to write the events file events.jsonl: it is a symbolic link"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o644);
}

#[test]
fn events_leave_a_loops_items_seeing_the_items_before_them() {
    // The events file renders each item's arguments before the loop runs; an item after the
    // first reads the register name the items before it set, which only its own render sees.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").unwrap();
    std::fs::write(
        dir.path().join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=before\n      register: r\n    - debug:\n        msg: \"{{ item }} sees {{ r.msg }}\"\n      loop: [1, 2]\n      register: r\n",
    )
    .unwrap();
    let plain = tack(dir.path(), &["playbook", "-i", "hosts", "site.yml"]);
    let with =
        tack(dir.path(), &["playbook", "-i", "hosts", "site.yml", "--events", "events.jsonl"]);
    assert_eq!(with.status.code(), Some(0), "{}", String::from_utf8_lossy(&with.stderr));
    assert!(String::from_utf8_lossy(&plain.stdout).contains("2 sees 1 sees before"));
    assert_eq!(plain.stdout, with.stdout);
}

#[test]
fn adhoc_options_tack_does_not_honour_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").unwrap();
    let args = ["adhoc", "-i", "hosts", "all", "-m", "ping", "--scp-extra-args", "-l 10"];
    let out = tack(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("tack adhoc does not support --scp-extra-args"), "{stderr}");
}
