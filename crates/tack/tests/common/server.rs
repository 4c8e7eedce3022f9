//! What the tests of `tack serve` share: a server started on a free loopback port and stopped
//! when dropped, HTTP spoken by hand over a `TcpStream` (HTTP/1.1, `Connection: close`: the
//! tests need status, headers, body and a chunked event stream, nothing a client library
//! would add), tokens made with `tack token`, and a project to run.
// Each test binary that includes this uses some of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub(crate) struct Server {
    /// `None` for a server a test runs in its own process.
    pub child: Option<Child>,
    pub addr: String,
    pub admin: String,
    /// What the server wrote to stderr after its banner (its log).
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Server {
    /// A server the test serves in its own process, at `addr`.
    pub(crate) fn in_process(addr: &str, admin: &str) -> Server {
        Server {
            child: None,
            addr: addr.to_string(),
            admin: admin.to_string(),
            log: Default::default(),
        }
    }
}

/// A server on `db`; `first` when this start makes the store's first token (printed once).
pub(crate) fn start_server(db: &str, dir: &Path, max_runs: &str, first: bool) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["serve", "--db", db, "--listen", "127.0.0.1:0", "--max-runs", max_runs])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tack serve starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut admin = String::new();
    if first {
        let mut banner = String::new();
        stdout.read_line(&mut banner).unwrap();
        assert!(banner.starts_with("The first admin token"), "{banner}");
        stdout.read_line(&mut admin).unwrap();
    }
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("tack serve: listening on http://")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    // Keep reading stderr so the server never blocks on a full pipe.
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let kept = log.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
            kept.lock().unwrap().push_str(&line);
            line.clear();
        }
    });
    Server { child: Some(child), addr, admin: admin.trim().to_string(), log }
}

pub(crate) struct Reply {
    pub status: u16,
    /// The status line and headers, lowercased.
    pub head: String,
    pub body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

pub(crate) fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&data[..end]).unwrap().trim(), 16)
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
    out
}

pub(crate) fn request(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(token) = token {
        req.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    let body = body.unwrap_or("");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
        req.push_str("Content-Type: application/json\r\n");
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(req.as_bytes()).unwrap();
    // Read to the end of the reply, not of the connection: a peer may keep it open.
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    let (head, body_start) = loop {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "the connection closed before the headers ended");
        raw.extend_from_slice(&buf[..n]);
        if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break (String::from_utf8_lossy(&raw[..split]).to_lowercase(), split + 4);
        }
    };
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let chunked = head.contains("transfer-encoding: chunked");
    loop {
        let have = raw.len() - body_start;
        let done = match length {
            Some(len) => have >= len,
            None if chunked => raw[body_start..].ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut body = raw[body_start..].to_vec();
    if chunked {
        body = dechunk(&body);
    }
    Reply { status, head, body }
}

pub(crate) fn token(db: &str, role: &str, name: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["token", "create", "--role", role, "--name", name, "--db", db])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    // The token, alone.
    assert_eq!(text.lines().count(), 1, "{text}");
    text.trim().to_string()
}

pub(crate) fn project(dir: &Path) -> PathBuf {
    let p = dir.join("project");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(
        p.join("hosts"),
        "soul-1 ansible_connection=local\nsoul-2 ansible_connection=local\n",
    )
    .unwrap();
    std::fs::write(
        p.join("site.yml"),
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: write marker\n      \
         lineinfile:\n        path: \"{{ playbook_dir }}/marker-{{ inventory_hostname }}\"\n        \
         line: \"{{ inventory_hostname }}\"\n        create: true\n    - name: hostname\n      \
         command: echo {{ inventory_hostname }}\n",
    )
    .unwrap();
    std::fs::write(
        p.join("slow.yml"),
        // The shell names the project, so a test can tell whether this run's processes
        // outlived it (`lingering`).
        "- hosts: soul-1\n  gather_facts: false\n  tasks:\n    \
         - command: sh -c 'sleep 30; true' {{ playbook_dir }}/slow\n",
    )
    .unwrap();
    p
}

/// The processes of the slow playbook's shell in `project` still running, after giving a
/// stopped run's processes a moment to go.
pub(crate) fn lingering(project: &str) -> Vec<String> {
    crate::procs::lingering(&format!("{project}/slow"))
}

/// Polls the run until `done` holds of it (within `secs`); the run as last read.
fn wait_for(
    s: &Server,
    token: &str,
    name: &str,
    id: &str,
    secs: u64,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let path = format!("/v1/incarnations/{name}/runs/{id}");
    loop {
        let run = request(&s.addr, "GET", &path, Some(token), None, &[]).json();
        if done(&run) {
            return run;
        }
        assert!(Instant::now() < deadline, "the run never got there: {run}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The run once it has ended.
pub(crate) fn wait_final(s: &Server, token: &str, name: &str, id: &str) -> Value {
    wait_for(s, token, name, id, 60, |run| {
        !["queued", "running"].contains(&run["status"].as_str().unwrap_or(""))
    })
}

pub(crate) fn wait_status(s: &Server, token: &str, name: &str, id: &str, want: &str) {
    wait_for(s, token, name, id, 30, |run| run["status"] == want);
}

/// Makes the incarnation `name`: `playbook` of `project` on its `hosts`.
pub(crate) fn incarnation(s: &Server, name: &str, project: &Path, playbook: &str) {
    let spec = serde_json::json!({
        "name": name, "project_dir": project, "playbook": playbook, "inventory": "hosts"
    });
    let r =
        request(&s.addr, "POST", "/v1/incarnations", Some(&s.admin), Some(&spec.to_string()), &[]);
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

/// Queues the incarnation `name` `n` times; the apply ids.
pub(crate) fn queue(s: &Server, token: &str, name: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let r = request(
                &s.addr,
                "POST",
                &format!("/v1/incarnations/{name}/runs"),
                Some(token),
                None,
                &[],
            );
            assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
            r.json()["apply_id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// The value a `Set-Cookie` of the reply gives the cookie `name`, as `name=value`.
pub(crate) fn set_cookie(r: &Reply, name: &str) -> Option<String> {
    r.head
        .lines()
        .find_map(|l| l.strip_prefix(&format!("set-cookie: {name}=")))
        .and_then(|v| v.split(';').next())
        .map(|v| format!("{name}={v}"))
}

/// Signs in on the page with `token` as a browser does (the sign-in form and its cookie);
/// the session's cookie, as a `Cookie` header's value.
pub(crate) fn sign_in(addr: &str, token: &str) -> String {
    let login = request(addr, "GET", "/ui/login", None, None, &[]);
    let paired = set_cookie(&login, "tack_login").expect("the sign-in form's cookie");
    let nonce = paired.trim_start_matches("tack_login=").to_string();
    let form = [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", paired.as_str())];
    let r = request(
        addr,
        "POST",
        "/ui/login",
        None,
        Some(&format!("token={token}&form={nonce}")),
        &form,
    );
    assert_eq!(r.status, 303, "{}", r.head);
    let session = set_cookie(&r, "tack_session").expect("a session cookie");
    assert!(!session.contains(token), "the cookie holds the token itself");
    session
}

/// The form token the page at `path` gives the session `cookie`.
pub(crate) fn form_token(addr: &str, cookie: &str, path: &str) -> String {
    let page = request(addr, "GET", path, None, None, &[("Cookie", cookie)]);
    assert_eq!(page.status, 200, "{path}");
    let html = String::from_utf8(page.body).unwrap();
    let at = html.find("name=form_token value=").unwrap_or_else(|| panic!("no form: {html}"));
    html[at + "name=form_token value=".len()..].split('>').next().unwrap().to_string()
}

/// Posts a form (`body` url-encoded) from the browser holding `cookie`.
pub(crate) fn post_form(addr: &str, path: &str, cookie: &str, body: &str) -> Reply {
    let headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)];
    request(addr, "POST", path, None, Some(body), &headers)
}
