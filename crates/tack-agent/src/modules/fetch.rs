//! ansible's `fetch_url` for the URL modules (`get_url`, `uri`): the shared URL options, the
//! request headers ansible adds, the `info` dictionary it builds from the answer (lowercased
//! headers, cookies, `msg`, `status`, `url`), `file://` reads, and the module's private
//! temporary directory. What tack cannot do (TLS, proxies, netrc, GSSAPI, credentials other
//! than forced basic auth) is refused by name before anything is sent.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::{Map, Value};

use super::argspec::{Kind, Opt, Params};
use super::common::fail;
use super::http::{self, Follow, Outcome, Request};
use super::{ModuleResult, tempname};

/// `url_argument_spec()`.
pub(super) fn url_options() -> Vec<Opt> {
    vec![
        Opt::new("url", Kind::Str),
        Opt::new("force", Kind::Bool).default(false),
        Opt::new("http_agent", Kind::Str).default("ansible-httpget"),
        Opt::new("use_proxy", Kind::Bool).default(true),
        Opt::new("validate_certs", Kind::Bool).default(true),
        Opt::new("url_username", Kind::Str),
        Opt::new("url_password", Kind::Str).no_log(),
        Opt::new("force_basic_auth", Kind::Bool).default(false),
        Opt::new("client_cert", Kind::Path),
        Opt::new("client_key", Kind::Path),
        Opt::new("use_gssapi", Kind::Bool).default(false),
    ]
}

/// Whether `host` is exempt from proxies by `no_proxy` (urllib's `proxy_bypass_environment`).
fn bypassed(host: &str) -> bool {
    let list = super::environment::var("no_proxy")
        .or_else(|| super::environment::var("NO_PROXY"))
        .unwrap_or_default();
    list.split(',').map(str::trim).filter(|s| !s.is_empty()).any(|entry| {
        entry == "*" || {
            let e = entry.trim_start_matches('.');
            host == e || host.ends_with(&format!(".{e}"))
        }
    })
}

/// Whether tack's client speaks `url`'s scheme: `http://`, and `file://` where the module
/// takes it (`allow_file`).
pub(super) fn speaks(url: &str, allow_file: bool) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || allow_file && lower.starts_with("file:")
}

/// Refuses, by name, what tack's client cannot do for `url`; `Ok` is the parsed URL kind.
pub(super) fn check_supported(p: &Params, url: &str, allow_file: bool) -> Result<(), ModuleResult> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("file:") && allow_file {
        return Ok(());
    }
    if !speaks(url, allow_file) {
        let scheme = lower.split(':').next().unwrap_or_default();
        return Err(fail(format!(
            "tack fetches only http://{} URLs: '{scheme}' URLs are not supported",
            if allow_file { " and file://" } else { "" }
        )));
    }
    let Some(parsed) = http::parse_url(url) else {
        let netloc = url[7..].split(['/', '?', '#']).next().unwrap_or_default();
        if netloc.contains('@') {
            return Err(fail(format!(
                "tack cannot request '{url}': credentials inside the URL are not supported (use url_username with force_basic_auth)"
            )));
        }
        let port = netloc.rsplit_once(':').map(|(_, p)| p).unwrap_or_default();
        return Err(fail(format!("nonnumeric port: '{port}'")));
    };
    if p.bool("use_gssapi") {
        return Err(fail(
            "tack does not support GSSAPI authentication: option 'use_gssapi' is not supported",
        ));
    }
    if p.is_set("url_username") && !p.bool("force_basic_auth") {
        return Err(fail(
            "tack sends credentials only up front: 'url_username' needs 'force_basic_auth: true'",
        ));
    }
    let netrc = super::environment::var("NETRC")
        .or_else(|| super::environment::var("HOME").map(|h| format!("{h}/.netrc")));
    if p.get("use_netrc").as_bool() != Some(false)
        && !p.is_set("url_username")
        && netrc.is_some_and(|n| Path::new(&n).is_file())
    {
        return Err(fail("tack does not read .netrc credentials: set 'use_netrc: false'"));
    }
    let proxy =
        super::environment::var("http_proxy").or_else(|| super::environment::var("HTTP_PROXY"));
    if p.bool("use_proxy") && proxy.is_some_and(|v| !v.is_empty()) && !bypassed(&parsed.host) {
        return Err(fail(
            "tack does not send requests through HTTP proxies: set 'use_proxy: false' or no_proxy",
        ));
    }
    Ok(())
}

/// `rfc2822_date_string(..., 'GMT')` of a file time.
pub(super) fn http_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() as i64;
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = (days + 3).rem_euclid(7) as usize;
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{}, {day:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        DAYS[weekday],
        MONTHS[(month - 1) as usize],
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// What `fetch_url` returns: the `info` dictionary and the response body (`None` when no
/// response arrived).
pub(super) struct Fetched {
    pub info: Map<String, Value>,
    pub body: Option<Vec<u8>>,
    pub headers: Vec<(String, String)>,
    /// The URL that answered, as `r.geturl()` gives it.
    pub final_url: Option<String>,
}

/// The request options `open_url` takes from the module's parameters.
pub(super) struct Options<'a> {
    pub method: &'a str,
    pub headers: Vec<(String, String)>,
    pub unredirected: Vec<String>,
    pub body: Option<Vec<u8>>,
    pub timeout: i64,
    pub follow: Follow,
    pub last_mod_time: Option<SystemTime>,
    pub decompress: bool,
}

/// `fetch_url`: sends the request and builds ansible's `info`.
pub(super) fn fetch(p: &Params, url: &str, o: Options) -> Result<Fetched, ModuleResult> {
    if url.to_ascii_lowercase().starts_with("file:") {
        return Ok(fetch_file(url));
    }
    let mut headers = Vec::new();
    if let Some(user) = p.str("url_username").filter(|_| p.bool("force_basic_auth")) {
        let pass = p.str("url_password").unwrap_or("None");
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        headers.push(("Authorization".to_string(), format!("Basic {token}")));
    }
    if let Some(agent) = p.str("http_agent").filter(|a| !a.is_empty()) {
        headers.push(("User-agent".into(), agent.to_string()));
    }
    if p.bool("force") {
        headers.push(("Cache-control".into(), "no-cache".into()));
    } else if let Some(t) = o.last_mod_time {
        headers.push(("If-modified-since".into(), http_date(t)));
    }
    let mut unredirected = Vec::new();
    for (k, v) in o.headers {
        // urllib keeps one value per header name, spelled `Capitalized`.
        let name = capitalize(&k);
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&name));
        if o.unredirected.iter().any(|u| u.eq_ignore_ascii_case(&k)) {
            unredirected.push((name, v));
        } else {
            headers.push((name, v));
        }
    }
    let req = Request {
        method: o.method.to_string(),
        url: url.to_string(),
        headers,
        unredirected,
        body: o.body,
        timeout: Duration::from_secs(o.timeout.max(1) as u64),
        follow: o.follow,
    };
    let mut info = Map::new();
    info.insert("url".into(), url.into());
    info.insert("status".into(), (-1).into());
    let lower_headers = |info: &mut Map<String, Value>, hs: &[(String, String)]| {
        for (k, v) in hs {
            info.insert(k.to_lowercase(), v.clone().into());
        }
    };
    match http::send(&req) {
        Outcome::Ok(r) => {
            if o.decompress
                && r.header("content-encoding").is_some_and(|e| e.eq_ignore_ascii_case("gzip"))
            {
                return Err(fail(
                    "tack does not decompress gzip responses: set 'decompress: false' to keep the body as sent",
                ));
            }
            lower_headers(&mut info, &r.headers);
            let mut joined: Map<String, Value> = Map::new();
            for (k, v) in &r.headers {
                let k = k.to_lowercase();
                let value = match joined.get(&k).and_then(Value::as_str) {
                    Some(prev) => format!("{prev}, {v}"),
                    None => v.clone(),
                };
                joined.insert(k, value.into());
            }
            info.extend(joined);
            let mut jar: Vec<&(String, String, String)> = r.cookies.iter().collect();
            jar.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
            let string: Vec<String> = jar.iter().map(|(_, n, v)| format!("{n}={v}")).collect();
            info.insert("cookies_string".into(), string.join("; ").into());
            let cookies: Map<String, Value> =
                jar.iter().map(|(_, n, v)| (n.clone(), Value::from(v.clone()))).collect();
            info.insert("cookies".into(), Value::Object(cookies));
            let length = r.header("content-length").unwrap_or("unknown").to_string();
            info.insert("msg".into(), format!("OK ({length} bytes)").into());
            info.insert("url".into(), r.url.clone().into());
            info.insert("status".into(), r.status.into());
            Ok(Fetched { info, body: Some(r.body), headers: r.headers, final_url: Some(r.url) })
        }
        Outcome::Error(r, msg) => {
            lower_headers(&mut info, &r.headers);
            info.insert("msg".into(), msg.into());
            info.insert("body".into(), String::from_utf8_lossy(&r.body).into_owned().into());
            info.insert("status".into(), r.status.into());
            Ok(Fetched { info, body: Some(r.body), headers: r.headers, final_url: Some(r.url) })
        }
        Outcome::Failed(e) => {
            info.insert("msg".into(), format!("Request failed: <urlopen error {e}>").into());
            Ok(Fetched { info, body: None, headers: Vec::new(), final_url: None })
        }
    }
}

/// `str.capitalize()`, which urllib applies to every header name.
fn capitalize(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect(),
        None => String::new(),
    }
}

/// Percent-decoding (`urllib.parse.unquote`).
pub(super) fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            let v = (h * 16 + l) as u8;
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// urllib's `FileHandler`: the file's bytes, with the headers it makes up.
fn fetch_file(url: &str) -> Fetched {
    let rest = &url[5..];
    let path = match rest.strip_prefix("//") {
        Some(r) => match r.find('/') {
            Some(0) => r.to_string(),
            Some(i) if r[..i].eq_ignore_ascii_case("localhost") => r[i..].to_string(),
            _ => String::new(),
        },
        None => rest.to_string(),
    };
    let path = unquote(path.split(['?', '#']).next().unwrap_or_default());
    let mut info = Map::new();
    info.insert("url".into(), url.into());
    info.insert("status".into(), (-1).into());
    let failed = |mut info: Map<String, Value>, e: String| {
        info.insert("msg".into(), format!("Request failed: <urlopen error {e}>").into());
        Fetched { info, body: None, headers: Vec::new(), final_url: None }
    };
    if path.is_empty() {
        return failed(info, "file not on local host".into());
    }
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) => return failed(info, tack_py::oserror::os_error(&e, std::path::Path::new(&path))),
    };
    let body = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return failed(info, tack_py::oserror::os_error(&e, std::path::Path::new(&path))),
    };
    let modified = meta.modified().map(http_date).unwrap_or_default();
    let headers = vec![
        ("Content-type".to_string(), "text/plain".to_string()),
        ("Content-length".to_string(), meta.len().to_string()),
        ("Last-modified".to_string(), modified),
    ];
    for (k, v) in &headers {
        info.insert(k.to_lowercase(), v.clone().into());
    }
    info.insert("cookies_string".into(), "".into());
    info.insert("cookies".into(), Value::Object(Map::new()));
    info.insert("msg".into(), format!("OK ({} bytes)", meta.len()).into());
    info.insert("url".into(), url.into());
    info.insert("status".into(), Value::Null);
    Fetched { info, body: Some(body), headers, final_url: Some(url.to_string()) }
}

/// `content-disposition`'s `filename` parameter, as `email.message` reads it.
pub(super) fn disposition_filename(headers: &[(String, String)]) -> Option<String> {
    let value = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-disposition"))?;
    value.1.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case("filename") {
            return None;
        }
        let v = v.trim();
        let v = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(v);
        let name = super::paths::basename(&v.replace("\\\"", "\"").replace("\\\\", "\\"));
        (!name.is_empty()).then_some(name)
    })
}

/// The module's private temporary directory (`AnsibleModule.tmpdir`), removed when dropped.
pub(super) struct ModuleTmp {
    dir: Option<String>,
}

impl ModuleTmp {
    pub(super) fn new() -> Self {
        ModuleTmp { dir: None }
    }

    /// The directory, made (mode 0700) on first use.
    pub(super) fn dir(&mut self) -> std::io::Result<String> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let base = super::environment::temp_dir();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
        for _ in 0..100 {
            let d = base.join(format!("ansible-moduletmp-{now}-{}", tempname::random_part()));
            match std::fs::DirBuilder::new().mode_private().create(&d) {
                Ok(()) => {
                    let d = d.to_string_lossy().into_owned();
                    self.dir = Some(d.clone());
                    return Ok(d);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::from_raw_os_error(libc::EEXIST))
    }
}

impl Drop for ModuleTmp {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

trait PrivateDir {
    fn mode_private(&mut self) -> &mut Self;
}

impl PrivateDir for std::fs::DirBuilder {
    fn mode_private(&mut self) -> &mut Self {
        use std::os::unix::fs::DirBuilderExt;
        self.mode(0o700)
    }
}

/// `tempfile.mkstemp(dir=dir)`: a new private file `tmpXXXXXXXX` holding `content`.
pub(super) fn mkstemp(dir: &str, content: &[u8]) -> std::io::Result<String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    for _ in 0..100 {
        let path = super::paths::join(dir, &format!("tmp{}", tempname::random_part()));
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(mut f) => {
                if let Err(e) = f.write_all(content) {
                    let _ = std::fs::remove_file(&path);
                    return Err(e);
                }
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::EEXIST))
}

/// The `follow_redirects` value, and `urllib2` for modules without the option.
pub(super) fn follow_of(p: &Params) -> Follow {
    Follow::parse(p.str("follow_redirects").unwrap_or("urllib2"))
}
