//! Secrets canaries (issue 24): each source of a secret carries a canary of its own (39 of
//! them, over 40 ways in: `docs/reliability.md` lists them), and each stored or served view
//! of the run is searched for every canary and the forms a playbook derives from it (upper
//! case, reversed, base64, a slice, one line of several).
//! None may appear; output that holds no secret must come through whole (masking must not
//! mangle it). The transcript on the terminal is ansible's and shows the secrets, as
//! ansible's does: it is checked to hold them, proving the canaries really flowed.
//!
//! Views: the `--events` file, the run store's files, the API's tasks, events and transcript
//! (what the run printed), the run page, and the server's log. The run goes once from the command line (`--events`,
//! `--record`, extra vars from a vaulted file) and once through `tack serve`.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use serde_json::json;
use tack_vault::{VaultSecret, VaultSecrets};

#[path = "common/procs.rs"]
mod procs;
#[path = "common/server.rs"]
mod server;
use server::*;

const PASSWORD: &str = "canary-test-password";

const INLINE: &str = "cnry-inline-0a1b2c";
const GROUP_VARS: &str = "cnry-groupvars-5b1e9f";
const HOST_VARS: &str = "cnry-hostvars-8c2d7a";
const HOST_INLINE: &str = "cnry-hostinline-4d5e6f";
const VARS_FILES: &str = "cnry-varsfiles-3e4f6b";
const INCLUDE_VARS: &str = "cnry-includevars-9a8b1c";
const FILE_LOOKUP: &str = "cnry-filelookup-7d6c5e";
const UNVAULT: &str = "cnry-unvault-2b3c4d";
const COPIED: &str = "cnry-copied-4e5f6a";
const TEMPLATED: &str = "cnry-template-5f6e7d";
const ROLE_VARS: &str = "cnry-rolevars-1c2d3e";
const EXTRA_VARS: &str = "cnry-extravars-6f7a8b";
const LINE_ONE: &str = "cnry-line-one-1a2b";
const LINE_TWO: &str = "cnry-line-two-3c4d";
const GROUP_INLINE: &str = "cnry-groupinline-7a1b2c";
const ROLE_DEFAULTS: &str = "cnry-roledefaults-3d4e5f";
const ROLE_PARAM: &str = "cnry-roleparam-6a7b8c";
const BLOCK_VARS: &str = "cnry-blockvars-9d8e7f";
const TASK_VARS: &str = "cnry-taskvars-1f2e3d";
const CMD_ARG: &str = "cnry-cmdarg-4a5b6c";
const DIFF_CONTENT: &str = "cnry-diffcontent-2c3d4e";
const LINEINFILE: &str = "cnry-lineinfile-5e6f7a";
const ASSERT_MSG: &str = "cnry-assertmsg-8b9c0d";
const STATS: &str = "cnry-stats-1e2f3a";
const ADD_HOST: &str = "cnry-addhost-4b5c6d";
const LOOP_A: &str = "cnry-loop-a-7e8f9a";
const LOOP_B: &str = "cnry-loop-b-0b1c2d";
const HANDLER: &str = "cnry-handler-3e4f5a";
const PLAY_NAME: &str = "cnry-playname-6b7c8d";
const YAML_FORM: &str = "cnry-yamlform-9e0f1a";
const PLAY_ENV: &str = "cnry-playenv-2b3c4e";
const SCRIPT_ARG: &str = "cnry-scriptarg-5d6e7f";
const ASYNC: &str = "cnry-async-8a9b0c";
const DICT_LEAF: &str = "cnry-dictleaf-1d2e3f";
const FAIL_IGNORED: &str = "cnry-failignored-4a5b6d";
const LOOKUP_TEMPLATE: &str = "cnry-lookuptemplate-7c8d9e";
const INCLUDE_TASKS_VARS: &str = "cnry-includetasks-0f1a2b";
const DELEGATED: &str = "cnry-delegated-3c4d5f";
const ACTION_PLUGIN: &str = "cnry-actionplugin-6e7f8a";

const ALL: &[&str] = &[
    INLINE,
    GROUP_VARS,
    HOST_VARS,
    HOST_INLINE,
    VARS_FILES,
    INCLUDE_VARS,
    FILE_LOOKUP,
    UNVAULT,
    COPIED,
    TEMPLATED,
    ROLE_VARS,
    EXTRA_VARS,
    LINE_ONE,
    LINE_TWO,
    GROUP_INLINE,
    ROLE_DEFAULTS,
    ROLE_PARAM,
    BLOCK_VARS,
    TASK_VARS,
    CMD_ARG,
    DIFF_CONTENT,
    LINEINFILE,
    ASSERT_MSG,
    STATS,
    ADD_HOST,
    LOOP_A,
    LOOP_B,
    HANDLER,
    PLAY_NAME,
    YAML_FORM,
    PLAY_ENV,
    SCRIPT_ARG,
    ASYNC,
    DICT_LEAF,
    FAIL_IGNORED,
    LOOKUP_TEMPLATE,
    INCLUDE_TASKS_VARS,
    DELEGATED,
    ACTION_PLUGIN,
];

fn secrets() -> VaultSecrets {
    VaultSecrets::new(vec![VaultSecret::new("default", PASSWORD.into())])
}

fn encrypt(plain: &str) -> String {
    secrets().encrypt(plain.as_bytes(), "default").unwrap()
}

/// `plain` as an inline `!vault` value indented by `indent`.
fn inline(plain: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let body: Vec<String> = encrypt(plain).lines().map(|l| format!("{pad}{l}")).collect();
    format!("!vault |\n{}", body.join("\n"))
}

/// Every form of every canary that must not appear in a stored or served view.
fn forbidden() -> Vec<String> {
    let mut out = Vec::new();
    for secret in ALL {
        out.push(secret.to_string());
        out.push(secret.to_uppercase());
        out.push(secret.chars().rev().collect());
        out.push(base64::engine::general_purpose::STANDARD.encode(secret));
        out.push(base64::engine::general_purpose::STANDARD.encode(format!("{secret}\n")));
    }
    // The slice the playbook takes.
    out.push(VARS_FILES[3..15].to_string());
    out
}

const PLAYBOOK: &str = r#"- hosts: all
  gather_facts: false
  vars_files: [vaulted_vars.yml, more_vars.yml]
  vars:
    inline_secret: INLINE_VAULT
    creds:
      user: bob
      pass: DICT_LEAF_VAULT
  roles: [r]
  handlers:
    - name: h1
      debug: msg="handler {{ hd_secret }}"
  tasks:
    - include_vars: included.yml
    - debug: msg="group {{ gv_secret }}"
    - debug: var=hv_secret
    - debug: msg="{{ vf_secret }}"
    - debug: msg="{{ iv_secret }}"
    - debug: msg="{{ inline_secret }}"
    - debug: msg="{{ hv_inline }}"
    - debug: msg="{{ lookup('file', 'secret.txt') }}"
    - debug: msg="{{ lookup('unvault', 'secret2.txt') }}"
    - copy: {src: payload.txt, dest: "{{ playbook_dir }}/out/payload.txt"}
    - command: cat {{ playbook_dir }}/out/payload.txt
    - slurp: {src: "{{ playbook_dir }}/out/payload.txt"}
      register: slurped
    - debug: msg="{{ slurped.content }}"
    - debug: msg="{{ slurped.content | b64decode }}"
    - template: {src: secret.j2, dest: "{{ playbook_dir }}/out/t.txt"}
    - command: cat {{ playbook_dir }}/out/t.txt
      register: catted
    - debug: msg="{{ catted.stdout }}"
    - debug: msg="{{ lookup('file', playbook_dir + '/out/t.txt') }}"
    - set_fact:
        up: "{{ vf_secret | upper }}"
        b64: "{{ vf_secret | b64encode }}"
        rev: "{{ vf_secret | reverse }}"
        part: "{{ vf_secret[3:15] }}"
        line2: "{{ multi.split('\n')[1] }}"
    - debug: msg="{{ up }} {{ b64 }} {{ rev }} {{ part }} {{ line2 }}"
    - name: "derived in a name {{ up }}"
      debug: msg=hi
    - shell: echo "$S" | rev
      environment: {S: "{{ gv_secret }}"}
      register: envout
    - debug: msg="{{ envout.stdout }}"
    - name: "named {{ hv_secret }}"
      debug: msg=hi
    - debug: msg="{{ item }}"
      loop: "{{ multi.splitlines() }}"
    - debug: msg=labelled
      loop: [1]
      loop_control: {label: "{{ iv_secret }}"}
    - debug: {msg: "{{ {'k': iv_secret} | to_json }}"}
    - debug: msg="{{ hostvars[inventory_hostname].gv_secret }}"
    - debug: msg="{{ lookup('vars', 'hv_secret') }}"
    - block:
        - fail: msg="failing with {{ vf_secret | upper }}"
      rescue:
        - debug: msg="{{ ansible_failed_result.msg }}"
    - debug: msg="{{ ev_secret }}"
      when: ev_secret is defined
    - debug: msg="{{ short }}"
    - name: plain output stays whole
      debug: msg="absolutely hello-world-plain"
    - debug: msg="{{ gi_secret }}"
    - include_role: {name: p}
      vars: {param: "{{ rp_secret }}"}
    - block:
        - debug: msg="{{ bv_secret }}"
      vars:
        bv_secret: BLOCK_VAULT
    - debug: msg="{{ tv_secret }}"
      vars:
        tv_secret: TASK_VAULT
    - command: echo {{ ca_secret }}
      register: ca
    - debug: var=ca
    - copy: {content: "{{ dc_secret }}\n", dest: "{{ playbook_dir }}/out/dc.txt"}
      diff: true
    - lineinfile: {path: "{{ playbook_dir }}/out/li.txt", line: "{{ li_secret }}", create: true}
      diff: true
    - block:
        - assert: {that: [false], fail_msg: "bad {{ am_secret }}"}
      rescue:
        - debug: msg="{{ ansible_failed_result.msg }}"
    - set_stats: {data: {st: "{{ st_secret }}"}}
    - debug: msg="{{ st_secret }}"
    - add_host: {name: extra_host, ah_var: "{{ ah_secret }}"}
    - debug: msg="{{ hostvars['extra_host'].ah_var }}"
    - debug: msg="{{ item }}"
      loop: "{{ loop_secrets }}"
    - command: /bin/true
      notify: h1
    - debug:
        msg: "{{ {'k': ym_secret} | to_nice_yaml }}"
    - script: s.sh {{ sa_secret }}
      register: sa
    - debug: var=sa.stdout
    - shell: echo {{ as_secret }}
      async: 10
      poll: 1
      register: asy
    - debug: var=asy
    - debug: var=creds
    - fail: msg="ignored {{ fi_secret }}"
      ignore_errors: true
    - debug: msg="{{ lookup('template', 'lt.j2') }}"
    - include_tasks: inc.yml
      vars: {itv: "{{ it_secret }}"}
    - debug: msg="{{ dl_secret }}"
      delegate_to: localhost
    - leak: {given: "{{ ap_secret }}"}
      register: leaked
    - debug: var=leaked

- name: "second play {{ pn_secret }}"
  hosts: grp
  gather_facts: false
  vars:
    pn_secret: PLAY_NAME_VAULT
    pe_secret: PLAY_ENV_VAULT
  environment: {PE: "{{ pe_secret }}"}
  tasks:
    - shell: echo "$PE"
      register: pe
    - debug: var=pe.stdout
"#;

/// The project: every file that carries a canary is vaulted (whole or inline).
fn project(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("project");
    let write = |name: &str, text: &str| {
        let path = p.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "hosts",
        "[grp]\ncanary ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n\
         [all:vars]\nansible_python_interpreter=/usr/bin/python3\n",
    );
    write("group_vars/grp.yml", &format!("gi_secret: {}\n", inline(GROUP_INLINE, 2)));
    write("pw", PASSWORD);
    write("group_vars/all/vault.yml", &encrypt(&format!("gv_secret: {GROUP_VARS}\n")));
    write("host_vars/canary/vault.yml", &encrypt(&format!("hv_secret: {HOST_VARS}\n")));
    write("host_vars/canary/plain.yml", &format!("hv_inline: {}\n", inline(HOST_INLINE, 2)));
    write(
        "vaulted_vars.yml",
        &encrypt(&format!(
            "vf_secret: {VARS_FILES}\nshort: ab\nmulti: \"{LINE_ONE}\\n{LINE_TWO}\\n\"\n"
        )),
    );
    write("included.yml", &encrypt(&format!("iv_secret: {INCLUDE_VARS}\n")));
    write("secret.txt", &encrypt(&format!("{FILE_LOOKUP}\n")));
    write("secret2.txt", &encrypt(&format!("{UNVAULT}\n")));
    write("payload.txt", &encrypt(&format!("{COPIED}\n")));
    write("secret.j2", &encrypt(&format!("{TEMPLATED}\n")));
    write("extra.yml", &encrypt(&format!("ev_secret: {EXTRA_VARS}\n")));
    write("roles/r/vars/main.yml", &encrypt(&format!("rv_secret: {ROLE_VARS}\n")));
    write(
        "roles/r/tasks/main.yml",
        "- debug: msg=\"role {{ rv_secret }}\"\n- debug: msg=\"default {{ rd_secret }}\"\n",
    );
    write("roles/r/defaults/main.yml", &encrypt(&format!("rd_secret: {ROLE_DEFAULTS}\n")));
    write("roles/p/tasks/main.yml", "- debug: msg=\"param {{ param }}\"\n");
    let more = [
        ("rp_secret", ROLE_PARAM),
        ("ca_secret", CMD_ARG),
        ("dc_secret", DIFF_CONTENT),
        ("li_secret", LINEINFILE),
        ("am_secret", ASSERT_MSG),
        ("st_secret", STATS),
        ("ah_secret", ADD_HOST),
        ("hd_secret", HANDLER),
        ("ym_secret", YAML_FORM),
        ("sa_secret", SCRIPT_ARG),
        ("as_secret", ASYNC),
        ("fi_secret", FAIL_IGNORED),
        ("it_secret", INCLUDE_TASKS_VARS),
        ("dl_secret", DELEGATED),
        ("ap_secret", ACTION_PLUGIN),
    ];
    let mut more: String = more.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
    more.push_str(&format!("loop_secrets: [{LOOP_A}, {LOOP_B}]\n"));
    write("more_vars.yml", &encrypt(&more));
    write("lt.j2", &encrypt(&format!("{LOOKUP_TEMPLATE}\n")));
    write("inc.yml", "- debug: msg=\"included {{ itv }}\"\n");
    write("s.sh", "#!/bin/sh\necho \"$1\"\n");
    // An action plugin written in Python (run through ansible-core, which the setting names)
    // that returns a secret it was given and one it read from the task's variables itself.
    write("ansible.cfg", "[defaults]\ninterpreter_python = /opt/ansible-ref/bin/python\n");
    write(
        "action_plugins/leak.py",
        "from ansible.plugins.action import ActionBase\n\
         class ActionModule(ActionBase):\n    def run(self, tmp=None, task_vars=None):\n        \
         return {'given': self._task.args['given'], 'read': task_vars['ap_secret']}\n",
    );
    let site = PLAYBOOK
        .replace("INLINE_VAULT", &inline(INLINE, 6))
        .replace("DICT_LEAF_VAULT", &inline(DICT_LEAF, 8))
        .replace("BLOCK_VAULT", &inline(BLOCK_VARS, 10))
        .replace("TASK_VAULT", &inline(TASK_VARS, 10))
        .replace("PLAY_NAME_VAULT", &inline(PLAY_NAME, 6))
        .replace("PLAY_ENV_VAULT", &inline(PLAY_ENV, 6));
    write("site.yml", &site);
    std::fs::create_dir_all(p.join("out")).unwrap();
    p
}

/// Panics naming every forbidden form found in `text`, which is `view`.
fn assert_clean(view: &str, text: &str) {
    let found: Vec<String> =
        forbidden().into_iter().filter(|f| text.contains(f.as_str())).collect();
    assert!(found.is_empty(), "{view} holds {found:?}:\n{text}");
}

/// The run store's files, as text.
fn store_files(dir: &Path) -> String {
    let mut text = String::new();
    for file in std::fs::read_dir(dir).unwrap() {
        let path = file.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("runs.db")
            && let Ok(bytes) = std::fs::read(&path)
        {
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    text
}

#[test]
fn no_canary_reaches_a_stored_or_served_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let store = || store_files(dir.path());
    canaries(dir.path(), &db, &store);
}

#[test]
fn no_canary_reaches_a_stored_or_served_view_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    // Every row as text (a value PostgreSQL compresses would hide from a search of its
    // files), and the cluster's files themselves (tables, write-ahead log).
    let store = || {
        let dump = Command::new("sh")
            .arg("-c")
            .arg("PATH=$PATH:$(ls -d /usr/lib/postgresql/*/bin | head -1) pg_dump \"$1\"")
            .arg("sh")
            .arg(&pg.url)
            .output()
            .unwrap();
        assert!(dump.status.success(), "pg_dump: {}", String::from_utf8_lossy(&dump.stderr));
        let mut text = String::from_utf8_lossy(&dump.stdout).into_owned();
        assert!(text.contains("COPY"), "the dump holds the store's rows:\n{text}");
        files_under(&dir.path().join("pg"), &mut text);
        text
    };
    canaries(dir.path(), &pg.url, &store);
}

#[path = "../../tack-server/tests/support/postgres.rs"]
mod postgres;

/// Every file under `dir`, as lossy text.
fn files_under(dir: &Path, text: &mut String) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, text);
        } else if let Ok(bytes) = std::fs::read(&path) {
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
}

/// One run from the command line and one through the server, on the store at `db`; `store`
/// reads what the store holds, as text.
fn canaries(dir: &Path, db: &str, store: &dyn Fn() -> String) {
    let project = project(dir);

    // From the command line: the events file and the store.
    let events = dir.join("events.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml", "--vault-password-file", "pw"])
        .args(["-e", "@extra.yml", "--events", events.to_str().unwrap(), "--record", db])
        .current_dir(&project)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .unwrap();
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{transcript}{}", String::from_utf8_lossy(&out.stderr));
    for secret in ALL {
        assert!(transcript.contains(secret), "the canary {secret} never flowed:\n{transcript}");
    }
    let events = std::fs::read_to_string(&events).unwrap();
    assert_clean("the events file", &events);
    assert!(events.contains("\"msg\": \"absolutely hello-world-plain\""), "{events}");
    // The 2-character secret is masked where a whole text is it, never inside a word.
    assert!(!events.contains("\"msg\": \"ab\""), "{events}");

    // Through the server: its API, its page, its log, and the store both runs wrote.
    let s = start_server(db, dir, "1", true);
    let a = s.addr.as_str();
    let spec = json!({
        "name": "canary", "project_dir": project, "playbook": "site.yml", "inventory": "hosts",
        "vault_password_file": "pw",
    });
    let r = request(a, "POST", "/v1/incarnations", Some(&s.admin), Some(&spec.to_string()), &[]);
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let r = request(a, "POST", "/v1/incarnations/canary/runs", Some(&s.admin), None, &[]);
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["apply_id"].as_str().unwrap().to_string();
    let run = wait_final(&s, &s.admin, "canary", &id);
    assert_eq!(run["status"], "success", "{run}");
    let base = format!("/v1/incarnations/canary/runs/{id}");
    for path in [
        base.clone(),
        format!("{base}/tasks"),
        format!("{base}/events"),
        format!("{base}/transcript"),
        "/v1/runs".into(),
        "/v1/drift".into(),
        "/v1/incarnations/canary/drift".into(),
    ] {
        let r = request(a, "GET", &path, Some(&s.admin), None, &[]);
        assert_eq!(r.status, 200, "{path}");
        let body = String::from_utf8_lossy(&dechunk_if(&r)).into_owned();
        assert_clean(&path, &body);
    }
    // The stored transcript is what the run printed, masked: whole where no secret is, and
    // the 2-character secret masked where it is printed as a value, not inside a word.
    let printed = request(a, "GET", &format!("{base}/transcript"), Some(&s.admin), None, &[]);
    let printed = String::from_utf8_lossy(&printed.body).into_owned();
    assert!(printed.contains("PLAY RECAP"), "{printed}");
    assert!(printed.contains("\"msg\": \"absolutely hello-world-plain\""), "{printed}");
    assert!(!printed.contains("\"msg\": \"ab\""), "{printed}");
    let tasks = request(a, "GET", &format!("{base}/tasks"), Some(&s.admin), None, &[]);
    assert!(
        String::from_utf8_lossy(&tasks.body).contains("absolutely hello-world-plain"),
        "the plain output came through whole"
    );
    let cookie = sign_in(a, &s.admin);
    let task_count = tasks.json()["tasks"].as_array().unwrap().len();
    for task in 1..=task_count {
        let page = request(
            a,
            "GET",
            &format!("/ui/runs/{id}?task={task}"),
            None,
            None,
            &[("Cookie", &cookie)],
        );
        assert_eq!(page.status, 200);
        assert_clean(&format!("the run page at task {task}"), &String::from_utf8_lossy(&page.body));
    }
    // The pages and routes operators work from: the incarnation's, the audit log's, the index.
    for path in ["/ui/", "/ui/incarnations/canary", "/ui/audit", &format!("/ui/runs/{id}")] {
        let page = request(a, "GET", path, None, None, &[("Cookie", &cookie)]);
        assert_eq!(page.status, 200, "{path}");
        assert_clean(path, &String::from_utf8_lossy(&page.body));
    }
    let audit = request(a, "GET", "/v1/audit", Some(&s.admin), None, &[]);
    assert_eq!(audit.status, 200);
    assert!(String::from_utf8_lossy(&audit.body).contains("run.start"));
    assert_clean("/v1/audit", &String::from_utf8_lossy(&audit.body));
    assert_clean("the server's log", &s.log.lock().unwrap());
    drop(s);
    assert_clean("the run store", &store());
}

/// An events route answers as a stream: its body without the chunk framing.
fn dechunk_if(r: &Reply) -> Vec<u8> {
    if r.head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(&r.body)
    } else {
        r.body.clone()
    }
}
