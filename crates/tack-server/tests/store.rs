//! The run store against both of its databases: SQLite in a temporary file, and a real
//! PostgreSQL this test starts on loopback (`scripts/postgres-loopback.sh`) and stops.
//! Each behaviour is checked on both, through the same calls.

#[path = "support/postgres.rs"]
mod postgres;

use postgres::Postgres;
use serde_json::json;
use tack_server::Store;
use tack_server::ingest::Ingest;
use tack_server::store::{NewRun, RunStatus};

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

fn new_run() -> NewRun {
    NewRun {
        incarnation: None,
        mode: "apply".into(),
        playbook: "site.yml".into(),
        started_by: "tester@here".into(),
    }
}

const LINES: &[&str] = &[
    r#"{"event": "play_start", "play": "web"}"#,
    r#"{"event": "task_start", "task": "write marker", "action": "lineinfile", "handler": false, "params": {"path": "/tmp/demo-marker", "line": "<per-host>"}, "params_shared": false, "hosts": ["a", "b"]}"#,
    r#"{"event": "task_result", "host": "a", "task": "write marker", "status": "changed", "changed": true, "ignored": false, "rc": null, "stdout": null, "stderr": null, "msg": "line added", "duration": 0.25}"#,
    r#"{"event": "task_result", "host": "b", "task": "write marker", "status": "failed", "changed": false, "ignored": true, "rc": 1, "stdout": "", "stderr": "denied", "msg": ["a", "list"], "duration": 0.5}"#,
    r#"{"event": "task_start", "task": "hostname", "action": "command", "handler": true, "params": {"_raw_params": "hostname"}, "params_shared": true, "hosts": ["a", "b"]}"#,
    r#"{"event": "task_result", "host": "b", "task": "hostname", "status": "changed", "changed": true, "ignored": false, "rc": 0, "stdout": "b.example", "stderr": "", "msg": "", "duration": 0.1}"#,
    r#"{"event": "recap", "hosts": {"a": {"ok": 2, "failed": 0}, "b": {"ok": 1, "failed": 0}}}"#,
];

async fn check(url: &str) {
    let store = Store::open(url).await.unwrap();
    // Opening again migrates nothing twice.
    let store_again = Store::open(url).await.unwrap();
    let id = store.start_run(&new_run(), "ctl:1").await.unwrap();
    let mut ingest = Ingest::new(id.clone());
    for line in LINES {
        ingest.line(&store, line).await.unwrap();
    }
    // Bad lines are refused and change nothing.
    for bad in ["not json", r#"{"no": "event name"}"#] {
        assert!(ingest.line(&store, bad).await.is_err(), "{bad}");
    }
    assert_eq!(ingest.seq(), 7);

    let run = store_again.run(&id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.started_by, "tester@here");
    assert_eq!(run.recap, Some(json!({"a": {"ok": 2, "failed": 0}, "b": {"ok": 1, "failed": 0}})));

    // Only the attempt that holds the run may end it.
    assert!(!store.finish_run(&id, 2, RunStatus::Success, Some(0), None).await.unwrap());
    assert!(store.finish_run(&id, 1, RunStatus::Failed, Some(2), None).await.unwrap());
    let run = store.run(&id).await.unwrap().unwrap();
    assert_eq!((run.status, run.exit_code), (RunStatus::Failed, Some(2)));
    assert!(run.finished_at.is_some());

    let tasks = store.tasks(&id, tack_server::store::HostWindow::all(), None).await.unwrap();
    assert_eq!(tasks.len(), 2);
    let t = &tasks[0];
    assert_eq!((t.index, t.play.as_str(), t.module.as_str()), (1, "web", "lineinfile"));
    assert_eq!(t.params, Some(json!({"path": "/tmp/demo-marker", "line": "<per-host>"})));
    assert_eq!(t.params_shared, Some(false));
    let hosts: Vec<&str> = t.hosts.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(hosts, ["a", "b"]);
    let b = &t.hosts[1];
    assert_eq!((b.status.as_str(), b.changed, b.ignored), ("failed", false, true));
    assert_eq!(b.exit_code, Some(1));
    assert_eq!(b.stderr.as_deref(), Some("denied"));
    // A message that is not text keeps its JSON.
    assert_eq!(b.msg.as_deref(), Some(r#"["a","list"]"#));
    assert_eq!(b.duration, 0.5);
    assert!(tasks[1].handler);
    assert_eq!(tasks[1].hosts[0].stdout.as_deref(), Some("b.example"));
    assert_eq!(t.hosts_total, 2);
    assert_eq!(t.host_counts, [("changed".to_string(), 1), ("failed".to_string(), 1)].into());
    let windows = async |offset, limit, only| {
        let window = tack_server::store::HostWindow { offset, limit };
        store.tasks(&id, window, only).await.unwrap()
    };
    // A window of one task's hosts, and the counts whatever the window.
    let second = windows(1, 1, Some(1)).await;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(), ["b"]);
    assert_eq!(second[0].hosts_total, 2);
    let counts_only = windows(0, 0, None).await;
    assert!(counts_only.iter().all(|t| t.hosts.is_empty()));
    assert_eq!(counts_only[1].hosts_total, 1);

    let events = store.events(&id, 0).await.unwrap();
    assert_eq!(events.len(), 7);
    assert_eq!(events[1].kind, "task_start");
    assert_eq!(events[6].body, LINES[6]);
    let later = store.events(&id, 5).await.unwrap();
    assert_eq!(later.iter().map(|e| e.seq).collect::<Vec<_>>(), [6, 7]);

    let other = store.start_run(&new_run(), "ctl:2").await.unwrap();
    let all: Vec<String> =
        store.runs(None).await.unwrap().into_iter().map(|r| r.apply_id).collect();
    assert!(all.contains(&id) && all.contains(&other), "{all:?}");
    assert!(store.runs(Some("nothing-here")).await.unwrap().is_empty());
    assert!(store.run("no-such-run").await.unwrap().is_none());
}

#[test]
fn sqlite_keeps_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub/runs.db");
    block_on(check(&format!("sqlite://{}", db.display())));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&db).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn postgres_keeps_runs() {
    let dir = tempfile::tempdir().unwrap();
    let pg = Postgres::start(dir.path());
    block_on(check(&pg.url));
}

#[test]
fn urls_tack_does_not_open_are_refused_by_name() {
    let err = block_on(Store::open("mysql://db/x")).err().unwrap();
    assert!(err.to_string().contains("is not a database URL tack opens"), "{err}");
    // A port that is not one fails at once, before any connection is tried.
    let err = block_on(Store::open("postgres://tack:hunter2@127.0.0.1:99999/x")).err().unwrap();
    let text = err.to_string();
    assert!(text.contains("postgres://tack:********@127.0.0.1:99999/x"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

/// Schedules with the clock in the test's hands and no runner: a run a schedule queued that
/// has not ended holds back every schedule of its incarnation (their marks stay, so the next
/// look after it ends queues one run, not one per occurrence missed).
async fn schedules_do_not_pile_up(url: &str, project: &std::path::Path) {
    use tack_server::incarnations::Incarnation;
    use tack_server::schedule::tick;
    let store = Store::open(url).await.unwrap();
    let spec: Incarnation = serde_json::from_value(json!({
        "name": "often", "project_dir": project, "playbook": "site.yml",
        "schedules": [{"cron": "* * * * *"}, {"cron": "*/5 * * * *", "mode": "check"}]
    }))
    .unwrap();
    assert!(store.create_incarnation(&spec).await.unwrap());
    let minute = 60_000;
    let t0 = 1_924_992_000_000; // 2031-01-01T00:00:00Z
    assert!(tick(&store, t0).await.unwrap().is_empty(), "first sighting");
    let first = tick(&store, t0 + minute).await.unwrap();
    assert_eq!(first.len(), 1, "one run of an incarnation at a time: {first:?}");
    // Queued, never claimed: ten minutes pass and nothing more is queued.
    for m in 2..=10 {
        assert!(tick(&store, t0 + m * minute).await.unwrap().is_empty(), "minute {m}");
    }
    let claimed = store.claim("ctl:1").await.unwrap().unwrap();
    assert_eq!(claimed.apply_id, first[0].apply_id);
    assert!(tick(&store, t0 + 11 * minute).await.unwrap().is_empty(), "still running");
    assert!(
        store
            .finish_run(&claimed.apply_id, claimed.attempt, RunStatus::Success, Some(0), None)
            .await
            .unwrap()
    );
    let next = tick(&store, t0 + 12 * minute).await.unwrap();
    assert_eq!(next.len(), 1, "{next:?}");
    let runs = store.runs(Some("often")).await.unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.scheduled));
}

#[test]
fn schedules_do_not_pile_up_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("runs.db").display());
    block_on(schedules_do_not_pile_up(&url, dir.path()));
}

#[test]
fn schedules_do_not_pile_up_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = Postgres::start(dir.path());
    block_on(schedules_do_not_pile_up(&pg.url, dir.path()));
}
