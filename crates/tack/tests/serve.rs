//! `tack serve` through its REST API, against SQLite and against a real PostgreSQL started on
//! loopback: every endpoint, every role (a viewer cannot start a run), bad input (unknown
//! names 404, malformed JSON 400, nothing written), runs queued, run, cancelled while queued
//! and while running, and the events stream replayed from `Last-Event-ID`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/procs.rs"]
mod procs;
#[path = "common/server.rs"]
mod server;
use server::*;

fn exercise(db: &str, dir: &Path) {
    let project = project(dir);
    let s = start_server(db, dir, "1", true);
    let admin = s.admin.clone();
    let viewer = token(db, "viewer", "watcher");
    let operator = token(db, "operator", "deployer");
    let a = s.addr.as_str();

    // Deny by default; the document is public and names every route.
    assert_eq!(request(a, "GET", "/v1/runs", None, None, &[]).status, 401);
    assert_eq!(request(a, "GET", "/v1/runs", Some("tack_not-a-token"), None, &[]).status, 401);
    let doc = request(a, "GET", "/v1/openapi.json", None, None, &[]);
    assert_eq!(doc.status, 200);
    assert!(doc.json()["paths"]["/v1/incarnations/{name}/runs/{apply_id}/tasks"].is_object());
    assert_eq!(request(a, "GET", "/v1/nothing", Some(&viewer), None, &[]).status, 404);

    tokens_over_the_api(a, &admin, &operator);

    // Bad input is refused and writes nothing.
    let spec = json!({
        "name": "web", "project_dir": project, "playbook": "site.yml", "inventory": "hosts",
        "mode": "apply"
    });
    let spec_text = spec.to_string();
    for (body, want) in [
        ("{\"name\": ", 400),
        ("[1, 2]", 400),
        (r#"{"name": "web", "project_dir": "/", "playbook": "x.yml", "colour": 1}"#, 400),
        (r#"{"name": "web", "project_dir": "relative", "playbook": "x.yml"}"#, 400),
        (r#"{"name": "web", "project_dir": "/", "playbook": "../x.yml"}"#, 400),
        (r#"{"name": "w b", "project_dir": "/", "playbook": "x.yml"}"#, 400),
    ] {
        let r = request(a, "POST", "/v1/incarnations", Some(&admin), Some(body), &[]);
        assert_eq!(r.status, want, "{body}: {}", String::from_utf8_lossy(&r.body));
        assert!(r.json()["error"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    }
    assert_eq!(request(a, "GET", "/v1/incarnations", Some(&viewer), None, &[]).json(), json!([]));
    let r = request(a, "POST", "/v1/incarnations", Some(&viewer), Some(&spec_text), &[]);
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        request(a, "POST", "/v1/incarnations", Some(&operator), Some(&spec_text), &[]).status,
        403
    );
    let r = request(a, "POST", "/v1/incarnations", Some(&admin), Some(&spec_text), &[]);
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        request(a, "POST", "/v1/incarnations", Some(&admin), Some(&spec_text), &[]).status,
        409
    );
    assert_eq!(request(a, "GET", "/v1/incarnations/web", Some(&viewer), None, &[]).json(), spec);
    assert_eq!(request(a, "GET", "/v1/incarnations/nope", Some(&viewer), None, &[]).status, 404);
    assert_eq!(
        request(a, "GET", "/v1/incarnations/nope/runs", Some(&viewer), None, &[]).status,
        404
    );
    assert_eq!(
        request(a, "POST", "/v1/incarnations/nope/runs", Some(&operator), None, &[]).status,
        404
    );

    // PUT replaces, keeping the name.
    let mut changed = spec.clone();
    changed["limit"] = json!("soul-1,soul-2");
    let r =
        request(a, "PUT", "/v1/incarnations/web", Some(&admin), Some(&changed.to_string()), &[]);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let renamed = json!({"name": "other", "project_dir": project, "playbook": "site.yml"});
    assert_eq!(
        request(a, "PUT", "/v1/incarnations/web", Some(&admin), Some(&renamed.to_string()), &[])
            .status,
        400
    );
    assert_eq!(
        request(
            a,
            "PUT",
            "/v1/incarnations/nope",
            Some(&admin),
            Some(
                &json!({"name": "nope", "project_dir": project, "playbook": "site.yml"})
                    .to_string()
            ),
            &[]
        )
        .status,
        404
    );
    assert_eq!(
        request(a, "PUT", "/v1/incarnations/web", Some(&operator), Some(&changed.to_string()), &[])
            .status,
        403
    );

    // A viewer cannot start a run; an operator can.
    assert_eq!(
        request(a, "POST", "/v1/incarnations/web/runs", Some(&viewer), None, &[]).status,
        403
    );
    let r = request(a, "POST", "/v1/incarnations/web/runs", Some(&operator), None, &[]);
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["apply_id"].as_str().unwrap().to_string();
    let run = wait_final(&s, &viewer, "web", &id);
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(run["started_by"], "deployer");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["recap"]["soul-1"]["changed"], 2, "{run}");
    for host in ["soul-1", "soul-2"] {
        let marker = std::fs::read_to_string(project.join(format!("marker-{host}"))).unwrap();
        assert_eq!(marker, format!("{host}\n"));
    }

    let tasks = request(
        a,
        "GET",
        &format!("/v1/incarnations/web/runs/{id}/tasks"),
        Some(&viewer),
        None,
        &[],
    )
    .json();
    assert_eq!((tasks["host_offset"].as_i64(), tasks["host_limit"].as_i64()), (Some(0), Some(100)));
    let tasks = tasks["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0]["hosts_total"], 2);
    // Each task's hosts a page at a time: the second host alone, then bad windows refused.
    let base = format!("/v1/incarnations/web/runs/{id}/tasks");
    let page =
        request(a, "GET", &format!("{base}?host_offset=1&host_limit=1"), Some(&viewer), None, &[]);
    assert_eq!(page.status, 200, "{}", String::from_utf8_lossy(&page.body));
    let page = page.json();
    let hosts = page["tasks"][0]["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0]["host"], "soul-2");
    assert_eq!(page["tasks"][0]["hosts_total"], 2);
    for bad in ["host_limit=5000", "host_offset=-1", "host_limit=x", "colour=1"] {
        let r = request(a, "GET", &format!("{base}?{bad}"), Some(&viewer), None, &[]);
        assert_eq!(r.status, 400, "{bad}: {}", String::from_utf8_lossy(&r.body));
        assert!(r.json()["error"].as_str().is_some_and(|m| !m.is_empty()), "{bad}");
    }
    assert_eq!(tasks[0]["name"], "write marker");
    assert_eq!(tasks[0]["module"], "lineinfile");
    assert_eq!(
        tasks[0]["params"],
        json!({"path": "<per-host>", "line": "<per-host>", "create": true})
    );
    assert_eq!(tasks[1]["params"], json!({"_raw_params": "<per-host>"}));
    // Each host's own input, on its row, where the inputs differ.
    for h in tasks[1]["hosts"].as_array().unwrap() {
        let want = format!("echo {}", h["host"].as_str().unwrap());
        assert_eq!(h["input"], json!({"_raw_params": want}), "{h}");
    }
    let mut outs: Vec<(String, String)> = tasks[1]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap().into(), h["stdout"].as_str().unwrap().into()))
        .collect();
    outs.sort();
    assert_eq!(outs, [("soul-1".into(), "soul-1".into()), ("soul-2".into(), "soul-2".into())]);
    assert_eq!(tasks[1]["hosts"][0]["exit_code"], 0);

    // The web page: sign in with a token, the run's detail with the marker as a chip and a
    // row per host, in the browser's language; the cookie opens reads, never changes.
    let ui = format!("/ui/runs/{id}?task=1");
    let r = request(a, "GET", &ui, None, None, &[]);
    assert_eq!((r.status, r.head.contains("location: /ui/login")), (303, true), "{}", r.head);
    // The sign-in form pairs with a cookie of its own: a post without both is refused (a
    // login forged from another site), even with a good token.
    let login = request(a, "GET", "/ui/login", None, None, &[]);
    let nonce = login
        .head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: tack_login="))
        .and_then(|v| v.split(';').next())
        .expect("the form's cookie")
        .to_string();
    assert!(String::from_utf8_lossy(&login.body).contains(&format!("name=form value={nonce}")));
    let paired = format!("tack_login={nonce}");
    let form = [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", paired.as_str())];
    let bare = [("Content-Type", "application/x-www-form-urlencoded")];
    let r = request(a, "POST", "/ui/login", None, Some(&format!("token={viewer}")), &bare);
    assert_eq!(r.status, 403, "a form without its cookie");
    let forged = format!("token={viewer}&form=0000");
    assert_eq!(request(a, "POST", "/ui/login", None, Some(&forged), &form).status, 403);
    let r = request(
        a,
        "POST",
        "/ui/login",
        None,
        Some(&format!("token=tack_wrong&form={nonce}")),
        &form,
    );
    assert_eq!(r.status, 401);
    let r =
        request(a, "POST", "/ui/login", None, Some(&format!("token={viewer}&form={nonce}")), &form);
    assert_eq!(r.status, 303, "{}", r.head);
    assert!(r.head.contains("httponly") && r.head.contains("samesite=strict"), "{}", r.head);
    // The browser keeps a session of its own, never the token.
    let cookie = set_cookie(&r, "tack_session").expect("a session cookie");
    assert!(!r.head.contains(&viewer), "{}", r.head);
    let page = request(a, "GET", &ui, None, None, &[("Cookie", &cookie)]);
    assert_eq!(page.status, 200);
    let html = String::from_utf8(page.body).unwrap();
    assert!(
        html.contains(
            "<span class='chip per-host' title='&lt;per-host&gt;'>differs per host</span>"
        ),
        "{html}"
    );
    assert!(html.contains("data-host='soul-1'") && html.contains("data-host='soul-2'"), "{html}");
    assert!(html.contains(&format!("<code id=apply-id>{id}</code>")), "{html}");
    let ru = request(
        a,
        "GET",
        &ui,
        None,
        None,
        &[("Cookie", &cookie), ("Accept-Language", "ru-RU,ru;q=0.9")],
    );
    let html = String::from_utf8(ru.body).unwrap();
    assert!(html.contains("своё на каждом хосте") && html.contains("<html lang=ru>"), "{html}");
    let index = request(a, "GET", "/ui/?lang=ru", None, None, &[("Cookie", &cookie)]);
    assert!(index.head.contains("set-cookie: tack_lang=ru"), "{}", index.head);
    assert!(String::from_utf8(index.body).unwrap().contains(&id));
    assert_eq!(request(a, "GET", "/v1/runs", None, None, &[("Cookie", &cookie)]).status, 200);
    let op_cookie = sign_in(a, &operator);
    let r = request(a, "POST", "/v1/incarnations/web/runs", None, None, &[("Cookie", &op_cookie)]);
    assert_eq!(r.status, 401, "a cookie started a run");

    // The events, whole and resumed; a run that ended closes its stream.
    let events = request(
        a,
        "GET",
        &format!("/v1/incarnations/web/runs/{id}/events"),
        Some(&viewer),
        None,
        &[],
    );
    assert_eq!(events.status, 200);
    let text = String::from_utf8(events.body).unwrap();
    let ids: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    assert_eq!(ids.first(), Some(&"1"));
    assert!(text.contains("event: recap"), "{text}");
    let resumed = request(
        a,
        "GET",
        &format!("/v1/incarnations/web/runs/{id}/events"),
        Some(&viewer),
        None,
        &[("Last-Event-ID", "2")],
    );
    let text2 = String::from_utf8(resumed.body).unwrap();
    let ids2: Vec<&str> = text2.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    assert_eq!(ids2, ids[2..]);
    assert_eq!(
        request(
            a,
            "GET",
            &format!("/v1/incarnations/web/runs/{id}/events"),
            Some(&viewer),
            None,
            &[("Last-Event-ID", "x")]
        )
        .status,
        400
    );

    // Cancelling: an ended run 409; one running stops; one queued never runs.
    assert_eq!(
        request(
            a,
            "POST",
            &format!("/v1/incarnations/web/runs/{id}/cancel"),
            Some(&operator),
            None,
            &[]
        )
        .status,
        409
    );
    let slow = json!({"name": "slow", "project_dir": project, "playbook": "slow.yml", "inventory": "hosts"});
    assert_eq!(
        request(a, "POST", "/v1/incarnations", Some(&admin), Some(&slow.to_string()), &[]).status,
        201
    );
    let running = request(a, "POST", "/v1/incarnations/slow/runs", Some(&operator), None, &[])
        .json()["apply_id"]
        .as_str()
        .unwrap()
        .to_string();
    wait_status(&s, &viewer, "slow", &running, "running");
    // One run at a time (--max-runs 1): the next waits in the queue.
    let queued = request(a, "POST", "/v1/incarnations/slow/runs", Some(&operator), None, &[])
        .json()["apply_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = request(
        a,
        "POST",
        &format!("/v1/incarnations/slow/runs/{queued}/cancel"),
        Some(&operator),
        None,
        &[],
    );
    assert_eq!((r.status, r.json()["status"].clone()), (200, json!("cancelled")));
    assert_eq!(
        request(
            a,
            "POST",
            &format!("/v1/incarnations/slow/runs/{running}/cancel"),
            Some(&viewer),
            None,
            &[]
        )
        .status,
        403
    );
    let r = request(
        a,
        "POST",
        &format!("/v1/incarnations/slow/runs/{running}/cancel"),
        Some(&operator),
        None,
        &[],
    );
    assert_eq!(r.status, 202);
    let ended = wait_final(&s, &viewer, "slow", &running);
    assert_eq!(ended["status"], "cancelled", "{ended}");
    // The cancel stopped the run's module too, not only the run.
    let left = lingering(project.to_str().unwrap());
    assert!(left.is_empty(), "the cancelled run's processes live on: {left:?}");
    let never = request(
        a,
        "GET",
        &format!("/v1/incarnations/slow/runs/{queued}"),
        Some(&viewer),
        None,
        &[],
    )
    .json();
    assert_eq!(
        (never["status"].clone(), never["started_at"].clone()),
        (json!("cancelled"), Value::Null)
    );

    // Lists, and 404s for runs that are not the incarnation's.
    let all = request(a, "GET", "/v1/runs", Some(&viewer), None, &[]).json();
    assert_eq!(all.as_array().unwrap().len(), 3);
    let web_runs = request(a, "GET", "/v1/incarnations/web/runs", Some(&viewer), None, &[]).json();
    assert_eq!(web_runs.as_array().unwrap().len(), 1);
    assert_eq!(
        request(
            a,
            "GET",
            &format!("/v1/incarnations/web/runs/{running}"),
            Some(&viewer),
            None,
            &[]
        )
        .status,
        404
    );
    assert_eq!(
        request(a, "GET", "/v1/incarnations/web/runs/none/tasks", Some(&viewer), None, &[]).status,
        404
    );

    // Deleting an incarnation keeps its runs.
    assert_eq!(
        request(a, "DELETE", "/v1/incarnations/web", Some(&operator), None, &[]).status,
        403
    );
    assert_eq!(request(a, "DELETE", "/v1/incarnations/web", Some(&admin), None, &[]).status, 204);
    assert_eq!(request(a, "GET", "/v1/incarnations/web", Some(&viewer), None, &[]).status, 404);
    assert_eq!(request(a, "DELETE", "/v1/incarnations/web", Some(&admin), None, &[]).status, 404);
    assert_eq!(
        request(a, "GET", "/v1/runs", Some(&viewer), None, &[]).json().as_array().unwrap().len(),
        3
    );

    // A revoked token is refused at once.
    let list = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["token", "list", "--db", db])
        .output()
        .unwrap();
    let listing = String::from_utf8(list.stdout).unwrap();
    let watcher_id = listing
        .lines()
        .find(|l| l.ends_with(" watcher"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(!listing.contains(&viewer), "a token's secret is listed");
    let revoke = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["token", "revoke", &watcher_id, "--db", db])
        .status()
        .unwrap();
    assert!(revoke.success());
    assert_eq!(request(a, "GET", "/v1/runs", Some(&viewer), None, &[]).status, 401);
}

#[test]
fn the_api_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    exercise(&db, dir.path());
}

#[test]
fn the_api_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    exercise(&pg.url, dir.path());
}

#[path = "../../tack-server/tests/support/postgres.rs"]
mod postgres;

#[test]
fn two_servers_on_one_postgres_run_each_queued_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    let project = project(dir.path());
    // Each run writes the run and attempt it was told, once per run; the file that handed it
    // the store's address is gone before any module runs.
    std::fs::write(
        project.join("once.yml"),
        "- hosts: soul-1\n  gather_facts: false\n  tasks:\n    - shell: echo \"$TACK_SERVE_RUN\" \
         >> {{ playbook_dir }}/ran.log && test ! -e \"$TACK_SERVE_DB_FILE\"\n",
    )
    .unwrap();
    let one = start_server(&pg.url, dir.path(), "2", true);
    let two = start_server(&pg.url, dir.path(), "2", false);
    let operator = token(&pg.url, "operator", "deployer");
    let spec = json!({"name": "once", "project_dir": project, "playbook": "once.yml", "inventory": "hosts"});
    let r = request(
        &one.addr,
        "POST",
        "/v1/incarnations",
        Some(&one.admin),
        Some(&spec.to_string()),
        &[],
    );
    assert_eq!(r.status, 201);
    // Half queued through each server, all claimed from the one queue.
    let mut ids = queue(&one, &operator, "once", 10);
    ids.extend(queue(&two, &operator, "once", 10));
    for id in &ids {
        let run = wait_final(&two, &operator, "once", id);
        assert_eq!(run["status"], "success", "{run}");
        assert_eq!(run["attempt"], 1, "{run}");
    }
    let log = std::fs::read_to_string(project.join("ran.log")).unwrap();
    let mut ran: Vec<&str> = log.lines().collect();
    ran.sort_unstable();
    let mut want: Vec<String> = ids.iter().map(|id| format!("{id}:1")).collect();
    want.sort_unstable();
    assert_eq!(ran, want, "every run once, none twice");
}

#[test]
fn a_killed_server_leaves_its_run_interrupted_with_its_events() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    killed_server(&db, dir.path());
}

#[test]
fn a_killed_server_on_postgres_leaves_its_run_interrupted_with_its_events() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    killed_server(&pg.url, dir.path());
}

/// A server killed while its run's task runs: the run's module stops with it, and the next
/// server marks the run `interrupted` (never runs it again) with the events it had stored.
fn killed_server(db: &str, dir: &Path) {
    let db = db.to_string();
    let project = project(dir);
    let mut s = start_server(&db, dir, "1", true);
    let admin = s.admin.clone();
    let spec = json!({"name": "slow", "project_dir": project, "playbook": "slow.yml", "inventory": "hosts"});
    let r =
        request(&s.addr, "POST", "/v1/incarnations", Some(&admin), Some(&spec.to_string()), &[]);
    assert_eq!(r.status, 201);
    let id = queue(&s, &admin, "slow", 1).remove(0);
    let events = format!("/v1/incarnations/slow/runs/{id}/tasks");
    let deadline = Instant::now() + Duration::from_secs(30);
    // Killed once the task is stored as started.
    while request(&s.addr, "GET", &events, Some(&admin), None, &[]).json()["tasks"]
        .as_array()
        .unwrap()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the run never started its task");
        std::thread::sleep(Duration::from_millis(100));
    }
    s.child.as_mut().unwrap().kill().unwrap();
    s.child.as_mut().unwrap().wait().unwrap();
    // The run dies with the server, and stops its module first.
    let left = lingering(project.to_str().unwrap());
    assert!(left.is_empty(), "the run's processes outlived the server: {left:?}");
    let again = start_server(&db, dir, "1", false);
    let run = wait_final(&again, &admin, "slow", &id);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(run["error"].as_str().unwrap().contains("not run again"), "{run}");
    let stream = request(
        &again.addr,
        "GET",
        &format!("/v1/incarnations/slow/runs/{id}/events"),
        Some(&admin),
        None,
        &[],
    );
    let text = String::from_utf8(stream.body).unwrap();
    assert!(text.contains("event: play_start") && text.contains("event: task_start"), "{text}");
    // Nothing ran it again.
    std::thread::sleep(Duration::from_secs(1));
    let run = request(
        &again.addr,
        "GET",
        &format!("/v1/incarnations/slow/runs/{id}"),
        Some(&admin),
        None,
        &[],
    )
    .json();
    assert_eq!((run["status"].clone(), run["attempt"].clone()), (json!("interrupted"), json!(1)));
}

#[test]
fn responses_are_hardened_and_every_error_is_json() {
    // Issue 24's server hygiene: each of these failed before (no such headers; `Bearer` only
    // as spelled; a plain-text 413; `..` taken as a name).
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let project = project(dir.path());
    let s = start_server(&db, dir.path(), "1", true);
    let a = &s.addr;
    let page = request(a, "GET", "/ui/login", None, None, &[]);
    assert_eq!(page.status, 200);
    for wanted in [
        "x-content-type-options: nosniff",
        "cache-control: no-store",
        "frame-ancestors 'none'",
        "form-action 'self'",
    ] {
        assert!(page.head.contains(wanted), "{wanted} missing in {}", page.head);
    }
    let api = request(
        a,
        "GET",
        "/v1/runs",
        None,
        None,
        &[("Authorization", &format!("bEaReR {}", s.admin))],
    );
    assert_eq!(api.status, 200, "the scheme is case-insensitive");
    assert!(
        api.head.contains("content-security-policy: default-src 'none'; frame-ancestors 'none'"),
        "{}",
        api.head
    );
    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(3 << 20));
    let r = request(a, "POST", "/v1/incarnations", Some(&s.admin), Some(&huge), &[]);
    assert_eq!(r.status, 413);
    assert!(r.json()["error"].is_string(), "{}", String::from_utf8_lossy(&r.body));
    let r = request(a, "DELETE", "/v1/runs", Some(&s.admin), None, &[]);
    assert_eq!(r.status, 405);
    assert!(r.json()["error"].is_string());
    for name in [".", ".."] {
        let spec = json!({"name": name, "project_dir": project, "playbook": "site.yml"});
        let r =
            request(a, "POST", "/v1/incarnations", Some(&s.admin), Some(&spec.to_string()), &[]);
        assert_eq!(r.status, 400, "{name}");
    }
    let spec = json!({"name": "web", "project_dir": project, "playbook": "site.yml", "limit": "@../hosts"});
    let r = request(a, "POST", "/v1/incarnations", Some(&s.admin), Some(&spec.to_string()), &[]);
    assert_eq!(r.status, 400);
    assert!(r.json()["error"].as_str().unwrap().starts_with("limit "), "{}", r.json());
}

#[test]
fn revoking_a_token_ends_the_event_streams_it_opened() {
    // Before, a stream opened with a token ran on until its run ended, revoked or not.
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let project = project(dir.path());
    let s = start_server(&db, dir.path(), "1", true);
    incarnation(&s, "slow", &project, "slow.yml");
    let id = queue(&s, &s.admin, "slow", 1).remove(0);
    wait_status(&s, &s.admin, "slow", &id, "running");
    let watcher = token(&db, "viewer", "short-lived");
    let addr = s.addr.clone();
    let path = format!("/v1/incarnations/slow/runs/{id}/events");
    let reader =
        std::thread::spawn(move || request(&addr, "GET", &path, Some(&watcher), None, &[]).status);
    std::thread::sleep(Duration::from_millis(500));
    let listing = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["token", "list", "--db", &db])
        .output()
        .unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let token_id = listing
        .lines()
        .find(|l| l.ends_with(" short-lived"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let revoked = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["token", "revoke", &token_id, "--db", &db])
        .status()
        .unwrap();
    assert!(revoked.success());
    assert_eq!(reader.join().unwrap(), 200);
    // The stream ended with its token, not with its run, which goes on.
    let run_path = format!("/v1/incarnations/slow/runs/{id}");
    let run = request(&s.addr, "GET", &run_path, Some(&s.admin), None, &[]).json();
    assert_eq!(run["status"], "running", "{run}");
    let r = request(
        &s.addr,
        "POST",
        &format!("/v1/incarnations/slow/runs/{id}/cancel"),
        Some(&s.admin),
        None,
        &[],
    );
    assert_eq!(r.status, 202);
}

#[test]
fn an_incarnations_extra_vars_stay_off_command_lines_and_out_of_viewers_sight() {
    // Before: `-e '{"secret": ...}'` on the child's command line (any local user's `ps`),
    // every value in GET /v1/incarnations for viewers, and no bound on their size.
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let project = project(dir.path());
    std::fs::write(
        project.join("vars.yml"),
        "- hosts: soul-1\n  gather_facts: false\n  tasks:\n    - copy:\n        content: \"{{ secret }}\"\n        \
         dest: \"{{ playbook_dir }}/got-secret\"\n    - command: sh -c 'sleep 30; true' {{ playbook_dir }}/slow\n",
    )
    .unwrap();
    let s = start_server(&db, dir.path(), "1", true);
    let a = &s.addr;
    let secret = "s3cr3t-extra-var-value";
    let spec = json!({"name": "vars", "project_dir": project, "playbook": "vars.yml", "inventory": "hosts",
        "extra_vars": {"secret": secret, "count": 2}});
    assert_eq!(
        request(a, "POST", "/v1/incarnations", Some(&s.admin), Some(&spec.to_string()), &[]).status,
        201
    );
    let viewer = token(&db, "viewer", "looker");
    let seen = request(a, "GET", "/v1/incarnations/vars", Some(&viewer), None, &[]).json();
    assert_eq!(seen["extra_vars"], json!({"secret": "********", "count": "********"}), "{seen}");
    let listed = request(a, "GET", "/v1/incarnations", Some(&viewer), None, &[]).json();
    assert!(!listed.to_string().contains(secret), "{listed}");
    let admin_view = request(a, "GET", "/v1/incarnations/vars", Some(&s.admin), None, &[]).json();
    assert_eq!(admin_view["extra_vars"]["secret"], secret);
    let id = queue(&s, &s.admin, "vars", 1).remove(0);
    wait_status(&s, &s.admin, "vars", &id, "running");
    let got = project.join("got-secret");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !got.exists() {
        assert!(Instant::now() < deadline, "the run never used its extra vars");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&got).unwrap(), secret);
    let on_command_lines: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(secret))
        .collect();
    assert!(on_command_lines.is_empty(), "{on_command_lines:?}");
    let r = request(
        a,
        "POST",
        &format!("/v1/incarnations/vars/runs/{id}/cancel"),
        Some(&s.admin),
        None,
        &[],
    );
    assert_eq!(r.status, 202);
    // Bounded when made.
    let big = json!({"name": "big", "project_dir": project, "playbook": "vars.yml",
        "extra_vars": {"blob": "x".repeat(70 * 1024)}});
    let r = request(a, "POST", "/v1/incarnations", Some(&s.admin), Some(&big.to_string()), &[]);
    assert_eq!(r.status, 400);
    assert!(r.json()["error"].as_str().unwrap().starts_with("extra_vars take "), "{}", r.json());
}

/// Admins make, list and revoke tokens over the API: the secret is in the answer that made it
/// and nowhere else, a revoked token stops working at once, and no one below admin may touch
/// them.
fn tokens_over_the_api(a: &str, admin: &str, operator: &str) {
    for (who, method, path, body) in [
        (operator, "GET", "/v1/tokens", None),
        (operator, "POST", "/v1/tokens", Some(r#"{"name": "x", "role": "viewer"}"#)),
        (operator, "DELETE", "/v1/tokens/abc", None),
    ] {
        let r = request(a, method, path, Some(who), body, &[]);
        assert_eq!(r.status, 403, "{method} {path}: {}", String::from_utf8_lossy(&r.body));
    }
    for body in [
        r#"{"name": "", "role": "viewer"}"#,
        r#"{"name": "ci", "role": "root"}"#,
        r#"{"name": "ci", "role": "viewer", "expires": 1}"#,
        r#"{"name": "a\u0007b", "role": "viewer"}"#,
        "not json",
    ] {
        let r = request(a, "POST", "/v1/tokens", Some(admin), Some(body), &[]);
        assert_eq!(r.status, 400, "{body}: {}", String::from_utf8_lossy(&r.body));
        assert!(r.json()["error"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    }
    let made = request(
        a,
        "POST",
        "/v1/tokens",
        Some(admin),
        Some(r#"{"name": "ci-bot", "role": "viewer"}"#),
        &[],
    );
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let made = made.json();
    let secret = made["token"].as_str().expect("the secret, once").to_string();
    let id = made["id"].as_str().unwrap().to_string();
    assert_eq!(made["role"], "viewer");
    assert!(secret.starts_with("tack_"), "{secret}");
    assert_eq!(request(a, "GET", "/v1/runs", Some(&secret), None, &[]).status, 200);
    let listed = request(a, "GET", "/v1/tokens", Some(admin), None, &[]);
    assert_eq!(listed.status, 200);
    let text = String::from_utf8_lossy(&listed.body).into_owned();
    assert!(!text.contains(&secret) && !text.contains(admin), "a secret is listed: {text}");
    assert!(!text.contains("\"token\""), "{text}");
    let entry = listed.json().as_array().unwrap().iter().find(|t| t["id"] == id).cloned();
    assert_eq!(entry.expect("listed")["name"], "ci-bot");
    assert_eq!(
        request(a, "DELETE", &format!("/v1/tokens/{id}"), Some(admin), None, &[]).status,
        204
    );
    assert_eq!(request(a, "GET", "/v1/runs", Some(&secret), None, &[]).status, 401);
    assert_eq!(
        request(a, "DELETE", &format!("/v1/tokens/{id}"), Some(admin), None, &[]).status,
        409
    );
    assert_eq!(request(a, "DELETE", "/v1/tokens/nope", Some(admin), None, &[]).status, 404);
    let listed = request(a, "GET", "/v1/tokens", Some(admin), None, &[]).json();
    let entry = listed.as_array().unwrap().iter().find(|t| t["id"] == id).cloned().unwrap();
    assert!(entry["revoked_at"].is_i64(), "{entry}");
}

/// The run page and the API follow a run's transcript line by line while it runs (an SSE
/// stream of `line` events, numbered for resuming, and `end` once the run is over); the page
/// shows the lines it has in the colours `tack playbook` prints them in.
#[test]
fn a_runs_transcript_is_followed_as_it_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    transcript_followed(&db, dir.path());
}

#[test]
fn a_runs_transcript_is_followed_as_it_is_printed_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    transcript_followed(&pg.url, dir.path());
}

fn transcript_followed(db: &str, dir: &Path) {
    let project = project(dir);
    let s = start_server(db, dir, "1", true);
    incarnation(&s, "slow", &project, "slow.yml");
    let id = queue(&s, &s.admin, "slow", 1).remove(0);
    wait_status(&s, &s.admin, "slow", &id, "running");
    let base = format!("/v1/incarnations/slow/runs/{id}");
    // Opened while the run is running: the stream stays open until the run is over.
    let addr = s.addr.clone();
    let (path, admin) = (format!("{base}/transcript"), s.admin.clone());
    let reader = std::thread::spawn(move || {
        request(&addr, "GET", &path, Some(&admin), None, &[("Accept", "text/event-stream")])
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!reader.is_finished(), "the stream ended while its run was running");
    let page = request(
        &s.addr,
        "GET",
        &format!("/ui/runs/{id}"),
        None,
        None,
        &[("Cookie", &sign_in(&s.addr, &s.admin))],
    );
    let html = String::from_utf8(page.body).unwrap();
    assert!(
        html.contains("<pre id=transcript><span>\n</span><span class=t-banner>PLAY [soul-1]"),
        "{html}"
    );
    assert!(
        html.contains("/transcript?after="),
        "the page follows the lines after its own: {html}"
    );
    let cancel = request(&s.addr, "POST", &format!("{base}/cancel"), Some(&s.admin), None, &[]);
    assert_eq!(cancel.status, 202);
    let streamed = reader.join().unwrap();
    assert_eq!(streamed.status, 200);
    assert!(streamed.head.contains("text/event-stream"), "{}", streamed.head);
    let body = String::from_utf8(streamed.body).unwrap();
    assert!(body.starts_with("id: 1\nevent: line\ndata: \"\"\n"), "{body}");
    assert!(body.contains("id: 2\nevent: line\ndata: \"PLAY [soul-1] *"), "{body}");
    assert!(body.trim_end().ends_with("event: end\ndata: \"cancelled\""), "{body}");
    // Resumed after the first two lines: the rest, then the end at once (the run is over).
    let resumed = request(
        &s.addr,
        "GET",
        &format!("{base}/transcript?after=2"),
        Some(&s.admin),
        None,
        &[("Accept", "text/event-stream")],
    );
    let rest = String::from_utf8(resumed.body).unwrap();
    assert!(!rest.contains("id: 2\n") && rest.contains("id: 3\n"), "{rest}");
    let r =
        request(&s.addr, "GET", &format!("{base}/transcript?after=x"), Some(&s.admin), None, &[]);
    assert_eq!(r.status, 400);
    // The plain text is every line, as before.
    let text = request(&s.addr, "GET", &format!("{base}/transcript"), Some(&s.admin), None, &[]);
    assert!(String::from_utf8(text.body).unwrap().starts_with("\nPLAY [soul-1]"));
}
