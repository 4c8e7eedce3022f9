//! `tack playbook --record DB_URL`: a run kept in the run store, read back through the store
//! as the server reads it. The seed 000 example runs on three hosts, each its own loopback
//! sshd (so `~` is a different directory per host): each host's file holds its own name, the
//! stored plan shows the shared path as is and the per-host line as `<per-host>` (through
//! `lineinfile`: `copy`'s `content` is a no_log option, so it is masked instead), a task
//! with the same input everywhere keeps it with each host's own output on its own row, and a
//! vault value that differs between hosts is `********`, never in the database file.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::Sshd;
use serde_json::json;
use tack_server::Store;
use tack_server::store::RunStatus;
use tack_vault::{VaultSecret, VaultSecrets};

const PASSWORD: &str = "record-test-password";

fn tack(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(args)
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs")
}

fn vaulted(plain: &str) -> String {
    let secrets = VaultSecrets::new(vec![VaultSecret::new("default", PASSWORD.into())]);
    let envelope = secrets.encrypt(plain.as_bytes(), "default").expect("encrypt");
    let body: Vec<String> = envelope.lines().map(|l| format!("  {l}")).collect();
    format!("secret: !vault |\n{}\n", body.join("\n"))
}

const PLAYBOOK: &str = r#"- hosts: all
  gather_facts: false
  tasks:
    - name: write marker
      lineinfile:
        path: ~/demo-marker
        line: "{{ inventory_hostname }}"
        create: true
    - name: the same through copy
      copy:
        dest: ~/demo-copy
        content: "{{ inventory_hostname }}"
    - name: read marker
      shell: cat ~/demo-marker
    - name: a secret per host
      copy:
        dest: ~/secret
        content: "{{ secret }}"
"#;

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

#[test]
fn the_seed_example_is_recorded_marked_and_masked() {
    let dir = tempfile::tempdir().unwrap();
    let mut servers = Vec::new();
    let mut inventory = String::new();
    std::fs::create_dir(dir.path().join("host_vars")).unwrap();
    for i in 1..=3 {
        let (sshd, line) = Sshd::start(&dir.path().join(format!("sshd{i}")));
        servers.push(sshd);
        inventory.push_str(&line.replacen("s1 ", &format!("soul-{i} "), 1));
        let vars = vaulted(&format!("plain-secret-of-soul-{i}"));
        std::fs::write(dir.path().join(format!("host_vars/soul-{i}.yml")), vars).unwrap();
    }
    std::fs::write(dir.path().join("hosts"), inventory).unwrap();
    std::fs::write(dir.path().join("site.yml"), PLAYBOOK).unwrap();
    std::fs::write(dir.path().join("pw"), PASSWORD).unwrap();
    let db = dir.path().join("runs.db");
    let url = format!("sqlite://{}", db.display());
    let args = ["playbook", "-i", "hosts", "site.yml", "--vault-password-file", "pw"];
    let mut recorded_args = args.to_vec();
    recorded_args.extend(["--record", &url]);
    let out = tack(dir.path(), &recorded_args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let apply_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("tack: the run is recorded as "))
        .expect("the run's id")
        .to_string();
    for i in 1..=3 {
        let marker = dir.path().join(format!("sshd{i}/home/demo-marker"));
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), format!("soul-{i}\n"));
        std::fs::remove_file(marker).unwrap();
        std::fs::remove_file(dir.path().join(format!("sshd{i}/home/demo-copy"))).unwrap();
        std::fs::remove_file(dir.path().join(format!("sshd{i}/home/secret"))).unwrap();
    }
    // The transcript is the run's alone: the same run again, unrecorded, prints the same.
    let plain = tack(dir.path(), &args);
    assert_eq!(String::from_utf8_lossy(&plain.stdout), String::from_utf8_lossy(&out.stdout));

    let (run, tasks, events) = block_on(async {
        let store = Store::open(&url).await.unwrap();
        let run = store.run(&apply_id).await.unwrap().expect("the run is stored");
        (
            run,
            store.tasks(&apply_id, tack_server::store::HostWindow::all(), None).await.unwrap(),
            store.events(&apply_id, 0).await.unwrap(),
        )
    });
    assert_eq!(run.status, RunStatus::Success);
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(run.mode, "apply");
    assert_eq!(run.playbook, "site.yml");
    let recap = run.recap.expect("the recap");
    for i in 1..=3 {
        assert_eq!(recap[format!("soul-{i}")]["failed"], json!(0), "{recap}");
    }

    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["write marker", "the same through copy", "read marker", "a secret per host"]
    );
    let write = &tasks[0];
    assert_eq!(write.module, "lineinfile");
    assert_eq!(
        write.params,
        Some(json!({"path": "~/demo-marker", "line": "<per-host>", "create": true}))
    );
    assert_eq!(write.params_shared, Some(false));
    // copy's `content` is a no_log option of the module: the mask outranks the marker.
    let copied = &tasks[1];
    assert_eq!(copied.params, Some(json!({"dest": "~/demo-copy", "content": "********"})));
    let read = &tasks[2];
    assert_eq!(read.params, Some(json!({"_raw_params": "cat ~/demo-marker"})));
    assert_eq!(read.params_shared, Some(true));
    let mut rows: Vec<(String, Option<String>, Option<i64>)> =
        read.hosts.iter().map(|h| (h.host.clone(), h.stdout.clone(), h.exit_code)).collect();
    rows.sort();
    let want: Vec<_> =
        (1..=3).map(|i| (format!("soul-{i}"), Some(format!("soul-{i}")), Some(0))).collect();
    assert_eq!(rows, want);
    let secret = &tasks[3];
    assert_eq!(secret.params, Some(json!({"dest": "~/secret", "content": "********"})));
    assert!(secret.hosts.iter().all(|h| h.status == "changed"), "{:?}", secret.hosts);
    // Each host's own input is kept where the inputs differ (seed 000's planned feature), the
    // hosts whose input matched the first's included, secrets masked; none where they agree.
    for h in &write.hosts {
        let want = json!({"path": "~/demo-marker", "line": h.host, "create": true});
        assert_eq!(h.input.as_ref(), Some(&want), "{}", h.host);
    }
    for h in &secret.hosts {
        assert_eq!(h.input, Some(json!({"dest": "~/secret", "content": "********"})), "{}", h.host);
    }
    assert!(read.hosts.iter().all(|h| h.input.is_none()), "{:?}", read.hosts);

    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"play_start"));
    assert_eq!(kinds.last(), Some(&"recap"));
    assert_eq!(kinds.iter().filter(|k| **k == "task_result").count(), 12);

    // Nowhere in the store's files: not the database, not its write-ahead log.
    for file in std::fs::read_dir(dir.path()).unwrap() {
        let path = file.unwrap().path();
        if !path.file_name().unwrap().to_string_lossy().starts_with("runs.db") {
            continue;
        }
        // The last connection's close folds the log into the database and removes it.
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("plain-secret-of-soul"), "{} holds a secret", path.display());
    }
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&db).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_store_that_cannot_be_opened_stops_the_run_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").unwrap();
    std::fs::write(
        dir.path().join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - file: path=made state=touch\n",
    )
    .unwrap();
    // A directory where a file is.
    let under_a_file = format!("sqlite://{}/x.db", dir.path().join("hosts").display());
    for (url, wanted) in [
        ("mysql://db/runs", "is not a database URL tack opens"),
        (under_a_file.as_str(), "Unable to record the run in"),
    ] {
        let out = tack(dir.path(), &["playbook", "-i", "hosts", "site.yml", "--record", url]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{url}: {stderr}");
        assert!(stderr.contains(wanted), "{url}: wanted {wanted:?} in {stderr}");
        assert!(!dir.path().join("made").exists(), "{url}: the task ran");
    }
}

/// A command-line `--record` run whose process dies (SIGKILL: nothing of it runs after) is
/// marked `interrupted` by the next recording run that looks, as a server's runs are when the
/// server dies: the recording process says it is alive while it runs, and one of this machine
/// that no longer exists is gone. Before, the run stayed `running` for ever.
#[test]
fn a_killed_recording_run_is_marked_interrupted_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("runs.db").display());
    killed_recording_run(dir.path(), &url);
}

#[test]
fn a_killed_recording_run_on_postgres_is_marked_interrupted_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    killed_recording_run(dir.path(), &pg.url);
}

#[path = "../../tack-server/tests/support/postgres.rs"]
mod postgres;

fn killed_recording_run(dir: &Path, url: &str) {
    use std::os::unix::process::CommandExt;
    std::fs::write(dir.join("hosts"), "h1 ansible_connection=local\n").unwrap();
    std::fs::write(
        dir.join("slow.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - pause: seconds=60\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("quick.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=hi\n",
    )
    .unwrap();
    // Made (and migrated) before the run opens it, so the two never migrate at once.
    let store = block_on(Store::open(url)).unwrap();
    let mut slow = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "slow.yml", "--record", url])
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let running = loop {
        let runs = block_on(store.runs(None)).unwrap();
        if let Some(run) = runs.iter().find(|r| r.status == RunStatus::Running) {
            break run.apply_id.clone();
        }
        assert!(std::time::Instant::now() < deadline, "the slow run was never stored running");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // SAFETY: kill has no memory-safety preconditions; the group is the child's own.
    unsafe { libc::kill(-(slow.id() as i32), libc::SIGKILL) };
    slow.wait().unwrap();
    let still = block_on(store.run(&running)).unwrap().unwrap();
    assert_eq!(still.status, RunStatus::Running, "nothing of the killed process marked it");

    let out = tack(dir, &["playbook", "-i", "hosts", "quick.yml", "--record", url]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = block_on(store.run(&running)).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted, "{run:?}");
    assert!(run.error.as_deref().is_some_and(|e| e.contains("stopped before the run ended")));
    let runs = block_on(store.runs(None)).unwrap();
    assert_eq!(runs.iter().filter(|r| r.status == RunStatus::Success).count(), 1, "{runs:?}");
}

/// A recorded run keeps what it printed: the stored transcript is its stdout, line for line.
#[test]
fn a_recorded_run_keeps_its_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("runs.db").display());
    recorded_transcript(dir.path(), &url);
}

#[test]
fn a_recorded_run_keeps_its_transcript_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    recorded_transcript(dir.path(), &pg.url);
}

fn recorded_transcript(dir: &Path, url: &str) {
    std::fs::write(dir.join("hosts"), "h1 ansible_connection=local\nh2 ansible_connection=local\n")
        .unwrap();
    std::fs::write(
        dir.join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=\"hello {{ inventory_hostname }}\"\n    \
         - command: 'false'\n      ignore_errors: true\n",
    )
    .unwrap();
    let out = tack(dir, &["playbook", "-i", "hosts", "site.yml", "-f", "1", "--record", url]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let store = block_on(Store::open(url)).unwrap();
    let id = block_on(store.runs(None)).unwrap()[0].apply_id.clone();
    let lines = block_on(store.transcript(&id, 0)).unwrap();
    let stored: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    assert_eq!(stored, stdout);
    assert!(stored.contains("\"msg\": \"hello h2\""), "{stored}");
    let numbers: Vec<i64> = lines.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, (1..=lines.len() as i64).collect::<Vec<_>>());
}
