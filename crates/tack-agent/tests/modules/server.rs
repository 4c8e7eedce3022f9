//! The servers module cases talk to on 127.0.0.1, answering byte for byte as the recorder's
//! (`scripts/record-module-results.py`, class `Server`): a bare listener, a closed port, a
//! banner, and a small HTTP/1.1 server with fixed routes and an echo route.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// A running case server; dropping it stops it.
pub(crate) struct Server {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _listener: Option<TcpListener>,
}

fn reason(status: u64) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}

fn read_request(stream: &mut TcpStream) -> Vec<u8> {
    let mut data = Vec::new();
    let mut buf = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return data,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length = head
        .split("\r\n")
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while data.len() < head_end + 4 + length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    data
}

/// Python's `bytes.decode("utf-8", "replace")` is close enough for the ASCII bodies cases send.
fn http_reply(routes: &Value, port: u16, raw: &[u8]) -> Vec<u8> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(raw.len());
    let head: String = raw[..split].iter().map(|b| char::from(*b)).collect();
    let body = raw.get(split + 4..).unwrap_or_default();
    let mut lines = head.split("\r\n");
    let first: Vec<&str> = lines.next().unwrap_or_default().splitn(3, ' ').collect();
    let (method, target) = (first[0], first.get(1).copied().unwrap_or("/"));
    let headers: BTreeMap<String, String> = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap_or((l, ""));
            (k.trim().to_lowercase(), v.trim().to_string())
        })
        .collect();
    let fallback = serde_json::json!({"status": 404, "body": "no route"});
    let route = routes
        .get(target)
        .or_else(|| routes.get(target.split('?').next().unwrap_or(target)))
        .unwrap_or(&fallback);
    let sub = |s: &str| s.replace("%P", &port.to_string());
    let out_body: Vec<u8> = if route.get("echo").and_then(Value::as_bool) == Some(true) {
        let mut seen = BTreeMap::new();
        seen.insert("method".to_string(), Value::from(method));
        seen.insert("target".to_string(), Value::from(target));
        seen.insert("body".to_string(), Value::from(String::from_utf8_lossy(body).into_owned()));
        seen.insert(
            "content_type".to_string(),
            headers.get("content-type").cloned().map(Value::from).unwrap_or(Value::Null),
        );
        for h in route.get("echo_headers").and_then(Value::as_array).into_iter().flatten() {
            let h = h.as_str().expect("header name");
            seen.insert(
                h.to_string(),
                headers.get(&h.to_lowercase()).cloned().map(Value::from).unwrap_or(Value::Null),
            );
        }
        serde_json::to_vec(&seen).expect("json")
    } else {
        sub(route.get("body").and_then(Value::as_str).unwrap_or("")).into_bytes()
    };
    let status = route.get("status").and_then(Value::as_u64).unwrap_or(200);
    let mut out = vec![format!("HTTP/1.1 {status} {}", reason(status))];
    for kv in route.get("headers").and_then(Value::as_array).into_iter().flatten() {
        out.push(format!("{}: {}", kv[0].as_str().expect("key"), sub(kv[1].as_str().expect("v"))));
    }
    out.push(format!("Content-Length: {}", out_body.len()));
    out.push("Connection: close".into());
    let mut reply = format!("{}\r\n\r\n", out.join("\r\n")).into_bytes();
    if method != "HEAD" {
        reply.extend_from_slice(&out_body);
    }
    reply
}

/// Whether any TCP socket (a lingering TIME_WAIT one included) uses local `port`.
fn port_in_use(port: u16) -> bool {
    let hex = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                l.split_whitespace().nth(1).is_some_and(|a| format!("{a} ").ends_with(&hex))
            })
        })
    })
}

/// A listener on a port no other socket has used lately, so a case about a port's
/// connections (`wait_for` drained) sees only its own.
fn fresh_port() -> (TcpListener, u16) {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        drop(listener);
        if !port_in_use(port) {
            let listener = TcpListener::bind(("127.0.0.1", port)).expect("rebind");
            return (listener, port);
        }
    }
}

impl Server {
    pub(crate) fn start(spec: &Value) -> Server {
        let kind = spec["kind"].as_str().expect("server kind").to_string();
        let (listener, port) = fresh_port();
        let stop = Arc::new(AtomicBool::new(false));
        match kind.as_str() {
            "closed" => {
                drop(listener);
                return Server { port, stop, thread: None, _listener: None };
            }
            "listen" => return Server { port, stop, thread: None, _listener: Some(listener) },
            _ => {}
        }
        listener.set_nonblocking(true).expect("nonblocking");
        let spec = spec.clone();
        let banner = kind == "banner";
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        let spec = spec.clone();
                        std::thread::spawn(move || {
                            let _ = stream.set_nonblocking(false);
                            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                            if banner {
                                let _ = stream.write_all(
                                    spec["text"].as_str().expect("banner text").as_bytes(),
                                );
                                return;
                            }
                            let raw = read_request(&mut stream);
                            if !raw.is_empty() {
                                let _ = stream.write_all(&http_reply(&spec["routes"], port, &raw));
                            }
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Server { port, stop, thread: Some(thread), _listener: None }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
