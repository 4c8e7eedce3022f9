//! `tack plan` (seed 003) against one local host: nothing that could change the host runs,
//! what reads the output of a task that did not run is deferred naming that task, conditions
//! stay lazy, loops and handlers are listed as the plan knows them, and the recap and exit
//! code say whether the plan is complete.

use std::path::Path;
use std::process::Output;

fn plan(dir: &Path, playbook: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    std::fs::write(dir.join("site.yml"), playbook.replace("@DIR@", &dir.display().to_string()))
        .expect("playbook");
    std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["plan", "-i", "hosts", "site.yml"])
        .args(extra)
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs")
}

fn line_for<'a>(stdout: &'a str, task: &str) -> &'a str {
    let banner = format!("TASK [{task}] ");
    let at = stdout.find(&banner).unwrap_or_else(|| panic!("no task {task} in:\n{stdout}"));
    stdout[at..].lines().nth(1).unwrap_or_default()
}

/// The seed's two-task example, in ansible's words.
const SEED: &str = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: Read current setting
      command: touch @DIR@/first-ran
      register: current_setting
      changed_when: false
    - name: Converge setting
      command: touch @DIR@/second-ran
      when: "'enabled' not in current_setting.stdout"
"#;

#[test]
fn the_seed_example_runs_nothing_and_is_incomplete() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = plan(dir.path(), SEED, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(line_for(&stdout, "Read current setting"), "would run: [h1]");
    assert_eq!(
        line_for(&stdout, "Converge setting"),
        "deferred: [h1]: depends on output unavailable until apply (from \"Read current setting\")"
    );
    assert!(stdout.contains("would_run=1 "), "{stdout}");
    assert!(stdout.contains("deferred=1 "), "{stdout}");
    assert!(
        stdout.contains("Plan incomplete: 1 outcome depends on output unavailable until apply.")
    );
    assert!(!dir.path().join("first-ran").exists(), "the first command ran");
    assert!(!dir.path().join("second-ran").exists(), "the second command ran");
}

#[test]
fn conditions_are_lazy_and_definedness_of_unknown_output_is_deferred() {
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: probe
      shell: echo enabled
      register: probe
    - name: lazy and
      debug: msg=hi
      when: false and probe.stdout == 'x'
    - name: lazy or
      debug: msg=hi
      when: true or probe.stdout == 'x'
    - name: is defined
      debug: msg=hi
      when: probe is defined
    - name: derived
      set_fact:
        derived: "{{ probe.stdout | upper }}"
    - name: reads derived
      file: path=@DIR@/{{ derived }} state=touch
    - name: loop over unknown
      debug: msg={{ item }}
      loop: "{{ probe.stdout_lines }}"
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(line_for(&stdout, "lazy and"), "skipping: [h1]");
    assert!(line_for(&stdout, "lazy or").starts_with("matched: [h1]"), "{stdout}");
    for task in ["is defined", "derived", "loop over unknown"] {
        assert!(line_for(&stdout, task).ends_with("(from \"probe\")"), "{task}: {stdout}");
    }
    assert!(line_for(&stdout, "reads derived").ends_with("(from \"derived\")"), "{stdout}");
    assert!(stdout.contains("deferred=4 "), "{stdout}");
}

#[test]
fn an_undefined_variable_stays_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: probe
      command: "true"
      register: probe
    - name: undefined first
      debug: msg=hi
      when: nowhere_defined and probe.rc == 0
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("'nowhere_defined' is undefined"), "{stdout}");
    assert!(stdout.contains("failed=1 "), "{stdout}");
}

#[test]
fn check_mode_modules_report_matched_or_would_change_and_handlers_are_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("there")).expect("dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: already there
      file: path=@DIR@/there state=directory
    - name: missing
      file: path=@DIR@/missing state=directory
      notify: known
    - name: unknown notifier
      command: "true"
      notify: unknown
    - name: items
      file: path=@DIR@/{{ item }} state=directory
      loop: [there, other]
    - name: safe to run
      command: touch @DIR@/really-ran
      check_mode: false
  handlers:
    - name: known
      command: touch @DIR@/known-handler-ran
    - name: unknown
      command: touch @DIR@/unknown-handler-ran
"#;
    let out = plan(dir.path(), playbook, &["--format", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let tasks = doc["plays"][0]["tasks"].as_array().expect("tasks");
    let outcome = |name: &str| {
        let task = tasks.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}"));
        task["hosts"]["h1"].clone()
    };
    assert_eq!(outcome("already there")["outcome"], "matched");
    assert_eq!(outcome("missing")["outcome"], "would_change");
    assert_eq!(outcome("missing")["fields"], serde_json::json!(["state"]));
    assert_eq!(outcome("unknown notifier")["outcome"], "would_run");
    let items = outcome("items");
    assert_eq!(items["outcome"], "would_change");
    assert_eq!(items["items"][0]["outcome"], "matched");
    assert_eq!(items["items"][1]["outcome"], "would_change");
    assert_eq!(outcome("known")["outcome"], "would_run");
    assert_eq!(outcome("unknown")["outcome"], "deferred");
    assert_eq!(outcome("unknown")["deferred_by"], serde_json::json!(["unknown notifier"]));
    assert_eq!(doc["stats"]["complete"], false);
    // What the user marked safe ran; nothing else did.
    assert!(dir.path().join("really-ran").exists());
    for never in ["missing", "other", "known-handler-ran", "unknown-handler-ran"] {
        assert!(!dir.path().join(never).exists(), "{never} was made");
    }
}
