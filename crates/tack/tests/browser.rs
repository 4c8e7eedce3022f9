//! The web page in a real headless Chromium, driven through WebDriver (chromedriver), spoken
//! by hand as the API tests speak HTTP: sign in with a token, open a finished run, choose a
//! task, see the `<per-host>` chip and a row per host; open a running run and watch its
//! transcript arrive. The page is saved as a screenshot in
//! `$CARGO_TARGET_TMPDIR/browser/run-detail.png`, the test's artifact.
//!
//! The test command installs Debian's `chromium` and `chromium-driver` (scripts/test.sh).

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

#[path = "common/procs.rs"]
mod procs;
#[path = "common/server.rs"]
mod server;
use server::*;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Driver {
    child: Child,
    addr: String,
    session: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let path = format!("/session/{}", self.session);
        let _ = std::panic::catch_unwind(|| request(&self.addr, "DELETE", &path, None, None, &[]));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    fn start(profile: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian's chromium-driver, installed by scripts/test.sh)");
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "chromedriver never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        // The flags a closed network needs: no background connections, no first-run setup.
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,1000",
        ];
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}
        }}});
        let mut driver = Driver { child, addr, session: String::new() };
        let r = driver.call("POST", "/session", Some(caps));
        driver.session = r["sessionId"].as_str().unwrap_or_else(|| panic!("{r}")).to_string();
        driver
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string());
        let r = request(&self.addr, method, path, None, body.as_deref(), &[]);
        let value = r.json();
        assert_eq!(r.status, 200, "{method} {path}: {value}");
        value["value"].clone()
    }

    fn session(&self, method: &str, rest: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{rest}", self.session), body)
    }

    fn go(&self, url: &str) {
        self.session("POST", "/url", Some(json!({"url": url})));
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        let found =
            self.session("POST", "/elements", Some(json!({"using": "css selector", "value": css})));
        found.as_array().unwrap().iter().map(|e| e[ELEMENT].as_str().unwrap().to_string()).collect()
    }

    /// The first element `css` selects, once the page has one: a click on a form's button
    /// may return before the page it loads is there (chromedriver does not always wait for
    /// the navigation it started).
    fn find(&self, css: &str) -> String {
        for _ in 0..100 {
            if let Some(found) = self.find_all(css).into_iter().next() {
                return found;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("no {css} on the page")
    }

    /// Signs in on the page at `base` with `token`, in English.
    fn sign_in(&self, base: &str, token: &str) {
        self.go(&format!("{base}/ui/login?lang=en"));
        let input = self.find("input[name=token]");
        self.session("POST", &format!("/element/{input}/value"), Some(json!({"text": token})));
        let button = self.find("button[type=submit]");
        self.session("POST", &format!("/element/{button}/click"), Some(json!({})));
    }

    fn text(&self, element: &str) -> String {
        self.session("GET", &format!("/element/{element}/text"), None).as_str().unwrap().into()
    }
}

#[test]
fn a_browser_signs_in_and_sees_the_marker_and_each_host() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let project = project(dir.path());
    let s = start_server(&db, dir.path(), "1", true);
    incarnation(&s, "web", &project, "site.yml");
    let id = queue(&s, &s.admin, "web", 1).remove(0);
    assert_eq!(wait_final(&s, &s.admin, "web", &id)["status"], "success");
    let viewer = token(&db, "viewer", "browser");

    let driver = Driver::start(&dir.path().join("profile"));
    let base = format!("http://{}", s.addr);
    driver.sign_in(&base, &viewer);
    // Signed in: the run list names the run.
    let runs = driver.find("#runs");
    assert!(driver.text(&runs).contains(&id), "{}", driver.text(&runs));
    driver.go(&format!("{base}/ui/runs/{id}"));
    let link = driver.find("#tasks a[href='?task=1#task']");
    driver.session("POST", &format!("/element/{link}/click"), Some(json!({})));
    let chip = driver.find("#params .chip.per-host");
    assert_eq!(driver.text(&chip), "differs per host");
    let rows: Vec<String> =
        driver.find_all("#results tr.host-row").iter().map(|r| driver.text(r)).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].starts_with("soul-1") && rows[1].starts_with("soul-2"), "{rows:?}");
    // Where the plan shows <per-host>, each host's row shows what that host received.
    let inputs: Vec<String> =
        driver.find_all("#results tr.host-row td.input").iter().map(|c| driver.text(c)).collect();
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    for (host, input) in ["soul-1", "soul-2"].iter().zip(&inputs) {
        assert!(input.contains(&format!("marker-{host}")), "{host}: {input}");
    }

    let shot = driver.session("GET", "/screenshot", None);
    let png = base64::engine::general_purpose::STANDARD.decode(shot.as_str().unwrap()).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("run-detail.png"), png).unwrap();
}

#[test]
fn a_browser_watches_a_runs_transcript_arrive() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let project = project(dir.path());
    std::fs::write(
        project.join("live.yml"),
        "- hosts: soul-1\n  gather_facts: false\n  tasks:\n    - command: sleep 2\n    \
         - debug:\n        msg: arrived-live\n    - command: sleep 3\n",
    )
    .unwrap();
    let s = start_server(&db, dir.path(), "1", true);
    incarnation(&s, "live", &project, "live.yml");
    let viewer = token(&db, "viewer", "watcher");
    let driver = Driver::start(&dir.path().join("profile"));
    let base = format!("http://{}", s.addr);
    driver.sign_in(&base, &viewer);
    // Signed in (no run yet: the page offers to sign out).
    driver.find("form[action='/ui/logout']");

    let id = queue(&s, &s.admin, "live", 1).remove(0);
    wait_status(&s, &s.admin, "live", &id, "running");
    driver.go(&format!("{base}/ui/runs/{id}"));
    let transcript = driver.find("#transcript");
    // A mark on this page: a reload would lose it.
    driver.session(
        "POST",
        "/execute/sync",
        Some(json!({"script": "window.tackMark = 1", "args": []})),
    );
    assert!(!driver.text(&transcript).contains("arrived-live"), "printed before the page opened");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !driver.text(&transcript).contains("arrived-live") {
        assert!(Instant::now() < deadline, "the line never arrived: {}", driver.text(&transcript));
        std::thread::sleep(Duration::from_millis(100));
    }
    let mark = driver.session(
        "POST",
        "/execute/sync",
        Some(json!({"script": "return window.tackMark", "args": []})),
    );
    assert_eq!(mark, json!(1), "the page was reloaded, not followed");
    let ok = driver.find("#transcript span.t-ok");
    assert!(driver.text(&ok).starts_with("ok: [soul-1]"), "{}", driver.text(&ok));
    assert_eq!(wait_final(&s, &s.admin, "live", &id)["status"], "success");
}

impl Driver {
    fn click(&self, css: &str) {
        let element = self.find(css);
        self.session("POST", &format!("/element/{element}/click"), Some(json!({})));
    }

    /// The element's text, or `None` when it went stale: the page reloaded between finding
    /// it and reading it (a live run's page refreshes itself).
    fn text_unless_stale(&self, element: &str) -> Option<String> {
        let path = format!("/session/{}/element/{element}/text", self.session);
        let r = request(&self.addr, "GET", &path, None, None, &[]);
        let value = r.json();
        if r.status != 200 && value["value"]["error"] == "stale element reference" {
            return None;
        }
        assert_eq!(r.status, 200, "GET {path}: {value}");
        Some(value["value"].as_str().unwrap().into())
    }

    /// The text of the first element `css` selects, found anew while the page reloads under
    /// the reading.
    fn text_of(&self, css: &str) -> String {
        for _ in 0..100 {
            if let Some(text) = self.text_unless_stale(&self.find(css)) {
                return text;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{css} kept going stale")
    }

    /// Waits until the element `css` selects (found anew each time: the page may reload)
    /// holds `text`.
    fn wait_text(&self, css: &str, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found =
                self.find_all(css).into_iter().next().and_then(|e| self.text_unless_stale(&e));
            if let Some(found) = found.filter(|t| t.contains(text)) {
                return found;
            }
            assert!(Instant::now() < deadline, "{css} never held {text:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn an_operator_starts_and_cancels_runs_from_the_page_and_a_viewer_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("runs.db").display());
    let project = project(dir.path());
    // Seed 000's example: one path, each host its own line (`copy`'s `content` would be
    // masked: ansible marks it no_log).
    std::fs::write(
        project.join("demo.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: write the marker\n      \
         lineinfile:\n        path: \"{{ playbook_dir }}/demo-marker\"\n        line: \"{{ \
         inventory_hostname }}\"\n        create: true\n",
    )
    .unwrap();
    let s = start_server(&db, dir.path(), "2", true);
    incarnation(&s, "demo", &project, "demo.yml");
    incarnation(&s, "slow", &project, "slow.yml");
    let operator = token(&db, "operator", "deployer");
    let viewer = token(&db, "viewer", "watcher");
    let driver = Driver::start(&dir.path().join("profile"));
    let base = format!("http://{}", s.addr);

    // The operator starts the example from its incarnation's page and lands on the run.
    driver.sign_in(&base, &operator);
    driver.find("form[action='/ui/logout']");
    driver.go(&format!("{base}/ui/incarnations/demo"));
    driver.click("form#start button");
    let id = driver.text_of("#apply-id");
    driver.wait_text("#transcript", "TASK [write the marker]");
    assert_eq!(wait_final(&s, &s.admin, "demo", &id)["status"], "success");
    assert_eq!(
        driver.wait_text("#transcript", "PLAY RECAP").matches("changed: [soul-").count()
            + driver.text_of("#transcript").matches("ok: [soul-").count(),
        2
    );
    // The plan shows <per-host> for the line; each host's row, its own.
    driver.click("#tasks a[href='?task=1#task']");
    let chip = driver.find("#params .chip.per-host");
    assert_eq!(driver.text(&chip), "differs per host");
    let inputs: Vec<String> =
        driver.find_all("#results tr.host-row td.input").iter().map(|c| driver.text(c)).collect();
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    for (host, input) in ["soul-1", "soul-2"].iter().zip(&inputs) {
        assert!(input.contains(&format!("line\n{host}")), "{host}: {input:?}");
    }

    // A long run, cancelled from its page.
    driver.go(&format!("{base}/ui/incarnations/slow"));
    driver.click("form#start button");
    let slow = driver.text_of("#apply-id");
    driver.click("form#cancel button");
    assert_eq!(wait_final(&s, &s.admin, "slow", &slow)["status"], "cancelled");
    // The page reloads once the run has ended, showing how it ended.
    driver.wait_text("h2 .badge", "cancelled");

    // A viewer is offered no start button, and posting the form anyway is refused.
    driver.click("form[action='/ui/logout'] button");
    driver.find("input[name=token]");
    driver.sign_in(&base, &viewer);
    driver.find("form[action='/ui/logout']");
    driver.go(&format!("{base}/ui/incarnations/demo"));
    driver.find("#spec");
    assert!(driver.find_all("form#start").is_empty(), "a viewer is offered the start form");
    let before = request(&s.addr, "GET", "/v1/runs", Some(&s.admin), None, &[]).json();
    let status = driver.session(
        "POST",
        "/execute/async",
        Some(json!({"script": "const done = arguments[0]; \
            const token = document.querySelector('input[name=form_token]').value; \
            fetch('/ui/incarnations/demo/runs', {method: 'POST', body: \
            new URLSearchParams({form_token: token})}).then(r => done(r.status));", "args": []})),
    );
    assert_eq!(status, json!(403));
    let after = request(&s.addr, "GET", "/v1/runs", Some(&s.admin), None, &[]).json();
    assert_eq!(before, after, "the viewer's post queued a run");
}
