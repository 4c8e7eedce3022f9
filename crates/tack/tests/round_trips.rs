//! How many times an action plugin reaches the host, counted from `-vvv` (one
//! `NATIVE MODULE name` line per module run, one `PUT` line per staged file): where seed 002
//! says nothing is sent (bytes that already match, `force: false` on an existing file, a
//! `creates` that exists, a fetched file already the same), nothing is, over the local
//! connection and over ssh.

mod common;

use std::path::Path;
use std::process::Command;

use common::Sshd;

const PLAYBOOK: &str = r#"- hosts: all
  gather_facts: false
  vars:
    d: "{{ playbook_dir }}/out-{{ inventory_hostname }}"
  tasks:
    - name: setup
      file: path={{ d }} state=directory
    - name: copy new
      copy: content="a\n" dest={{ d }}/a.txt
    - name: copy same
      copy: content="a\n" dest={{ d }}/a.txt
    - name: copy kept
      copy: content="b\n" dest={{ d }}/a.txt force=false
    - name: copy file same
      copy: src=s.txt dest={{ d }}/s.txt
    - name: copy file same again
      copy: src=s.txt dest={{ d }}/s.txt
    - name: template new
      template: src=t.j2 dest={{ d }}/t.txt
    - name: template same
      template: src=t.j2 dest={{ d }}/t.txt
    - name: tree new
      copy: src=tree/ dest={{ d }}/tree
    - name: tree same
      copy: src=tree/ dest={{ d }}/tree
    - name: fetch new
      fetch: src={{ d }}/a.txt dest={{ playbook_dir }}/fetched
    - name: fetch same
      fetch: src={{ d }}/a.txt dest={{ playbook_dir }}/fetched
"#;

/// Per task name, the modules run and the files staged, in order, from `-vvv` output.
fn uses(stdout: &str) -> Vec<(String, Vec<String>)> {
    let mut tasks: Vec<(String, Vec<String>)> = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("TASK [") {
            let name = rest.split(']').next().unwrap_or_default().to_string();
            tasks.push((name, Vec::new()));
            continue;
        }
        let Some((_, what)) = line.split_once("> ") else { continue };
        let Some((_, list)) = tasks.last_mut() else { continue };
        if let Some(module) = what.strip_prefix("NATIVE MODULE ") {
            list.push(module.split(' ').next().unwrap_or_default().to_string());
        } else if what.starts_with("PUT ") {
            list.push("PUT".into());
        }
    }
    tasks
}

fn run(dir: &Path, hosts: &str) -> Vec<(String, Vec<String>)> {
    std::fs::write(dir.join("hosts"), hosts).unwrap();
    std::fs::write(dir.join("site.yml"), PLAYBOOK).unwrap();
    std::fs::write(dir.join("s.txt"), "s\n").unwrap();
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(dir.join("templates/t.j2"), "{{ inventory_hostname }}\n").unwrap();
    std::fs::create_dir_all(dir.join("tree/sub")).unwrap();
    std::fs::create_dir_all(dir.join("tree/empty")).unwrap();
    std::fs::write(dir.join("tree/one"), "1\n").unwrap();
    std::fs::write(dir.join("tree/sub/two"), "2\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml", "-vvv"])
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    uses(&stdout)
}

fn check(found: &[(String, Vec<String>)]) {
    let of = |name: &str| -> Vec<&str> {
        let (_, list) = found.iter().find(|(n, _)| n == name).unwrap_or_else(|| {
            panic!("no task {name} in {found:?}");
        });
        list.iter().map(String::as_str).collect()
    };
    // Different bytes: the stat, the staged bytes, the copy that moves them into place.
    assert_eq!(of("copy new"), ["stat", "PUT", "copy"]);
    // The same bytes: nothing is sent; the file module sets the attributes.
    assert_eq!(of("copy same"), ["stat", "file"]);
    assert_eq!(of("copy file same again"), ["stat", "file"]);
    // force: false and a file there: one stat, without a checksum, and nothing else.
    assert_eq!(of("copy kept"), ["stat"]);
    assert_eq!(of("template new"), ["stat", "PUT", "copy"]);
    assert_eq!(of("template same"), ["stat", "file"]);
    // A tree of two files and a directory no file implies.
    let new = of("tree new");
    assert_eq!(new.iter().filter(|u| **u == "PUT").count(), 2, "{new:?}");
    // Converged: a stat and a file per file, a file for the empty directory, no bytes.
    assert_eq!(of("tree same"), ["stat", "file", "stat", "file", "file"]);
    assert_eq!(of("fetch new"), ["stat", "slurp"]);
    // The fetched file matches: the host is asked for its checksum only.
    assert_eq!(of("fetch same"), ["stat"]);
}

#[test]
fn nothing_is_sent_where_nothing_differs_locally() {
    let dir = tempfile::tempdir().unwrap();
    check(&run(dir.path(), "l1 ansible_connection=local\n"));
}

#[test]
fn nothing_is_sent_where_nothing_differs_over_ssh() {
    let dir = tempfile::tempdir().unwrap();
    let (_sshd, line) = Sshd::start(&dir.path().join(".sshd"));
    check(&run(dir.path(), &line));
}
