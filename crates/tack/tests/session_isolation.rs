//! `worker_session_isolation`: run on a terminal, what a task starts on the local connection
//! has no controlling terminal unless the setting is off, as under ansible-core 2.21.5
//! (observed under `script`: `raw-no-tty cmd-no-tty` by default, `raw-has-tty cmd-has-tty`
//! with `ANSIBLE_WORKER_SESSION_ISOLATION=false`). A task's own
//! `ansible_worker_session_isolation` decides for that task, either way (ansible-core's
//! `fork_safe_stdio` target checks both).
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

/// The transcript of `site.yml` in `dir`, run on a terminal with `env` added and `args`
/// after the command line's own.
fn on_terminal(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Option<String> {
    let tack = env!("CARGO_BIN_EXE_tack");
    let line = format!("{tack} playbook -i hosts site.yml {}", args.join(" "));
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
    let isolated = on_terminal(dir.path(), &[], &[]).expect("runs");
    assert!(isolated.contains("\"msg\": \"raw-no-tty cmd-no-tty\""), "{isolated}");
    let shared = on_terminal(dir.path(), &[("ANSIBLE_WORKER_SESSION_ISOLATION", "false")], &[])
        .expect("runs");
    assert!(shared.contains("\"msg\": \"raw-has-tty cmd-has-tty\""), "{shared}");
}

/// [`PLAY`] with each task's own `ansible_worker_session_isolation`, from the extra var `own`.
const PLAY_OWN: &str = r#"- hosts: h1
  gather_facts: false
  tasks:
    - raw: sh -c 'if (exec 3<>/dev/tty) 2>/dev/null; then echo raw-has-tty; else echo raw-no-tty; fi'
      register: r
      vars:
        ansible_worker_session_isolation: "{{ own }}"
    - command: sh -c 'if (exec 3<>/dev/tty) 2>/dev/null; then echo cmd-has-tty; else echo cmd-no-tty; fi'
      register: c
      vars:
        ansible_worker_session_isolation: "{{ own }}"
    - debug: msg="{{ r.stdout | trim }} {{ c.stdout }}"
"#;

#[test]
fn a_tasks_own_variable_decides_for_that_task() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("util-linux's script is not installed: no terminal to run on");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    std::fs::write(dir.path().join("site.yml"), PLAY_OWN).expect("playbook");
    for (setting, own, wanted) in
        [("true", "false", "raw-has-tty cmd-has-tty"), ("false", "true", "raw-no-tty cmd-no-tty")]
    {
        let env = [("ANSIBLE_WORKER_SESSION_ISOLATION", setting)];
        let out = on_terminal(dir.path(), &env, &["-e", &format!("own={own}")]).expect("runs");
        assert!(out.contains(&format!("\"msg\": \"{wanted}\"")), "{out}");
    }
}
