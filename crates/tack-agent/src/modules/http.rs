//! A small HTTP/1.1 client for plain `http://` URLs, behaving as Python's `urllib` with
//! ansible's redirect handler does: one connection per request (`Connection: close`),
//! redirects followed by ansible's `follow_redirects` rules, cookies carried along the
//! redirect chain, and any final status outside 2xx returned as an HTTP error. It never
//! speaks TLS: `https://` is refused by the callers before a request is made.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// ansible's `follow_redirects` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Follow {
    /// `urllib2`/`urllib`: the standard library's own rules.
    Urllib2,
    /// `no`/`none`: every redirect is an error.
    Never,
    /// `safe`: only GET and HEAD requests follow.
    Safe,
    /// `all`/`yes`: every 3xx redirect is followed.
    All,
}

impl Follow {
    pub(super) fn parse(s: &str) -> Follow {
        match s {
            "no" | "none" => Follow::Never,
            "safe" => Follow::Safe,
            "all" | "yes" => Follow::All,
            _ => Follow::Urllib2,
        }
    }
}

/// One request as the module builds it.
#[derive(Debug, Clone)]
pub(super) struct Request {
    pub method: String,
    pub url: String,
    /// Headers sent on every request of the chain, in the order given.
    pub headers: Vec<(String, String)>,
    /// Headers sent only on the first request (`unredirected_headers`).
    pub unredirected: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub timeout: Duration,
    pub follow: Follow,
}

/// The final response of a request chain.
#[derive(Debug, Clone)]
pub(super) struct Response {
    /// The URL that answered (after redirects).
    pub url: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Cookies set along the chain: (path, name, value).
    pub cookies: Vec<(String, String, String)>,
}

impl Response {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// How a request ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// A 2xx answer.
    Ok(Response),
    /// urllib's `HTTPError`: any other final status, with ansible's message for it.
    Error(Response, String),
    /// urllib's `URLError`: the text inside `<urlopen error ...>`.
    Failed(String),
}

/// The parts of an `http://` URL a request needs.
#[derive(Debug, Clone)]
pub(super) struct Url {
    pub host: String,
    pub port: u16,
    /// `host` or `host:port` as the URL spells it (the `Host` header).
    pub netloc: String,
    /// Path and query (`/` when the URL has no path).
    pub selector: String,
    pub path: String,
}

/// Parses an `http://` URL; `None` when it is not one tack can request.
pub(super) fn parse_url(url: &str) -> Option<Url> {
    let rest = url.strip_prefix("http://").or_else(|| {
        url.get(..7).filter(|s| s.eq_ignore_ascii_case("http://")).map(|_| &url[7..])
    })?;
    let rest = rest.split('#').next().unwrap_or(rest);
    let (netloc, tail) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if netloc.is_empty() || netloc.contains('@') {
        return None;
    }
    let (host, port) = match netloc.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || netloc.starts_with('[') => {
            (h.to_string(), if p.is_empty() { 80 } else { p.parse().ok()? })
        }
        _ => (netloc.to_string(), 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    let selector = if tail.starts_with('?') || tail.is_empty() {
        format!("/{tail}")
    } else {
        tail.to_string()
    };
    let path = selector.split('?').next().unwrap_or("/").to_string();
    Some(Url { host, port, netloc: netloc.to_string(), selector, path })
}

/// Python's `urljoin(base, reference)` for the URLs redirects give.
pub(super) fn urljoin(base: &str, reference: &str) -> String {
    if reference.is_empty() {
        return base.to_string();
    }
    if let Some(i) = reference.find(':')
        && reference[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !reference[..i].is_empty()
    {
        return reference.to_string();
    }
    let (scheme, after) = base.split_once("://").unwrap_or(("http", base));
    let (netloc, base_path) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    if let Some(r) = reference.strip_prefix("//") {
        return format!("{scheme}://{r}");
    }
    let base_path = base_path.split('#').next().unwrap_or(base_path);
    if reference.starts_with('?') {
        let p = base_path.split('?').next().unwrap_or(base_path);
        return format!("{scheme}://{netloc}{p}{reference}");
    }
    if reference.starts_with('#') {
        return format!("{scheme}://{netloc}{base_path}{reference}");
    }
    let (ref_path, ref_tail) = match reference.find(['?', '#']) {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let merged = if ref_path.starts_with('/') {
        ref_path.to_string()
    } else {
        let bp = base_path.split('?').next().unwrap_or(base_path);
        let dir = &bp[..bp.rfind('/').map(|i| i + 1).unwrap_or(0)];
        format!("{dir}{ref_path}")
    };
    let mut out: Vec<&str> = Vec::new();
    let segs: Vec<&str> = merged.split('/').collect();
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("{scheme}://{netloc}{}{ref_tail}", out.join("/"))
}

/// Python's `str(OSError)` for a socket error (`[Errno 111] Connection refused`).
fn os_text(e: &std::io::Error) -> String {
    if matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock) {
        return "timed out".into();
    }
    match e.raw_os_error() {
        Some(code) => format!("[Errno {code}] {}", tack_py::oserror::strerror_code(code)),
        None => e.to_string(),
    }
}

/// One raw exchange: the status, reason and headers, and the body.
struct Raw {
    status: u16,
    reason: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_line(stream: &mut impl Read, buf: &mut Vec<u8>) -> std::io::Result<Option<String>> {
    loop {
        if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
            let line: Vec<u8> = buf.drain(..i + 2).collect();
            return Ok(Some(String::from_utf8_lossy(&line[..i]).into_owned()));
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn read_exact_buf(stream: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<Vec<u8>> {
    while buf.len() < n {
        let mut chunk = [0u8; 65536];
        let got = stream.read(&mut chunk)?;
        if got == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..got]);
    }
    let take = n.min(buf.len());
    Ok(buf.drain(..take).collect())
}

fn exchange(
    url: &Url,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<Raw, String> {
    let addrs: Vec<_> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|_| "[Errno -2] Name or service not known".to_string())?
        .collect();
    let mut last = "[Errno -2] Name or service not known".to_string();
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = os_text(&e),
        }
    }
    let mut stream = stream.ok_or(last)?;
    stream.set_read_timeout(Some(timeout)).map_err(|e| os_text(&e))?;
    stream.set_write_timeout(Some(timeout)).map_err(|e| os_text(&e))?;
    let mut head = format!("{method} {} HTTP/1.1\r\n", url.selector);
    head.push_str(&format!("Host: {}\r\n", url.netloc));
    head.push_str("Accept-Encoding: identity\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut out = head.into_bytes();
    if let Some(b) = body {
        out.extend_from_slice(b);
    }
    stream.write_all(&out).map_err(|e| os_text(&e))?;
    let mut buf = Vec::new();
    let status_line = read_line(&mut stream, &mut buf)
        .map_err(|e| os_text(&e))?
        .ok_or_else(|| "Remote end closed connection without response".to_string())?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| super::pyfmt::py_repr(&serde_json::Value::from(status_line.clone())))?;
    if !version.starts_with("HTTP/") {
        return Err(super::pyfmt::py_repr(&serde_json::Value::from(status_line.clone())));
    }
    let reason = parts.next().unwrap_or_default().trim().to_string();
    let mut headers = Vec::new();
    while let Some(line) = read_line(&mut stream, &mut buf).map_err(|e| os_text(&e))? {
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone())
    };
    let no_body =
        method == "HEAD" || status == 204 || status == 304 || (100..200).contains(&status);
    let body = if no_body {
        Vec::new()
    } else if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        while let Some(size_line) = read_line(&mut stream, &mut buf).map_err(|e| os_text(&e))? {
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .unwrap_or(0);
            if size == 0 {
                break;
            }
            body.extend(read_exact_buf(&mut stream, &mut buf, size).map_err(|e| os_text(&e))?);
            let _ = read_line(&mut stream, &mut buf);
        }
        body
    } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        read_exact_buf(&mut stream, &mut buf, n).map_err(|e| os_text(&e))?
    } else {
        let mut rest = std::mem::take(&mut buf);
        stream.read_to_end(&mut rest).map_err(|e| os_text(&e))?;
        rest
    };
    Ok(Raw { status, reason, headers, body })
}

const INFINITE: &str = "The HTTP server returned a redirect error that would lead to an infinite loop.\nThe last 30x error message was:\n";

fn cookie_header(cookies: &[(String, String, String)], path: &str) -> Option<String> {
    let mut sent: Vec<&(String, String, String)> =
        cookies.iter().filter(|(p, _, _)| path.starts_with(p.as_str())).collect();
    sent.sort_by_key(|c| std::cmp::Reverse(c.0.len()));
    if sent.is_empty() {
        return None;
    }
    Some(sent.iter().map(|(_, n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; "))
}

fn take_cookies(raw: &Raw, url: &Url, jar: &mut Vec<(String, String, String)>) {
    for (k, v) in &raw.headers {
        if !k.eq_ignore_ascii_case("set-cookie") {
            continue;
        }
        let mut attrs = v.split(';');
        let Some((name, value)) = attrs.next().and_then(|nv| nv.split_once('=')) else { continue };
        let default_path = match url.path.rfind('/') {
            Some(0) | None => "/".to_string(),
            Some(i) => url.path[..i].to_string(),
        };
        let path = attrs
            .filter_map(|a| a.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("path"))
            .map(|(_, p)| p.trim().to_string())
            .unwrap_or(default_path);
        let (name, value) = (name.trim().to_string(), value.trim().to_string());
        jar.retain(|(p, n, _)| !(p == &path && n == &name));
        jar.push((path, name, value));
    }
}

/// Sends `req`, following redirects as ansible's handler does.
pub(super) fn send(req: &Request) -> Outcome {
    let mut method = req.method.clone();
    let mut url_text = req.url.clone();
    let mut headers = req.headers.clone();
    let mut body = req.body.clone();
    let mut first = true;
    let mut jar: Vec<(String, String, String)> = Vec::new();
    let mut visited: Vec<String> = Vec::new();
    loop {
        let Some(url) = parse_url(&url_text) else {
            return Outcome::Failed(format!("unknown url type: {url_text}"));
        };
        let mut sent = headers.clone();
        if first {
            sent.extend(req.unredirected.iter().cloned());
        }
        if body.is_some() {
            let has = |sent: &[(String, String)], n: &str| {
                sent.iter().any(|(k, _)| k.eq_ignore_ascii_case(n))
            };
            if !has(&sent, "content-type") {
                sent.push(("Content-Type".into(), "application/x-www-form-urlencoded".into()));
            }
            if !has(&sent, "content-length") {
                let n = body.as_ref().map(Vec::len).unwrap_or(0);
                sent.push(("Content-Length".into(), n.to_string()));
            }
        }
        if let Some(c) = cookie_header(&jar, &url.path) {
            sent.push(("Cookie".into(), c));
        }
        let raw = match exchange(&url, &method, &sent, body.as_deref(), req.timeout) {
            Ok(r) => r,
            Err(e) => return Outcome::Failed(e),
        };
        take_cookies(&raw, &url, &mut jar);
        let response = |raw: Raw, url: &str, jar: &[(String, String, String)]| Response {
            url: url.to_string(),
            status: raw.status,
            headers: raw.headers,
            body: raw.body,
            cookies: jar.to_vec(),
        };
        if (200..300).contains(&raw.status) {
            return Outcome::Ok(response(raw, &url_text, &jar));
        }
        let error = |raw: Raw, extra: &str| {
            let msg = format!("HTTP Error {}: {extra}{}", raw.status, raw.reason.clone());
            Outcome::Error(response(raw, &url_text, &jar), msg)
        };
        let code = raw.status;
        let location = raw
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("location") || k.eq_ignore_ascii_case("uri"))
            .map(|(_, v)| v.clone());
        let (true, Some(location)) = ([301, 302, 303, 307, 308].contains(&code), location) else {
            return error(raw, "");
        };
        let newurl = urljoin(&url_text, &location);
        let scheme =
            newurl.split_once(':').map(|(s, _)| s.to_ascii_lowercase()).unwrap_or_default();
        if !["http", "https", "ftp", ""].contains(&scheme.as_str()) {
            let msg = format!(
                "HTTP Error {code}: {} - Redirection to url '{newurl}' is not allowed",
                raw.reason
            );
            return Outcome::Error(response(raw, &url_text, &jar), msg);
        }
        let get_like = method == "GET" || method == "HEAD";
        let allowed = match req.follow {
            Follow::Never => false,
            Follow::All => true,
            Follow::Safe => get_like,
            Follow::Urllib2 => get_like || ([301, 302, 303].contains(&code) && method == "POST"),
        };
        if !allowed {
            return error(raw, "");
        }
        let repeats = visited.iter().filter(|u| **u == newurl).count();
        let distinct = {
            let mut d = visited.clone();
            d.sort();
            d.dedup();
            d.len()
        };
        if repeats >= 4 || distinct >= 10 {
            return error(raw, INFINITE);
        }
        visited.push(newurl.clone());
        let newurl = newurl.replace(' ', "%20");
        let content = |k: &str| {
            let k = k.to_ascii_lowercase();
            k == "content-length" || k == "content-type" || k == "transfer-encoding"
        };
        if req.follow == Follow::Urllib2 {
            method = if method == "HEAD" { "HEAD".into() } else { "GET".into() };
            body = None;
            headers.retain(|(k, _)| !content(k));
        } else if code != 307 && code != 308 {
            body = None;
            headers.retain(|(k, _)| !content(k));
            if (code == 303 || code == 302) && method != "HEAD" {
                method = "GET".into();
            }
            if code == 301 && method == "POST" {
                method = "GET".into();
            }
        }
        url_text = newurl;
        first = false;
    }
}
