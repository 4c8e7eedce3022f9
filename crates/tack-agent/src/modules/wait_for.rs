//! `ansible.builtin.wait_for`: waits for a TCP port to accept (or refuse, or drain of
//! connections) or a path to appear (optionally holding a regular expression's match) or
//! vanish, within a timeout. Read-only: it opens connections and reads files, never writes.

use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::argspec::{Elem, Kind, Opt, Params, Spec};
use super::common::fail;
use super::pyre::{Flags, PyRegex};
use super::{Ctx, Invocation, ModuleResult};

const STATES: &[(&str, &str)] = &[
    ("ESTABLISHED", "01"),
    ("SYN_SENT", "02"),
    ("SYN_RECV", "03"),
    ("FIN_WAIT1", "04"),
    ("FIN_WAIT2", "05"),
    ("TIME_WAIT", "06"),
];

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("host", Kind::Str).default("127.0.0.1"),
            Opt::new("timeout", Kind::Int).default(300),
            Opt::new("connect_timeout", Kind::Int).default(5),
            Opt::new("delay", Kind::Int).default(0),
            Opt::new("port", Kind::Int),
            Opt::new("active_connection_states", Kind::List(Some(Elem::Str))).default(
                Value::Array(
                    ["ESTABLISHED", "FIN_WAIT1", "FIN_WAIT2", "SYN_RECV", "SYN_SENT", "TIME_WAIT"]
                        .iter()
                        .map(|s| Value::from(*s))
                        .collect(),
                ),
            ),
            Opt::new("path", Kind::Path),
            Opt::new("search_regex", Kind::Str),
            Opt::new("state", Kind::Str)
                .default("started")
                .choices(&["absent", "drained", "present", "started", "stopped"]),
            Opt::new("exclude_hosts", Kind::List(Some(Elem::Str))),
            Opt::new("sleep", Kind::Int).default(1),
            Opt::new("msg", Kind::Str),
        ],
        ..Spec::default()
    }
}

fn secs(p: &Params, key: &str) -> i64 {
    p.get(key).as_i64().unwrap_or(0)
}

fn sleep_secs(n: i64) {
    if n > 0 {
        std::thread::sleep(Duration::from_secs(n as u64));
    }
}

fn fail_elapsed(msg: String, start: Instant) -> ModuleResult {
    let mut r = fail(msg);
    r.insert("elapsed".into(), start.elapsed().as_secs().into());
    super::host::add_path_info(&mut r);
    r
}

/// Every address `host` resolves to (`socket.getaddrinfo`).
fn resolve(host: &str, port: u16) -> Vec<SocketAddr> {
    (host, port).to_socket_addrs().map(|a| a.collect()).unwrap_or_default()
}

/// `socket.create_connection`: the first address that accepts within `timeout` seconds.
fn connect(host: &str, port: u16, timeout: i64) -> Option<TcpStream> {
    if timeout <= 0 {
        // Python's zero timeout makes the connect non-blocking, which never completes at once.
        return None;
    }
    resolve(host, port)
        .into_iter()
        .find_map(|a| TcpStream::connect_timeout(&a, Duration::from_secs(timeout as u64)).ok())
}

fn close(s: TcpStream) {
    let _ = s.shutdown(std::net::Shutdown::Both);
}

/// Reads from `s` until `re` matches what arrived, the peer closes, or `end` passes.
fn read_until_match(mut s: &TcpStream, re: &PyRegex, end: Instant) -> bool {
    let mut data = Vec::new();
    let mut buf = [0u8; 1024];
    while Instant::now() < end {
        let left = end.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        let _ = s.set_read_timeout(Some(left));
        match s.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                data.extend_from_slice(&buf[..n]);
                if re.is_match(&String::from_utf8_lossy(&data)) {
                    return true;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return false,
        }
    }
    false
}

/// `/proc/net/tcp` spelling of an address: each 32-bit word in host byte order, in hex.
fn proc_hex(ip: &IpAddr) -> (bool, String) {
    let words = |b: &[u8]| -> String {
        b.chunks(4)
            .map(|c| format!("{:08X}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect()
    };
    match ip {
        IpAddr::V4(v4) => (false, words(&v4.octets())),
        IpAddr::V6(v6) => (true, words(&v6.octets())),
    }
}

/// `_convert_host_to_hex`: (is IPv6, address) pairs, an IPv4 address also as IPv4-mapped.
fn host_hex(host: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for a in resolve(host, 80) {
        out.push(proc_hex(&a.ip()));
        if let IpAddr::V4(v4) = a.ip() {
            out.push(proc_hex(&IpAddr::V6(v4.to_ipv6_mapped())));
        }
    }
    out
}

/// `LinuxTCPConnectionInfo.get_active_connections_count`.
fn active_connections(p: &Params, port: i64) -> usize {
    let ips = host_hex(p.str("host").unwrap_or("127.0.0.1"));
    let excluded: Vec<(bool, String)> = p
        .get("exclude_hosts")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(host_hex)
        .collect();
    let wanted: Vec<&str> = p
        .get("active_connection_states")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|s| STATES.iter().find(|(n, _)| *n == s).map(|(_, id)| *id))
        .collect();
    let port_hex = format!("{port:04X}");
    let mut count = 0;
    for (v6, file, any, mapped_prefix, mapped_any) in [
        (false, "/proc/net/tcp", "00000000", "", ""),
        (
            true,
            "/proc/net/tcp6",
            "00000000000000000000000000000000",
            "0000000000000000FFFF0000",
            "0000000000000000FFFF000000000000",
        ),
    ] {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let has = |ip: &str| ips.iter().any(|(f, i)| *f == v6 && i == ip);
        for line in text.lines() {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 4 || cols[1] == "local_address" || !wanted.contains(&cols[3]) {
                continue;
            }
            let (Some((lip, lport)), Some((rip, _))) =
                (cols[1].split_once(':'), cols[2].split_once(':'))
            else {
                continue;
            };
            if lport != port_hex || excluded.iter().any(|(f, i)| *f == v6 && i == rip) {
                continue;
            }
            if has(lip)
                || has(any)
                || (!mapped_prefix.is_empty() && lip.starts_with(mapped_prefix) && has(mapped_any))
            {
                count += 1;
            }
        }
    }
    count
}

/// The names of a Python pattern's `(?P<name>...)` groups, in group order.
fn group_names(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let (mut out, mut i, mut in_class) = (Vec::new(), 0, false);
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class && chars[i..].starts_with(&['(', '?', 'P', '<']) => {
                let name: String = chars[i + 4..].iter().take_while(|c| **c != '>').collect();
                i += 3 + name.len();
                out.push(name);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The path's content searched with the pattern; `Some` holds the match's groups.
fn search_file(
    path: &str,
    re: &PyRegex,
    pattern: &str,
) -> Option<(Vec<Value>, Map<String, Value>)> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let caps = re.search(&text)?;
    let groups: Vec<Value> = (1..caps.len())
        .map(|i| caps.get(i).map(|m| Value::from(m.as_str())).unwrap_or(Value::Null))
        .collect();
    let mut named = Map::new();
    for name in group_names(pattern) {
        named.insert(
            name.clone(),
            caps.name(&name).map(|m| Value::from(m.as_str())).unwrap_or(Value::Null),
        );
    }
    Some((groups, named))
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    if let Some(skipped) = ctx.skip_in_check_mode() {
        return skipped;
    }
    let host = p.str("host").unwrap_or("127.0.0.1").to_string();
    let (timeout, connect_timeout) = (secs(&p, "timeout"), secs(&p, "connect_timeout"));
    let port = p.get("port").as_i64();
    let state = p.str("state").unwrap_or("started").to_string();
    let path = p.str("path").map(str::to_string);
    let search_regex = p.str("search_regex").map(str::to_string);
    let custom = p.str("msg").map(str::to_string);
    let re = match &search_regex {
        Some(r) => match super::host_re::compile(r, Flags { multiline: true, dotall: false }) {
            Ok(re) => Some(re),
            Err(e) => return fail(format!("Invalid regular expression: {e}")),
        },
        None => None,
    };
    let zero = |msg: &str| {
        let mut r = fail(msg);
        r.insert("elapsed".into(), 0.into());
        r
    };
    let (has_port, has_path) =
        (port.is_some_and(|p| p != 0), path.as_deref().is_some_and(|p| !p.is_empty()));
    if has_port && has_path {
        return zero("port and path parameter can not both be passed to wait_for");
    }
    if has_path && state == "stopped" {
        return zero(
            "state=stopped should only be used for checking a port in the wait_for module",
        );
    }
    if has_path && state == "drained" {
        return zero(
            "state=drained should only be used for checking a port in the wait_for module",
        );
    }
    if p.is_set("exclude_hosts") && state != "drained" {
        return zero("exclude_hosts should only be with state=drained");
    }
    for s in p.get("active_connection_states").as_array().into_iter().flatten() {
        let name = s.as_str().unwrap_or_default();
        if !STATES.iter().any(|(n, _)| *n == name) {
            return zero(&format!("unknown active_connection_state ({name}) defined"));
        }
    }
    let port_u16 = port.and_then(|n| u16::try_from(n).ok()).unwrap_or(0);
    let start = Instant::now();
    sleep_secs(secs(&p, "delay"));
    let end = start + Duration::from_secs(timeout.max(0) as u64);
    let pause = || sleep_secs(secs(&p, "sleep"));
    let shown_port = port.map(|n| n.to_string()).unwrap_or_else(|| "None".into());
    let (mut groups, mut named) = (Vec::new(), Map::new());
    if !has_port && !has_path && state != "drained" {
        sleep_secs(timeout);
    } else if state == "absent" || state == "stopped" {
        let mut done = false;
        while Instant::now() < end {
            if has_path {
                if !std::path::Path::new(path.as_deref().unwrap_or_default()).exists() {
                    done = true;
                    break;
                }
            } else {
                match connect(&host, port_u16, connect_timeout) {
                    Some(s) => close(s),
                    None => {
                        done = true;
                        break;
                    }
                }
            }
            pause();
        }
        if !done {
            let msg = if has_port {
                format!("Timeout when waiting for {host}:{shown_port} to stop.")
            } else {
                format!("Timeout when waiting for {} to be absent.", path.unwrap_or_default())
            };
            return fail_elapsed(custom.unwrap_or(msg), start);
        }
    } else if state == "started" || state == "present" {
        let mut done = false;
        while Instant::now() < end {
            if has_path {
                let path = path.as_deref().unwrap_or_default();
                match std::fs::metadata(path) {
                    Err(e) if e.raw_os_error() != Some(libc::ENOENT) => {
                        let why = tack_py::oserror::strerror_code(e.raw_os_error().unwrap_or(0));
                        return fail_elapsed(
                            custom.unwrap_or(format!("Failed to stat {path}, {why}")),
                            start,
                        );
                    }
                    Err(_) => {}
                    Ok(_) => match &re {
                        None => {
                            done = true;
                            break;
                        }
                        Some(re) => {
                            if let Some((g, n)) =
                                search_file(path, re, search_regex.as_deref().unwrap_or_default())
                            {
                                (groups, named) = (g, n);
                                done = true;
                                break;
                            }
                        }
                    },
                }
            } else if has_port {
                let left = end.saturating_duration_since(Instant::now());
                let alt = left.as_secs() as i64 + i64::from(left.subsec_nanos() > 0);
                if let Some(s) = connect(&host, port_u16, connect_timeout.min(alt)) {
                    let matched = match &re {
                        Some(re) => read_until_match(&s, re, end),
                        None => true,
                    };
                    close(s);
                    if matched {
                        done = true;
                        break;
                    }
                }
            }
            pause();
        }
        if !done {
            let msg = match (has_port, &search_regex) {
                (true, Some(r)) => {
                    format!("Timeout when waiting for search string {r} in {host}:{shown_port}")
                }
                (true, None) => format!("Timeout when waiting for {host}:{shown_port}"),
                (false, Some(r)) => format!(
                    "Timeout when waiting for search string {r} in {}",
                    path.unwrap_or_default()
                ),
                (false, None) => {
                    format!("Timeout when waiting for file {}", path.unwrap_or_default())
                }
            };
            return fail_elapsed(custom.unwrap_or(msg), start);
        }
    } else {
        let Some(port) = port else {
            return fail(
                "tack's wait_for needs 'port' with state=drained (ansible's module fails on it too)",
            );
        };
        let mut done = false;
        while Instant::now() < end {
            if active_connections(&p, port) == 0 {
                done = true;
                break;
            }
            pause();
        }
        if !done {
            let msg = format!("Timeout when waiting for {host}:{port} to drain");
            return fail_elapsed(custom.unwrap_or(msg), start);
        }
    }
    let mut r = ModuleResult::new();
    r.insert("state".into(), state.into());
    r.insert("port".into(), port.map(Value::from).unwrap_or(Value::Null));
    r.insert("search_regex".into(), search_regex.map(Value::from).unwrap_or(Value::Null));
    r.insert("match_groups".into(), Value::Array(groups));
    r.insert("match_groupdict".into(), Value::Object(named));
    r.insert("path".into(), path.map(Value::from).unwrap_or(Value::Null));
    r.insert("elapsed".into(), start.elapsed().as_secs().into());
    super::host::add_path_info(&mut r);
    r
}
