//! What the engine does not run yet is refused by name before any play starts: nothing is
//! printed on stdout (no PLAY banner), the error names the keyword, action or option and
//! where it was written, and the exit code is ansible's for the error's class.

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, playbook: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    std::fs::write(dir.join("site.yml"), playbook).expect("playbook");
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .args(extra)
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs")
}

fn refused(playbook: &str, extra: &[&str], wanted: &str, code: i32) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = run(dir.path(), playbook, extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "printed before refusing: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains(wanted), "wanted {wanted:?} in:\n{stderr}");
}

const PLAY: &str = "- hosts: all\n  gather_facts: false\n  tasks:\n";

#[test]
fn fact_gathering_is_refused_until_setup_exists() {
    refused(
        "- hosts: all\n  tasks:\n    - debug: msg=hi\n",
        &[],
        "tack does not support gathering facts (set 'gather_facts: false' on the play) yet",
        1,
    );
}

#[test]
fn modules_that_need_a_host_are_refused_by_name() {
    let play = format!("{PLAY}    - debug: msg=first\n    - command: /bin/true\n");
    refused(&play, &[], "tack does not support the action 'command' yet", 1);
    refused(&play, &[], "site.yml:5:7", 1);
}

#[test]
fn unsupported_keywords_are_refused_where_written() {
    let play = format!("{PLAY}    - debug: msg=x\n      delegate_to: localhost\n");
    refused(&play, &[], "tack does not support 'delegate_to' yet", 1);
    let play = format!("{PLAY}    - include_tasks: other.yml\n");
    refused(&play, &[], "tack does not support the action 'include_tasks' yet", 1);
    let play = format!(
        "{PLAY}    - debug: msg=x\n      loop: [1]\n      loop_control:\n        pause: 1\n"
    );
    refused(&play, &[], "the loop_control option 'pause'", 1);
    let play = "- hosts: all\n  gather_facts: false\n  serial: 1\n  tasks:\n    - debug: msg=x\n";
    refused(play, &[], "the play keyword 'serial'", 1);
}

#[test]
fn unsupported_options_are_refused_with_ansibles_option_error_code() {
    let play = format!("{PLAY}    - debug: msg=x\n");
    refused(&play, &["--diff"], "tack playbook does not support --diff yet", 5);
    refused(&play, &["-v"], "does not support -v (verbose output) yet", 5);
}
