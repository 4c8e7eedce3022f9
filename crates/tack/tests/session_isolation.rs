//! `worker_session_isolation`: run on a terminal, what a task starts on the local connection
//! has no controlling terminal unless the setting is off, as under ansible-core 2.21.5
//! (observed under `script`: `raw-no-tty cmd-no-tty` by default, `raw-has-tty cmd-has-tty`
//! with `ANSIBLE_WORKER_SESSION_ISOLATION=false`). A task whose
//! `ansible_worker_session_isolation` asks otherwise than the setting is refused by name.
//!
//! The terminal is util-linux's `script`; without it the test says so and checks nothing
//! else.

use std::path::Path;
use std::process::Command;

const PLAY: &str = r#"- hosts: h1
  gather_facts: false
  tasks:
    - raw: sh -c 'if (exec 3<>/dev/tty) 2>/dev/null; then echo raw-has-tty; else echo raw-no-tty; fi'
      register: r
    - command: sh -c 'if (exec 3<>/dev/tty) 2>/dev/null; then echo cmd-has-tty; else echo cmd-no-tty; fi'
      register: c
    - debug: msg="{{ r.stdout | trim }} {{ c.stdout }}"
"#;

/// The transcript of `site.yml` in `dir`, run on a terminal with `env` added.
fn on_terminal(dir: &Path, env: &[(&str, &str)]) -> Option<String> {
    let tack = env!("CARGO_BIN_EXE_tack");
    let line = format!("{tack} playbook -i hosts site.yml");
    let mut command = Command::new("script");
    command.args(["-qec", &line, "/dev/null"]).current_dir(dir).env("ANSIBLE_NOCOLOR", "1");
    command.env("ANSIBLE_CONFIG", "");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn module_processes_have_no_terminal_unless_isolation_is_off() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("util-linux's script is not installed: no terminal to run on");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    std::fs::write(dir.path().join("site.yml"), PLAY).expect("playbook");
    let isolated = on_terminal(dir.path(), &[]).expect("runs");
    assert!(isolated.contains("\"msg\": \"raw-no-tty cmd-no-tty\""), "{isolated}");
    let shared =
        on_terminal(dir.path(), &[("ANSIBLE_WORKER_SESSION_ISOLATION", "false")]).expect("runs");
    assert!(shared.contains("\"msg\": \"raw-has-tty cmd-has-tty\""), "{shared}");
}

#[test]
fn a_task_asking_otherwise_than_the_setting_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    let play = "- hosts: h1\n  gather_facts: false\n  tasks:\n    - command: echo hi\n      vars:\n        ansible_worker_session_isolation: false\n";
    std::fs::write(dir.path().join("site.yml"), play).expect("playbook");
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("tack does not support ansible_worker_session_isolation false"),
        "{stdout}"
    );
}
