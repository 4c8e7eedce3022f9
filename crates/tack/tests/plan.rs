//! `tack plan` (seed 003) against one local host: nothing that could change the host runs,
//! what reads the output of a task that did not run is deferred naming that task, conditions
//! stay lazy, loops and handlers are listed as the plan knows them, and the recap and exit
//! code say whether the plan is complete.

use std::path::Path;
use std::process::Output;

fn plan(dir: &Path, playbook: &str, extra: &[&str]) -> Output {
    plan_hosts(dir, "h1 ansible_connection=local\n", playbook, extra)
}

fn plan_hosts(dir: &Path, inventory: &str, playbook: &str, extra: &[&str]) -> Output {
    std::fs::write(dir.join("hosts"), inventory).expect("hosts");
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

/// The line a host gets for a task deferred on `producer`'s unavailable output.
fn deferred_on(producer: &str) -> String {
    format!("deferred: [h1]: depends on output unavailable until apply (from \"{producer}\")")
}

/// `--format json`'s outcome for `host` of the first play's task named `name`.
fn host_outcome(doc: &serde_json::Value, name: &str, host: &str) -> serde_json::Value {
    let tasks = doc["plays"][0]["tasks"].as_array().expect("tasks");
    let task = tasks.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}"));
    task["hosts"][host].clone()
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
    assert_eq!(line_for(&stdout, "Converge setting"), deferred_on("Read current setting"));
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
    let outcome = |name: &str| host_outcome(&doc, name, "h1");
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
    assert_eq!(outcome("safe to run")["outcome"], "ran");
    assert_eq!(outcome("safe to run")["changed"], true);
    assert_eq!(doc["stats"]["complete"], false);
    // What the user marked safe ran; nothing else did.
    assert!(dir.path().join("really-ran").exists());
    for never in ["missing", "other", "known-handler-ran", "unknown-handler-ran"] {
        assert!(!dir.path().join(never).exists(), "{never} was made");
    }
}

#[test]
fn a_task_marked_safe_runs_and_its_output_is_real() {
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: read the setting
      command: echo enabled
      register: setting
      check_mode: false
      changed_when: false
    - name: converge
      file: path=@DIR@/converged state=touch
      when: "'enabled' not in setting.stdout"
    - name: report
      debug: msg="{{ setting.stdout }}"
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(line_for(&stdout, "read the setting"), "ran: [h1]");
    assert_eq!(line_for(&stdout, "converge"), "skipping: [h1]");
    assert_eq!(line_for(&stdout, "report"), "matched: [h1] => {");
    assert!(stdout.contains("\"msg\": \"enabled\""), "{stdout}");
    assert!(stdout.contains("Plan complete: every outcome above is known."), "{stdout}");
}

#[test]
fn unavailable_output_is_per_host_and_read_through_hostvars() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inventory = "h1 ansible_connection=local\nh2 ansible_connection=local\n";
    let playbook = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: probe on h1 only
      command: echo up
      register: probe
      when: inventory_hostname == 'h1'
    - name: was it skipped
      debug: msg=skipped
      when: probe is skipped
    - name: h2 reads h1's probe
      debug: msg="{{ hostvars['h1'].probe.stdout }}"
      when: inventory_hostname == 'h2'
"#;
    let out = plan_hosts(dir.path(), inventory, playbook, &["--format", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let outcome = |name: &str, host: &str| host_outcome(&doc, name, host);
    assert_eq!(outcome("probe on h1 only", "h1")["outcome"], "would_run");
    assert_eq!(outcome("probe on h1 only", "h2")["outcome"], "skipped");
    // h1's unknown probe never stands for h2's real skipped one.
    assert_eq!(outcome("was it skipped", "h1")["outcome"], "deferred");
    assert_eq!(outcome("was it skipped", "h2")["outcome"], "matched");
    assert_eq!(outcome("h2 reads h1's probe", "h1")["outcome"], "skipped");
    assert_eq!(outcome("h2 reads h1's probe", "h2")["outcome"], "deferred");
    assert_eq!(
        outcome("h2 reads h1's probe", "h2")["deferred_by"],
        serde_json::json!(["probe on h1 only"])
    );
}

#[test]
fn a_loop_with_known_changes_and_deferred_items_reports_both() {
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: probe
      command: echo name
      register: probe
    - name: mixed
      file: path=@DIR@/{{ item }} state=directory
      loop: [known, other]
      when: item == 'known' or probe.rc == 0
"#;
    let out = plan(dir.path(), playbook, &["--format", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let task = &doc["plays"][0]["tasks"][1];
    assert_eq!(task["name"], "mixed");
    let h1 = &task["hosts"]["h1"];
    assert_eq!(h1["outcome"], "would_change", "{h1}");
    assert_eq!(h1["fields"], serde_json::json!(["state"]));
    assert_eq!(h1["deferred_by"], serde_json::json!(["probe"]));
    assert_eq!(h1["items"][0]["outcome"], "would_change");
    assert_eq!(h1["items"][1]["outcome"], "deferred");
    assert!(!dir.path().join("known").exists());
}

/// A checksum of every entry below `root`: its path, kind, mode, bytes and modification time.
fn tree_checksum(root: &Path) -> String {
    use sha1::Digest;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut entries = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let bytes =
                if meta.is_file() { std::fs::read(&path).expect("read") } else { Vec::new() };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            entries.push(format!(
                "{} {:o} {}.{} {}",
                path.display(),
                meta.permissions().mode(),
                meta.mtime(),
                meta.mtime_nsec(),
                sha1::Sha1::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>()
            ));
        }
    }
    entries.sort();
    sha1::Sha1::digest(entries.join("\n")).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_plan_of_the_converged_fleet_changes_nothing_and_defers_what_reads_commands() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fleet");
    let hosts = dir.path().join("hosts");
    std::fs::write(
        &hosts,
        "[fleet]\nh1 ansible_connection=local\nh2 ansible_connection=local\nh3 ansible_connection=local\n[fleet:vars]\nansible_python_interpreter=/usr/bin/python3\n",
    )
    .expect("hosts");
    let root = dir.path().join("fleet");
    let app_root = format!("app_root={}/{{{{ inventory_hostname }}}}", root.display());
    let tack = |verb: &str, extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
            .arg(verb)
            .arg("-i")
            .arg(&hosts)
            .args(["-e", &app_root, "site.yml"])
            .args(extra)
            .current_dir(&fleet)
            .env("ANSIBLE_CONFIG", "")
            .env("ANSIBLE_NOCOLOR", "1")
            .output()
            .expect("tack runs")
    };
    let converge = tack("playbook", &[]);
    assert_eq!(converge.status.code(), Some(0), "{}", String::from_utf8_lossy(&converge.stdout));
    let before = tree_checksum(&root);
    let out = tack("plan", &["--format", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(tree_checksum(&root), before, "the plan changed a host");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let tasks = doc["plays"][0]["tasks"].as_array().expect("tasks");
    // The playbook is not idempotent: seven of its tasks change a converged host on every
    // run (it rewrites app.conf and motd, then edits them; it makes f0, then removes it).
    // The plan may not call any of those matched: each would change, or depends on one that
    // would. And every command would run or is deferred.
    let apply = tack("playbook", &[]);
    let applied = String::from_utf8_lossy(&apply.stdout);
    let changed_by_apply: Vec<&str> = applied
        .split("TASK [")
        .skip(1)
        .filter(|block| block.contains("\nchanged: [h1]"))
        .filter_map(|block| block.split(']').next())
        .collect();
    assert!(changed_by_apply.len() >= 7, "{applied}");
    for task in tasks.iter().filter(|t| t["handler"] == false) {
        let name = task["name"].as_str().unwrap_or_default();
        let action = task["action"].as_str().unwrap_or_default();
        for host in ["h1", "h2", "h3"] {
            let outcome = task["hosts"][host]["outcome"].as_str().unwrap_or_default();
            if changed_by_apply.contains(&name) {
                assert!(
                    matches!(outcome, "would_change" | "deferred"),
                    "{name} changes every run but the plan says {outcome} on {host}: {task}"
                );
            } else if action.ends_with("command") || action.ends_with("shell") {
                assert!(matches!(outcome, "would_run" | "deferred"), "{name} on {host}: {task}");
            } else {
                assert!(
                    matches!(outcome, "matched" | "deferred" | "skipped"),
                    "{name} on {host}: {task}"
                );
            }
        }
    }
    let named = |name: &str| tasks.iter().find(|t| t["name"] == name).expect("task").clone();
    let producers = |name: &str| named(name)["hosts"]["h2"]["deferred_by"].clone();
    // What reads a command's output is deferred on it, never judged from a made-up value; what
    // edits a file an earlier task would rewrite is deferred on that task.
    assert_eq!(producers("shell pipeline"), serde_json::json!(["read a command"]));
    assert_eq!(producers("ensure a line"), serde_json::json!(["config from content"]));
    assert_eq!(producers("replace text"), serde_json::json!(["rendered template"]));
    assert_eq!(producers("remove scratch"), serde_json::json!(["many small files"]));
    assert_eq!(named("app root exists")["hosts"]["h3"]["outcome"], "matched");
    assert_eq!(named("ping")["hosts"]["h1"]["outcome"], "matched");
    assert_eq!(doc["stats"]["complete"], false);
}

#[test]
fn includes_inventory_changes_and_meta_reading_unknown_output_are_deferred() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("inc.yml"), "- file: path=@DIR@/included state=touch\n")
        .expect("tasks file");
    let tasks = dir.path().join("roles/r/tasks");
    std::fs::create_dir_all(&tasks).expect("role");
    std::fs::write(tasks.join("main.yml"), "- debug: msg=role\n").expect("role tasks");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: probe
      command: echo inc
      register: probe
    - name: include by name
      include_tasks: "{{ probe.stdout }}.yml"
    - name: include when
      include_tasks: inc.yml
      when: probe.stdout == 'inc'
    - name: role when
      include_role:
        name: r
      when: probe.rc == 0
    - name: add a host
      add_host:
        name: "{{ probe.stdout }}"
    - name: group
      group_by:
        key: "g_{{ probe.stdout }}"
    - name: end when
      meta: end_host
      when: probe.rc != 0
    - name: still here
      debug: msg=after
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for task in ["include by name", "include when", "role when", "add a host", "group", "end when"]
    {
        assert_eq!(line_for(&stdout, task), deferred_on("probe"), "{task}: {stdout}");
    }
    assert!(!stdout.contains("included:"), "{stdout}");
    assert!(line_for(&stdout, "still here").starts_with("matched: [h1]"), "{stdout}");
    assert!(stdout.contains("deferred=6 "), "{stdout}");
}

#[test]
fn a_handler_notified_by_a_listed_handler_is_listed_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: change
      file: path=@DIR@/made state=directory
      notify: first
  handlers:
    - name: first
      command: touch @DIR@/first-ran
      notify: second
    - name: second
      command: touch @DIR@/second-ran
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let handler_line = |name: &str| {
        let banner = format!("RUNNING HANDLER [{name}] ");
        let at = stdout.find(&banner).unwrap_or_else(|| panic!("no handler {name}: {stdout}"));
        stdout[at..].lines().nth(1).unwrap_or_default().to_string()
    };
    assert_eq!(handler_line("first"), "would run: [h1]");
    assert_eq!(handler_line("second"), deferred_on("first"));
    for never in ["made", "first-ran", "second-ran"] {
        assert!(!dir.path().join(never).exists(), "{never} was made");
    }
}

#[test]
fn a_template_file_reading_unknown_output_is_deferred_and_sends_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let templates = dir.path().join("templates");
    std::fs::create_dir(&templates).expect("templates");
    std::fs::write(templates.join("attr.j2"), "kernel {{ probe.stdout }}\n").expect("template");
    std::fs::write(templates.join("whole.j2"), "kernel {{ probe }}\n").expect("template");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: probe
      command: uname -r
      register: probe
    - name: an attribute of it
      template: src=attr.j2 dest=@DIR@/attr
    - name: the whole of it
      template: src=whole.j2 dest=@DIR@/whole
    - name: through a lookup
      debug: msg="{{ lookup('template', 'attr.j2') }}"
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for task in ["an attribute of it", "the whole of it", "through a lookup"] {
        assert_eq!(line_for(&stdout, task), deferred_on("probe"), "{task}: {stdout}");
    }
    assert!(!dir.path().join("attr").exists() && !dir.path().join("whole").exists());
}

#[test]
fn every_input_that_reads_unknown_output_defers_and_a_real_assignment_clears_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = r#"
- hosts: h1
  gather_facts: false
  tasks:
    - name: probe
      command: echo up
      register: probe
    - name: through an alias
      debug: msg="{{ alias }}"
      vars:
        alias: "{{ probe.stdout }}"
    - name: changed when
      file: path=@DIR@ state=directory
      changed_when: probe.rc == 0
    - name: failed when
      file: path=@DIR@ state=directory
      failed_when: probe.rc != 0
    - name: until
      file: path=@DIR@ state=directory
      until: probe.rc == 0
      retries: 1
      delay: 0
    - name: delegated
      debug: msg=hi
      delegate_to: "{{ probe.stdout }}"
    - name: downstream
      command: echo "{{ probe.stdout }}"
      register: downstream
    - name: reads downstream
      debug: var=downstream.stdout
    - name: a real assignment
      set_fact:
        probe: {stdout: known}
    - name: reads it
      debug: msg="{{ probe.stdout }}"
    - name: malformed
      debug: msg=hi
      when: probe.stdout ==
"#;
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let from = deferred_on;
    for task in ["through an alias", "changed when", "failed when", "until", "delegated"] {
        assert_eq!(line_for(&stdout, task), from("probe"), "{task}: {stdout}");
    }
    assert_eq!(line_for(&stdout, "downstream"), from("probe"), "{stdout}");
    assert_eq!(line_for(&stdout, "reads downstream"), from("downstream"), "{stdout}");
    assert_eq!(line_for(&stdout, "a real assignment"), "matched: [h1]", "{stdout}");
    assert!(line_for(&stdout, "reads it").starts_with("matched: [h1]"), "{stdout}");
    assert!(stdout.contains("\"msg\": \"known\""), "{stdout}");
    // A condition that does not parse is an error, unknown output or not.
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        line_for(&stdout, "malformed").starts_with("[ERROR]") || stdout.contains("fatal: [h1]")
    );
}

#[test]
fn an_unreachable_host_ends_the_plan_with_exit_4() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Nothing listens on port 1 of the loopback: the connection is refused at once.
    let inventory = "h1 ansible_host=127.0.0.1 ansible_port=1 ansible_user=nobody \
                     ansible_ssh_common_args='-o BatchMode=yes'\n";
    let playbook = "- hosts: h1\n  gather_facts: false\n  tasks:\n    - name: reach\n      ping:\n";
    let out = plan_hosts(dir.path(), inventory, playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("unreachable=1 "), "{stdout}");
}

/// A task the plan would only mark `would run` (it runs a command) but the run refuses on
/// the host (a become method tack does not run) fails in
/// the plan as in the run, with the run's message: the plan promises nothing the run cannot
/// do. Before, the plan said `would run: [h1]` and the run failed.
#[test]
fn a_plan_refuses_what_the_run_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let playbook = "- hosts: all\n  gather_facts: false\n  tasks:\n    - command: id\n      \
                    become: true\n      become_method: doas\n      ignore_errors: true\n    \
                    - command: id\n";
    let out = plan(dir.path(), playbook, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "tack does not support the become method 'doas' yet; it runs 'sudo' and 'su'"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("would_run=1") && stdout.contains("ignored=1"), "{stdout}");
}
