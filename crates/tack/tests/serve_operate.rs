//! Operating `tack serve` (issue 26 item 3), on SQLite and on a real PostgreSQL: a run started
//! through the API with its own limit, tags, extra vars and mode; the same from the page's
//! form; cancelling from the page; incarnations made, changed and deleted from the page; and
//! every such change in the audit log (API and page, admins only). Every page write is
//! refused without the session's form token (a cookie alone, another session's token), and
//! below the role it needs, changing nothing.

use std::path::Path;

use serde_json::{Value, json};

#[path = "common/procs.rs"]
mod procs;
#[path = "common/server.rs"]
mod server;
use server::*;

#[path = "../../tack-server/tests/support/postgres.rs"]
mod postgres;

#[test]
fn operating_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    operate(&db, dir.path());
}

#[test]
fn operating_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let pg = postgres::Postgres::start(dir.path());
    operate(&pg.url, dir.path());
}

fn runs(a: &str, token: &str) -> Vec<Value> {
    request(a, "GET", "/v1/runs", Some(token), None, &[]).json().as_array().unwrap().clone()
}

/// The hosts run `id` of `name` has a result for, at its first task.
fn hosts_of(a: &str, token: &str, name: &str, id: &str) -> Vec<String> {
    let tasks = request(
        a,
        "GET",
        &format!("/v1/incarnations/{name}/runs/{id}/tasks"),
        Some(token),
        None,
        &[],
    )
    .json();
    tasks["tasks"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap().to_string())
        .collect()
}

fn body_text(r: &Reply) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

fn location(r: &Reply) -> String {
    r.head.lines().find_map(|l| l.strip_prefix("location: ")).unwrap_or("").trim().to_string()
}

fn operate(db: &str, dir: &Path) {
    let project = project(dir);
    let s = start_server(db, dir, "1", true);
    let a = s.addr.as_str();
    let admin = s.admin.clone();
    let viewer = token(db, "viewer", "watcher");
    let operator = token(db, "operator", "deployer");
    incarnation(&s, "web", &project, "site.yml");
    incarnation(&s, "slow", &project, "slow.yml");

    // --- The API: a run with its own limit, mode and extra vars. ---
    let ask = json!({"limit": "soul-1", "mode": "check", "tags": "all",
                     "extra_vars": {"release": "release-canary-7"}});
    let r = request(
        a,
        "POST",
        "/v1/incarnations/web/runs",
        Some(&operator),
        Some(&ask.to_string()),
        &[],
    );
    assert_eq!(r.status, 202, "{}", body_text(&r));
    let id = r.json()["apply_id"].as_str().unwrap().to_string();
    let run = wait_final(&s, &viewer, "web", &id);
    assert_eq!(
        (run["status"].as_str(), run["mode"].as_str()),
        (Some("success"), Some("check")),
        "{run}"
    );
    assert_eq!(hosts_of(a, &viewer, "web", &id), ["soul-1"]);
    // In check mode nothing was written.
    assert!(!project.join("marker-soul-1").exists());
    // The incarnation itself is unchanged.
    let spec = request(a, "GET", "/v1/incarnations/web", Some(&admin), None, &[]).json();
    assert!(spec.get("limit").is_none() && spec.get("extra_vars").is_none(), "{spec}");

    // Bad requests are refused and queue nothing.
    let before = runs(a, &admin).len();
    for (body, want) in [
        (r#"{"playbook": "other.yml"}"#, "unknown field"),
        (r#"{"mode": "destroy"}"#, "unknown variant"),
        (r#"{"limit": "@../hosts"}"#, "limit"),
        (r#"{"extra_vars": [1]}"#, "invalid type"),
        ("{\"limit\": ", "the request body"),
    ] {
        let r = request(a, "POST", "/v1/incarnations/web/runs", Some(&operator), Some(body), &[]);
        assert_eq!(r.status, 400, "{body}: {}", body_text(&r));
        let error = r.json()["error"].as_str().unwrap().to_string();
        assert!(error.contains(want), "{body}: {error}");
    }
    assert_eq!(
        request(a, "POST", "/v1/incarnations/web/runs", Some(&viewer), Some("{}"), &[]).status,
        403
    );
    assert_eq!(runs(a, &admin).len(), before, "a refused request queued a run");

    // --- The page: sessions, and what each role is offered. ---
    let viewer_cookie = sign_in(a, &viewer);
    let operator_cookie = sign_in(a, &operator);
    let admin_cookie = sign_in(a, &admin);
    let page = |cookie: &str, path: &str| {
        let r = request(a, "GET", path, None, None, &[("Cookie", cookie)]);
        assert_eq!(r.status, 200, "{path}: {}", body_text(&r));
        body_text(&r)
    };
    let index = page(&viewer_cookie, "/ui/");
    assert!(index.contains("<a href='/ui/incarnations/web'>web</a>"), "{index}");
    assert!(!index.contains("new-incarnation") && !index.contains("/ui/audit"), "{index}");
    let seen = page(&viewer_cookie, "/ui/incarnations/web");
    assert!(
        seen.contains(&id) && !seen.contains("id=start") && !seen.contains("id=edit"),
        "{seen}"
    );
    let seen = page(&operator_cookie, "/ui/incarnations/web");
    assert!(seen.contains("id=start") && !seen.contains("id=edit"), "{seen}");
    let seen = page(&admin_cookie, "/ui/incarnations/web");
    assert!(seen.contains("id=start") && seen.contains("id=edit") && seen.contains("id=delete"));
    assert!(page(&admin_cookie, "/ui/").contains("/ui/audit"));

    // A write with the cookie alone, another session's token, or a wrong one: refused.
    let op_form = form_token(a, &operator_cookie, "/ui/incarnations/web");
    let viewer_form = form_token(a, &viewer_cookie, "/ui/");
    assert_ne!(op_form, viewer_form);
    let start = "/ui/incarnations/web/runs";
    for body in [
        "limit=soul-2".to_string(),
        format!("limit=soul-2&form_token={viewer_form}"),
        "limit=soul-2&form_token=00".to_string(),
    ] {
        let r = post_form(a, start, &operator_cookie, &body);
        assert_eq!(r.status, 403, "{body}: {}", body_text(&r));
    }
    // A viewer posting the form anyway, with its own session's token: refused by role.
    let r = post_form(a, start, &viewer_cookie, &format!("form_token={viewer_form}"));
    assert_eq!(r.status, 403);
    assert!(body_text(&r).contains("operator"), "{}", body_text(&r));
    // Without a session at all.
    let r = post_form(a, start, "tack_session=nope", &format!("form_token={op_form}"));
    assert_eq!(r.status, 401);
    // Bad input from the form, as the API refuses it.
    for (body, want) in [
        (format!("form_token={op_form}&extra_vars=%5B1%5D"), "JSON object"),
        (format!("form_token={op_form}&mode=destroy"), "no mode is named"),
        (format!("form_token={op_form}&limit=%40..%2Fhosts"), "limit"),
    ] {
        let r = post_form(a, start, &operator_cookie, &body);
        assert_eq!(r.status, 400, "{body}");
        assert!(body_text(&r).contains(want), "{body}: {}", body_text(&r));
    }
    assert_eq!(runs(a, &admin).len(), before, "a refused form queued a run");

    // The operator starts a run from the form: the limit and mode it gives.
    let r = post_form(
        a,
        start,
        &operator_cookie,
        &format!(
            "form_token={op_form}&limit=soul-2&tags=&mode=plan&extra_vars=%7B%22release%22%3A+%22r2%22%7D"
        ),
    );
    assert_eq!(r.status, 303, "{}", body_text(&r));
    let page_run = location(&r).strip_prefix("/ui/runs/").expect("the run's page").to_string();
    let run = wait_final(&s, &viewer, "web", &page_run);
    assert_eq!(
        (run["mode"].as_str(), run["started_by"].as_str()),
        (Some("plan"), Some("deployer"))
    );
    assert_eq!(hosts_of(a, &viewer, "web", &page_run), ["soul-2"]);

    // Cancelling from the run's page: the button is the operator's, not the viewer's.
    let slow = queue(&s, &operator, "slow", 1).remove(0);
    wait_status(&s, &admin, "slow", &slow, "running");
    let run_path = format!("/ui/runs/{slow}");
    assert!(!page(&viewer_cookie, &run_path).contains("id=cancel"));
    assert!(page(&operator_cookie, &run_path).contains("id=cancel"));
    let cancel = format!("/ui/runs/{slow}/cancel");
    assert_eq!(post_form(a, &cancel, &operator_cookie, "").status, 403);
    assert_eq!(
        post_form(a, &cancel, &viewer_cookie, &format!("form_token={viewer_form}")).status,
        403
    );
    let r = post_form(a, &cancel, &operator_cookie, &format!("form_token={op_form}"));
    assert_eq!((r.status, location(&r)), (303, run_path.clone()), "{}", body_text(&r));
    assert_eq!(wait_final(&s, &admin, "slow", &slow)["status"], "cancelled");
    let r = post_form(a, &cancel, &operator_cookie, &format!("form_token={op_form}"));
    assert_eq!(r.status, 409, "an ended run: {}", body_text(&r));

    // --- Incarnations from the page: admins only. ---
    let admin_form = form_token(a, &admin_cookie, "/ui/new-incarnation");
    assert_eq!(
        request(a, "GET", "/ui/new-incarnation", None, None, &[("Cookie", &operator_cookie)])
            .status,
        403
    );
    let new = |token: &str, name: &str, playbook: &str| {
        format!(
            "form_token={token}&name={name}&project_dir={}&playbook={playbook}&inventory=hosts\
             &limit=&tags=&vault_password_file=&mode=check&extra_vars=%7B%22level%22%3A+%22secret-level-9%22%7D",
            project.display()
        )
    };
    let r = post_form(a, "/ui/incarnations", &operator_cookie, &new(&op_form, "db", "site.yml"));
    assert_eq!(r.status, 403);
    let r = post_form(a, "/ui/incarnations", &admin_cookie, &new(&admin_form, "db", "../site.yml"));
    assert_eq!(r.status, 400);
    assert!(
        body_text(&r).contains("must be a relative path inside project_dir"),
        "{}",
        body_text(&r)
    );
    let r = post_form(a, "/ui/incarnations", &admin_cookie, &new(&admin_form, "db", "site.yml"));
    assert_eq!(
        (r.status, location(&r)),
        (303, "/ui/incarnations/db".to_string()),
        "{}",
        body_text(&r)
    );
    let made = request(a, "GET", "/v1/incarnations/db", Some(&admin), None, &[]).json();
    assert_eq!(made["mode"], "check");
    assert_eq!(made["extra_vars"], json!({"level": "secret-level-9"}));
    let r = post_form(a, "/ui/incarnations", &admin_cookie, &new(&admin_form, "db", "site.yml"));
    assert_eq!(r.status, 409, "a name taken");
    // The edit form shows the spec and saves a change.
    let edit = page(&admin_cookie, "/ui/incarnations/db");
    assert!(edit.contains("secret-level-9"), "an admin edits the values");
    let viewer_view = page(&viewer_cookie, "/ui/incarnations/db");
    assert!(
        !viewer_view.contains("secret-level-9") && viewer_view.contains("level"),
        "{viewer_view}"
    );
    let r = post_form(a, "/ui/incarnations/db", &admin_cookie, &new(&admin_form, "db", "slow.yml"));
    assert_eq!(r.status, 303, "{}", body_text(&r));
    let changed = request(a, "GET", "/v1/incarnations/db", Some(&admin), None, &[]).json();
    assert_eq!(changed["playbook"], "slow.yml");
    let r =
        post_form(a, "/ui/incarnations/db", &admin_cookie, &new(&admin_form, "other", "slow.yml"));
    assert_eq!(r.status, 400, "an incarnation keeps its name");
    let r = post_form(
        a,
        "/ui/incarnations/db/delete",
        &operator_cookie,
        &format!("form_token={op_form}"),
    );
    assert_eq!(r.status, 403);
    let r = post_form(a, "/ui/incarnations/db/delete", &admin_cookie, "");
    assert_eq!(r.status, 403);
    let r = post_form(
        a,
        "/ui/incarnations/db/delete",
        &admin_cookie,
        &format!("form_token={admin_form}"),
    );
    assert_eq!((r.status, location(&r)), (303, "/ui/".to_string()));
    assert_eq!(request(a, "GET", "/v1/incarnations/db", Some(&admin), None, &[]).status, 404);

    // --- The audit log: every change, who and what, never a value of the extra vars. ---
    assert_eq!(request(a, "GET", "/v1/audit", Some(&operator), None, &[]).status, 403);
    assert_eq!(request(a, "GET", "/v1/audit?limit=0", Some(&admin), None, &[]).status, 400);
    let log = request(a, "GET", "/v1/audit", Some(&admin), None, &[]).json();
    let entries = log.as_array().unwrap();
    let seen: Vec<(String, String, String)> = entries
        .iter()
        .rev()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            (s("actor"), s("action"), s("target"))
        })
        .collect();
    let want: Vec<(String, String, String)> = [
        ("admin", "incarnation.create", "web"),
        ("admin", "incarnation.create", "slow"),
        ("deployer", "run.start", "web"),
        ("deployer", "run.start", "web"),
        ("deployer", "run.start", "slow"),
        ("deployer", "run.cancel", "slow"),
        ("admin", "incarnation.create", "db"),
        ("admin", "incarnation.update", "db"),
        ("admin", "incarnation.delete", "db"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(seen, want);
    let first_start = &entries[entries.len() - 3];
    assert_eq!(first_start["detail"]["apply_id"], json!(id));
    assert_eq!(first_start["detail"]["extra_vars"], json!(["release"]));
    assert_eq!(first_start["detail"]["limit"], json!("soul-1"));
    let text = log.to_string();
    assert!(!text.contains("release-canary-7") && !text.contains("secret-level-9"), "{text}");
    let older = request(
        a,
        "GET",
        &format!("/v1/audit?limit=2&before={}", entries[1]["seq"]),
        Some(&admin),
        None,
        &[],
    )
    .json();
    assert_eq!(older.as_array().unwrap().len(), 2);
    assert_eq!(older[0]["seq"], entries[2]["seq"]);
    let audit = page(&admin_cookie, "/ui/audit");
    assert!(
        audit.contains("<table id=audit>")
            && audit.contains("run.cancel")
            && audit.contains("deployer")
    );
    assert!(!audit.contains("secret-level-9"));
    let r = request(a, "GET", "/ui/audit", None, None, &[("Cookie", &operator_cookie)]);
    assert_eq!(r.status, 403);

    // --- Sessions end: signing out, and revoking the token. ---
    let r = post_form(a, "/ui/logout", &operator_cookie, "form_token=00");
    assert_eq!(r.status, 403, "another site cannot sign a browser out");
    let r = post_form(a, "/ui/logout", &operator_cookie, &format!("form_token={op_form}"));
    assert_eq!(r.status, 303);
    let r = request(a, "GET", "/ui/", None, None, &[("Cookie", &operator_cookie)]);
    assert_eq!((r.status, location(&r)), (303, "/ui/login".to_string()));
    assert_eq!(
        request(a, "GET", "/v1/runs", None, None, &[("Cookie", &operator_cookie)]).status,
        401
    );
    let watcher = request(a, "GET", "/v1/tokens", Some(&admin), None, &[]).json();
    let watcher_id =
        watcher.as_array().unwrap().iter().find(|t| t["name"] == "watcher").unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
    let r = request(a, "DELETE", &format!("/v1/tokens/{watcher_id}"), Some(&admin), None, &[]);
    assert_eq!(r.status, 204);
    let r = request(a, "GET", "/ui/", None, None, &[("Cookie", &viewer_cookie)]);
    assert_eq!(r.status, 303, "a revoked token's session ended");
    let last = request(a, "GET", "/v1/audit?limit=1", Some(&admin), None, &[]).json();
    assert_eq!(
        (last[0]["action"].as_str(), last[0]["target"].as_str()),
        (Some("token.revoke"), Some(watcher_id.as_str()))
    );
    every_documented_route_answers(a, &admin);
    assert_clean_log(&s);
}

/// Each route and method the OpenAPI document names is served (asked of names that do not
/// exist, so nothing changes): none answers as a route the server lacks.
fn every_documented_route_answers(a: &str, admin: &str) {
    let doc = request(a, "GET", "/v1/openapi.json", None, None, &[]).json();
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.contains_key("/v1/audit"));
    for (path, item) in paths {
        let path =
            path.replace("{name}", "nope-x").replace("{apply_id}", "nope").replace("{id}", "nope");
        for method in ["get", "post", "put", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let r = request(a, &method.to_uppercase(), &path, Some(admin), None, &[]);
            let text = body_text(&r);
            assert!(!text.contains("no such route"), "{method} {path}: {text}");
        }
    }
}

/// Nothing secret the test gave reached the server's log.
fn assert_clean_log(s: &Server) {
    let log = s.log.lock().unwrap();
    assert!(!log.contains("release-canary-7") && !log.contains("secret-level-9"), "{log}");
}
