//! Schedules and drift (issue 26 item 4), on SQLite and PostgreSQL, with the clock in the
//! test's hands: the store, the runner and the API are served in this process, and the test
//! looks at the schedules at the times it chooses (`tack_server::schedule::tick`) instead of
//! sleeping until they come. A scheduled plan that would change marks its incarnation
//! drifted (API, index page, the incarnation's page), with each host and task; the next apply
//! that succeeds clears it; occurrences missed while nothing looked are run once; two servers
//! looking at once queue one run.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tack_server::api::AppState;
use tack_server::runner::{RunnerConfig, run_queue};
use tack_server::schedule::tick;
use tack_server::tokens::Role;
use tack_server::{Store, serve::serve_app};
use tokio::sync::Notify;

#[path = "common/procs.rs"]
mod procs;
#[path = "common/server.rs"]
mod server;
use server::*;

#[path = "../../tack-server/tests/support/postgres.rs"]
mod postgres;

#[test]
fn schedules_and_drift_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    schedules(&db, dir.path());
}

#[test]
fn schedules_and_drift_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    schedules(&pg.url, dir.path());
}

/// Unix milliseconds of an RFC 3339 time.
fn at(text: &str) -> i64 {
    let (date, time) = text.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    let t: Vec<i64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
    let (y, m) = if d[1] <= 2 { (d[0] - 1, d[1] + 9) } else { (d[0], d[1] - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400) + t[0] * 3600 + t[1] * 60 + t[2]) * 1000
}

fn schedules(db: &str, dir: &Path) {
    let project = project(dir);
    // Only what a plan can know: a plan of it says "nothing would change" once applied.
    std::fs::write(
        project.join("drift.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: write marker\n      \
         lineinfile:\n        path: \"{{ playbook_dir }}/drift-{{ inventory_hostname }}\"\n        \
         line: \"{{ inventory_hostname }}\"\n        create: true\n",
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let store = rt.block_on(Store::open(db)).unwrap();
    let (_, admin) = rt.block_on(store.create_token("admin", Role::Admin)).unwrap();
    let wake = Arc::new(Notify::new());
    let config = Arc::new(RunnerConfig {
        tack_exe: env!("CARGO_BIN_EXE_tack").into(),
        db_url: db.to_string(),
        max_runs: 1,
        controller: format!("schedule-test:{}", std::process::id()),
        host: "schedule-test".into(),
        pid: i64::from(std::process::id()),
    });
    rt.spawn(run_queue(store.clone(), config, wake.clone()));
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    rt.spawn(serve_app(listener, AppState { store: store.clone(), wake: wake.clone() }));
    let a = addr.as_str();
    let s = Server::in_process(&addr, &admin);

    // A schedule is checked with the spec: apply runs, bad patterns and zones refused.
    let spec = |schedules: Value| {
        json!({"name": "web", "project_dir": project, "playbook": "drift.yml",
               "inventory": "hosts", "schedules": schedules})
        .to_string()
    };
    for (bad, says) in [
        (json!([{"cron": "0 3 * * *", "mode": "apply"}]), "apply runs are started by people"),
        (json!([{"cron": "0 3 * *"}]), "not a cron pattern"),
        (json!([{"cron": "0 3 * * *", "timezone": "Nowhere/City"}]), "Nowhere/City"),
        (json!([{"cron": "0 3 * * *", "every": 2}]), "unknown field"),
    ] {
        let r = request(a, "POST", "/v1/incarnations", Some(&admin), Some(&spec(bad)), &[]);
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
        assert!(r.json()["error"].as_str().unwrap().contains(says), "{}", r.json());
    }
    let daily = json!([{"cron": "0 3 * * *", "timezone": "Europe/Berlin"}]);
    let r = request(a, "POST", "/v1/incarnations", Some(&admin), Some(&spec(daily.clone())), &[]);
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["schedules"],
        json!([{"cron": "0 3 * * *", "timezone": "Europe/Berlin", "mode": "plan"}])
    );
    let drift = |name: &str| {
        request(a, "GET", &format!("/v1/incarnations/{name}/drift"), Some(&admin), None, &[]).json()
    };
    assert_eq!(drift("web"), json!({"incarnation": "web", "drifted": false}));

    // First seen: nothing to catch up. 03:00 in Berlin is 02:00 UTC in January.
    let t0 = at("2031-01-06T00:00:00Z");
    assert!(rt.block_on(tick(&store, t0)).unwrap().is_empty());
    assert!(rt.block_on(tick(&store, at("2031-01-06T01:59:00Z"))).unwrap().is_empty());
    // Three occurrences passed while nothing looked: one run.
    let fired = rt.block_on(tick(&store, at("2031-01-09T12:00:00Z"))).unwrap();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(rt.block_on(tick(&store, at("2031-01-09T12:01:00Z"))).unwrap().is_empty());
    let id = fired[0].apply_id.clone();
    let run = wait_final(&s, &admin, "web", &id);
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!((run["mode"].as_str(), run["scheduled"].as_bool()), (Some("plan"), Some(true)));
    assert_eq!(run["started_by"], "schedule 0 3 * * * Europe/Berlin plan");
    // It would write both markers: drifted, host by host.
    let found = drift("web");
    assert_eq!(found["drifted"], true, "{found}");
    assert_eq!(found["apply_id"], json!(id));
    assert_eq!(
        found["changes"],
        json!([
            {"host": "soul-1", "task": "write marker", "outcome": "would_change"},
            {"host": "soul-2", "task": "write marker", "outcome": "would_change"}
        ])
    );
    assert!(!project.join("drift-soul-1").exists(), "a plan changed something");
    let all = request(a, "GET", "/v1/drift", Some(&admin), None, &[]).json();
    assert_eq!(all.as_array().unwrap().len(), 1);
    let cookie = sign_in(a, &admin);
    let page = |path: &str| {
        let r = request(a, "GET", path, None, None, &[("Cookie", &cookie)]);
        String::from_utf8(r.body).unwrap()
    };
    let index = page("/ui/");
    assert!(index.contains("<span class='badge s-drifted'"), "{index}");
    let own = page("/ui/incarnations/web");
    assert!(own.contains("<table id=drift>") && own.contains("would_change"), "{own}");
    assert!(own.contains("0 3 * * * Europe/Berlin plan"), "{own}");

    // A plan a person starts leaves the mark as it is: only schedules watch for drift.
    let body = json!({"mode": "plan"}).to_string();
    let r = request(a, "POST", "/v1/incarnations/web/runs", Some(&admin), Some(&body), &[]);
    let manual = r.json()["apply_id"].as_str().unwrap().to_string();
    assert_eq!(wait_final(&s, &admin, "web", &manual)["scheduled"], false);
    assert_eq!(drift("web")["apply_id"], json!(id));
    let apply = request(a, "POST", "/v1/incarnations/web/runs", Some(&admin), None, &[]);
    assert_eq!(apply.status, 202);
    let apply = apply.json()["apply_id"].as_str().unwrap().to_string();
    assert_eq!(wait_final(&s, &admin, "web", &apply)["status"], "success");
    // The apply that succeeded cleared it.
    assert_eq!(drift("web")["drifted"], false);
    assert!(!page("/ui/").contains("<span class='badge s-drifted'"));
    assert!(project.join("drift-soul-1").exists());

    // The next day's plan finds nothing would change: still not drifted.
    let fired = rt.block_on(tick(&store, at("2031-01-10T02:00:00Z"))).unwrap();
    assert_eq!(fired.len(), 1, "{fired:?}");
    let clean = wait_final(&s, &admin, "web", &fired[0].apply_id);
    assert_eq!(clean["status"], "success", "{clean}");
    assert_eq!(drift("web")["drifted"], false);

    // What a plan cannot call unchanged is drift too: a command would run, and what reads
    // its output is deferred.
    std::fs::write(
        project.join("deps.yml"),
        "- hosts: soul-1\n  gather_facts: false\n  tasks:\n    - name: ask\n      command: echo \
         hi\n      register: out\n    - name: use\n      lineinfile:\n        path: \"{{ \
         playbook_dir }}/deps-{{ out.stdout }}\"\n        line: x\n        create: true\n",
    )
    .unwrap();
    let deps = json!({"name": "deps", "project_dir": project, "playbook": "deps.yml",
                      "inventory": "hosts", "schedules": [{"cron": "@hourly", "mode": "plan"}]});
    let r = request(a, "POST", "/v1/incarnations", Some(&admin), Some(&deps.to_string()), &[]);
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert!(rt.block_on(tick(&store, at("2031-01-10T02:30:00Z"))).unwrap().is_empty());
    let fired = rt.block_on(tick(&store, at("2031-01-10T03:00:00Z"))).unwrap();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(wait_final(&s, &admin, "deps", &fired[0].apply_id)["status"], "success");
    assert_eq!(
        drift("deps")["changes"],
        json!([
            {"host": "soul-1", "task": "ask", "outcome": "would_run"},
            {"host": "soul-1", "task": "use", "outcome": "deferred"}
        ])
    );
    assert_eq!(drift("web")["drifted"], false);

    // Two servers looking at the same moment queue one run between them.
    let other = rt.block_on(Store::open(db)).unwrap();
    let due = at("2031-01-11T02:00:00Z");
    let (one, two) = rt.block_on(async { tokio::join!(tick(&store, due), tick(&other, due)) });
    let mut queued: Vec<String> =
        one.unwrap().into_iter().chain(two.unwrap()).map(|f| f.incarnation).collect();
    queued.sort();
    assert_eq!(queued, ["deps", "web"], "each schedule once");

    // Deleted and made again under its name: no drift, and its schedule starts afresh.
    let r = request(a, "DELETE", "/v1/incarnations/deps", Some(&admin), None, &[]);
    assert_eq!(r.status, 204);
    let r = request(a, "POST", "/v1/incarnations", Some(&admin), Some(&deps.to_string()), &[]);
    assert_eq!(r.status, 201);
    assert_eq!(drift("deps")["drifted"], false);
    assert!(
        rt.block_on(tick(&store, at("2031-01-12T09:00:00Z")))
            .unwrap()
            .iter()
            .all(|f| f.incarnation != "deps")
    );
    drop(rt);
}
