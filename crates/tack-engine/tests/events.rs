//! `--events`: the exact JSON lines the events callback writes for small runs, with their
//! per-host rendered inputs (seed 000: shared or `<per-host>`, secrets masked, the mask over
//! the marker), results and recap. Durations vary and are written `0` before comparing.

use std::path::Path;
use std::sync::Arc;

use tack_engine::{RunContext, RunFacts};
use tack_inventory::{Inventory, InventoryOptions};
use tack_loader::DataLoader;
use tack_playbook::tags::TagFilter;
use tack_playbook::{LoadOptions, Loader};
use tack_report::callback::default::DefaultCallback;
use tack_report::callback::events::EventsCallback;
use tack_template::Templar;
use tack_vault::{VaultSecret, VaultSecrets};
use tack_yaml::Mapping;

const PASSWORD: &[u8] = b"events-test-password";
const SECRET: &str = "s3cr3t-Value";

fn secrets() -> VaultSecrets {
    VaultSecrets::new(vec![VaultSecret::new("default", PASSWORD.to_vec())])
}

/// `SECRET` as an inline `!vault` value, indented for a play's `vars:`.
fn vaulted() -> String {
    let envelope = secrets().encrypt(SECRET.as_bytes(), "default").unwrap();
    let body: Vec<String> = envelope.lines().map(|l| format!("      {l}")).collect();
    format!("!vault |\n{}", body.join("\n"))
}

const INVENTORY: &str = "\
[web]
beta ansible_connection=local ansible_python_interpreter=/usr/bin/python3 colour=blue
alpha ansible_connection=local ansible_python_interpreter=/usr/bin/python3 colour=red
";

/// Runs `playbook` against `INVENTORY` in a fresh directory; the events file's lines with
/// durations zeroed and the directory written `<DIR>`, and the transcript.
fn run(playbook: &str) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("inv"), INVENTORY).unwrap();
    std::fs::write(root.join("site.yml"), playbook.replace("<DIR>", &root.to_string_lossy()))
        .unwrap();
    let loader = Arc::new(DataLoader::new(secrets()));
    let sources = vec![root.join("inv").to_string_lossy().into_owned()];
    let inventory = Inventory::load(&loader, &sources, InventoryOptions::default()).unwrap();
    let options = LoadOptions { invalid_task_attribute_failed: true, ..Default::default() };
    let files = Loader::new(&*loader, &options);
    let playbooks = vec![files.load_playbook(&root.join("site.yml")).unwrap()];
    let templar = Templar::with_loader(loader.clone());
    let extra_vars = Mapping::new();
    let tags = TagFilter::from_cli(&[], &[]);
    let ctx = RunContext {
        inventory: &inventory,
        loader: &loader,
        templar: &templar,
        extra_vars: &extra_vars,
        tags: &tags,
        tasks: &files,
        facts: RunFacts { forks: 1, ..Default::default() },
        start_at: None,
        force_handlers: false,
        links: &tack_links::Links::new(&tack_links::LocalOnly),
        pending: Default::default(),
        fact_cache: Default::default(),
    };
    let mut callback = EventsCallback::new(Vec::new(), DefaultCallback::new(Vec::new(), 79));
    tack_engine::run(&ctx, &playbooks, &mut callback).unwrap();
    let (events, inner) = callback.finish().unwrap();
    let transcript = String::from_utf8(inner.into_inner()).unwrap();
    let text = String::from_utf8(events).unwrap();
    let lines = text.lines().map(|l| normalise(l, root)).collect();
    (lines, transcript)
}

/// `"duration": <seconds>` written as `0` (after checking it is a number), the run's
/// directory as `<DIR>`.
fn normalise(line: &str, dir: &Path) -> String {
    let line = line.replace(&*dir.to_string_lossy(), "<DIR>");
    let key = "\"duration\": ";
    let Some(at) = line.find(key) else { return line };
    let start = at + key.len();
    let end = start + line[start..].find(['}', ',']).unwrap();
    let number: f64 = line[start..end].parse().expect("duration is a number");
    assert!(number >= 0.0);
    format!("{}0{}", &line[..start], &line[end..])
}

#[test]
fn shared_and_per_host_inputs() {
    let (lines, _) = run("\
- hosts: web
  gather_facts: false
  tasks:
    - name: same everywhere
      command: echo hello
    - name: per host
      debug:
        msg: '{{ inventory_hostname }} likes {{ colour }}'
        verbosity: 0
");
    let expected = [
        r#"{"event": "play_start", "play": "web"}"#,
        r#"{"event": "task_start", "task": "same everywhere", "action": "command", "handler": false, "params": {"_raw_params": "echo hello"}, "params_shared": true, "hosts": ["alpha", "beta"]}"#,
        r#"{"event": "task_result", "host": "beta", "task": "same everywhere", "status": "changed", "changed": true, "ignored": false, "rc": 0, "stdout": "hello", "stderr": "", "msg": "", "duration": 0}"#,
        r#"{"event": "task_result", "host": "alpha", "task": "same everywhere", "status": "changed", "changed": true, "ignored": false, "rc": 0, "stdout": "hello", "stderr": "", "msg": "", "duration": 0}"#,
        r#"{"event": "task_start", "task": "per host", "action": "debug", "handler": false, "params": {"msg": "<per-host>", "verbosity": 0}, "params_shared": false, "hosts": ["alpha", "beta"], "params_per_host": {"alpha": {"msg": "alpha likes red", "verbosity": 0}, "beta": {"msg": "beta likes blue", "verbosity": 0}}}"#,
        r#"{"event": "task_result", "host": "beta", "task": "per host", "status": "ok", "changed": false, "ignored": false, "rc": null, "stdout": null, "stderr": null, "msg": "beta likes blue", "duration": 0}"#,
        r#"{"event": "task_result", "host": "alpha", "task": "per host", "status": "ok", "changed": false, "ignored": false, "rc": null, "stdout": null, "stderr": null, "msg": "alpha likes red", "duration": 0}"#,
        r#"{"event": "recap", "hosts": {"alpha": {"ok": 2, "changed": 1, "unreachable": 0, "failed": 0, "skipped": 0, "rescued": 0, "ignored": 0}, "beta": {"ok": 2, "changed": 1, "unreachable": 0, "failed": 0, "skipped": 0, "rescued": 0, "ignored": 0}}}"#,
    ];
    assert_eq!(lines, expected);
}

#[test]
fn secrets_are_masked_and_the_mask_outranks_the_marker() {
    let playbook = format!(
        "\
- hosts: web
  gather_facts: false
  vars:
    secret: {}
  tasks:
    - name: vaulted and per host
      debug:
        msg: '{{{{ secret }}}} for {{{{ inventory_hostname }}}}'
    - name: vaulted output
      command: echo {{{{ secret }}}}
    - name: a module's no_log option
      copy:
        content: 'plain but no_log'
        dest: '<DIR>/{{{{ inventory_hostname }}}}.txt'
",
        vaulted()
    );
    let (lines, transcript) = run(&playbook);
    let expected = [
        r#"{"event": "play_start", "play": "web"}"#,
        r#"{"event": "task_start", "task": "vaulted and per host", "action": "debug", "handler": false, "params": {"msg": "********"}, "params_shared": false, "hosts": ["alpha", "beta"], "params_per_host": {"alpha": {"msg": "********"}, "beta": {"msg": "********"}}}"#,
        r#"{"event": "task_result", "host": "beta", "task": "vaulted and per host", "status": "ok", "changed": false, "ignored": false, "rc": null, "stdout": null, "stderr": null, "msg": "********", "duration": 0}"#,
        r#"{"event": "task_result", "host": "alpha", "task": "vaulted and per host", "status": "ok", "changed": false, "ignored": false, "rc": null, "stdout": null, "stderr": null, "msg": "********", "duration": 0}"#,
        r#"{"event": "task_start", "task": "vaulted output", "action": "command", "handler": false, "params": {"_raw_params": "********"}, "params_shared": true, "hosts": ["alpha", "beta"]}"#,
        r#"{"event": "task_result", "host": "beta", "task": "vaulted output", "status": "changed", "changed": true, "ignored": false, "rc": 0, "stdout": "********", "stderr": "********", "msg": "********", "duration": 0}"#,
        r#"{"event": "task_result", "host": "alpha", "task": "vaulted output", "status": "changed", "changed": true, "ignored": false, "rc": 0, "stdout": "********", "stderr": "********", "msg": "********", "duration": 0}"#,
        r#"{"event": "task_start", "task": "a module's no_log option", "action": "copy", "handler": false, "params": {"content": "********", "dest": "<per-host>"}, "params_shared": false, "hosts": ["alpha", "beta"], "params_per_host": {"alpha": {"content": "********", "dest": "<DIR>/alpha.txt"}, "beta": {"content": "********", "dest": "<DIR>/beta.txt"}}}"#,
    ];
    assert_eq!(lines[..expected.len()], expected);
    // The secret is in the transcript (ansible shows it too) but never in the events.
    assert!(transcript.contains(SECRET));
    assert!(lines.iter().all(|l| !l.contains(SECRET)), "{lines:#?}");
    assert!(lines.last().unwrap().starts_with(r#"{"event": "recap""#));
}

#[test]
fn secret_text_is_masked_wherever_it_lands() {
    // `debug: var=` reads the vault value inside the action, not through the arguments; the
    // plaintext still never reaches the file.
    let playbook = format!(
        "\
- hosts: alpha
  gather_facts: false
  vars:
    secret: {}
  tasks:
    - set_fact:
        copied: '{{{{ secret }}}}'
    - name: shown from a copy
      debug:
        msg: 'copy is {{{{ copied }}}}'
",
        vaulted()
    );
    let (lines, _) = run(&playbook);
    let shown = lines
        .iter()
        .find(|l| l.contains("\"task\": \"shown from a copy\"") && l.contains("task_result"))
        .unwrap();
    // `set_fact` keeps the copy a vault value (as ansible 2.21 does), so the render that
    // reads it is sealed whole, as one reading `secret` itself is.
    assert_eq!(
        shown,
        r#"{"event": "task_result", "host": "alpha", "task": "shown from a copy", "status": "ok", "changed": false, "ignored": false, "rc": null, "stdout": null, "stderr": null, "msg": "********", "duration": 0}"#
    );
    assert!(lines.iter().all(|l| !l.contains(SECRET)), "{lines:#?}");
}

#[test]
fn the_file_is_written_only_through_the_wrapped_callback() {
    let (_, transcript) = run("\
- hosts: web
  gather_facts: false
  tasks:
    - debug: msg=hi
");
    assert!(transcript.contains("TASK [debug]"));
    assert!(transcript.contains("PLAY RECAP"));
}

#[test]
fn each_host_input_is_rendered_once() {
    // Every render of the argument appends a line to a file and says how many there are: the
    // events' input and the run share one render per host (made for the input, hosts by
    // name), so alpha sees 1 and beta 2.
    let (lines, transcript) = run("\
- hosts: web
  gather_facts: false
  tasks:
    - name: counted
      debug:
        msg: \"{{ lookup('pipe', 'echo x >> <DIR>/count; wc -l < <DIR>/count') }}\"
");
    assert!(transcript.contains("\"msg\": \"1\""), "{transcript}");
    assert!(transcript.contains("\"msg\": \"2\""), "{transcript}");
    assert!(!transcript.contains("\"msg\": \"3\""), "{transcript}");
    assert!(lines[1].contains(r#""params": {"msg": "<per-host>"}"#), "{}", lines[1]);
    assert!(lines[2].contains(r#""host": "beta""#) && lines[2].contains(r#""msg": "2""#));
    assert!(lines[3].contains(r#""host": "alpha""#) && lines[3].contains(r#""msg": "1""#));
}

#[test]
fn a_host_renders_again_when_an_earlier_host_changed_what_it_read() {
    // beta runs first and sets `x`; alpha's input read beta's `x` through `hostvars` before
    // that, so its run renders again and sees the new value, as it does without `--events`.
    let (_, transcript) = run("\
- hosts: web
  gather_facts: false
  tasks:
    - set_fact:
        x: \"{{ (hostvars['beta'].x | default('first')) ~ '-' ~ inventory_hostname }}\"
    - debug: var=x
");
    assert!(transcript.contains("\"x\": \"first-beta\""), "{transcript}");
    assert!(transcript.contains("\"x\": \"first-beta-alpha\""), "{transcript}");
}
