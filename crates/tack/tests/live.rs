//! A loop's item lines go out as each item finishes, as ansible prints them, not when the
//! whole task is done (issue 24 item 11). The second item waits until the test has read the
//! first item's line: were the lines held to the task's end, it would wait in vain and fail.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const PLAYBOOK: &str = r#"- hosts: all
  gather_facts: false
  tasks:
    - shell: "{{ item }}"
      loop:
        - "true"
        - "for i in $(seq 300); do [ -e {{ playbook_dir }}/seen-{{ inventory_hostname }} ] && exit 0; sleep 0.1; done; exit 1"
"#;

fn run(hosts: &str, forks: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("site.yml"), PLAYBOOK).unwrap();
    std::fs::write(dir.path().join("hosts"), hosts).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml", "-f", forks])
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut transcript = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        // The first item's line, read while the task still runs: let the second item end.
        if let Some(host) =
            line.strip_prefix("changed: [").and_then(|rest| rest.strip_suffix("] => (item=true)"))
        {
            std::fs::write(dir.path().join(format!("seen-{host}")), "").unwrap();
        }
        transcript.push_str(&line);
        transcript.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{transcript}");
    assert!(!transcript.contains("failed=1"), "{transcript}");
}

#[test]
fn a_loops_items_are_shown_as_they_finish() {
    run("h1 ansible_connection=local\n", "1");
}

#[test]
fn with_forks_the_first_hosts_items_are_shown_as_they_finish_and_the_rest_in_order() {
    // h2's first item is shown once h1 is done: h1's second item waits only for h1's line.
    run("h1 ansible_connection=local\nh2 ansible_connection=local\n", "5");
}
