//! `ansible.builtin.uri`: one HTTP request (`http://` only) with ansible's body formats
//! (json, form-urlencoded, raw, or a file's content), expected status codes, the response's
//! headers as lowercased result keys, its content and parsed JSON, and an optional `dest` the
//! body is written to. Writes nothing but `dest` (through a private temporary file).

use std::time::Instant;

use serde_json::{Map, Value};

use super::argspec::{Elem, Kind, Opt, Params, Spec, file_common};
use super::common::fail;
use super::fetch::{self, Options};
use super::http;
use super::pyfmt::py_repr;
use super::{Ctx, Invocation, ModuleResult, digest, file, fsattr, host, paths, textfile};

pub(crate) fn spec() -> Spec {
    let mut options = fetch::url_options();
    options.retain(|o| !["url", "url_username", "url_password"].contains(&o.name));
    options.extend([
        Opt::new("url", Kind::Str).required(),
        Opt::new("follow_redirects", Kind::Str)
            .default("safe")
            .choices(&["all", "no", "none", "safe", "urllib2", "yes"]),
        Opt::new("dest", Kind::Path),
        Opt::new("url_username", Kind::Str).aliases(&["user"]),
        Opt::new("url_password", Kind::Str).aliases(&["password"]).no_log(),
        Opt::new("body", Kind::Raw),
        Opt::new("body_format", Kind::Str).default("raw").choices(&[
            "form-urlencoded",
            "json",
            "raw",
            "form-multipart",
        ]),
        Opt::new("src", Kind::Path),
        Opt::new("method", Kind::Str).default("GET"),
        Opt::new("return_content", Kind::Bool).default(false),
        Opt::new("creates", Kind::Path),
        Opt::new("removes", Kind::Path),
        Opt::new("status_code", Kind::List(Some(Elem::Int)))
            .default(Value::Array(vec![200.into()])),
        Opt::new("timeout", Kind::Int).default(30),
        Opt::new("headers", Kind::Dict).default(Value::Object(Map::new())),
        Opt::new("unix_socket", Kind::Path),
        Opt::new("remote_src", Kind::Bool).default(false),
        Opt::new("ca_path", Kind::Path),
        Opt::new("unredirected_headers", Kind::List(Some(Elem::Str))).default(Value::Array(vec![])),
        Opt::new("decompress", Kind::Bool).default(true),
        Opt::new("ciphers", Kind::List(Some(Elem::Str))),
        Opt::new("use_netrc", Kind::Bool).default(true),
    ]);
    options.extend(file_common());
    Spec { options, mutually_exclusive: &[&["body", "src"]], ..Spec::default() }
}

/// `json.dumps(value)` with Python's default separators and `ensure_ascii`.
pub(super) fn py_json(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '\u{8}' => out.push_str("\\b"),
                    '\u{c}' => out.push_str("\\f"),
                    c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                        let mut buf = [0u16; 2];
                        for unit in c.encode_utf16(&mut buf) {
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.is_nan() => "NaN".into(),
            Some(f) if f.is_infinite() => if f > 0.0 { "Infinity" } else { "-Infinity" }.into(),
            _ => py_repr(v),
        },
        Value::Number(n) => n.to_string(),
        Value::Array(items) => {
            format!("[{}]", items.iter().map(py_json).collect::<Vec<_>>().join(", "))
        }
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", py_json(&Value::from(k.clone())), py_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `urllib.parse.quote_plus`.
fn quote_plus(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `to_text(value)` of a form value.
fn text_of(v: &Value) -> String {
    super::pyfmt::py_str(v)
}

/// `form_urlencoded(body)` for a dict or a list of pairs.
fn form_urlencoded(body: &Value) -> Result<String, String> {
    let pairs: Vec<(String, Value)> = match body {
        Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Value::Array(kv) if kv.len() == 2 => out.push((text_of(&kv[0]), kv[1].clone())),
                    Value::String(s) if s.chars().count() == 2 => {
                        let mut c = s.chars();
                        let (a, b) = (c.next().unwrap_or_default(), c.next().unwrap_or_default());
                        out.push((a.to_string(), Value::from(b.to_string())));
                    }
                    _ => return Err("tack cannot form-urlencode this body: each list item must be a [key, value] pair".into()),
                }
            }
            out
        }
        _ => return Err("tack cannot form-urlencode this body".into()),
    };
    let mut result = Vec::new();
    for (key, values) in pairs {
        let list = match values {
            Value::Array(items) => items,
            Value::Object(m) => m.keys().map(|k| Value::from(k.clone())).collect(),
            other => vec![other],
        };
        for value in list.iter().filter(|v| !v.is_null()) {
            result.push(format!("{}={}", quote_plus(&key), quote_plus(&text_of(value))));
        }
    }
    Ok(result.join("&"))
}

/// `parse_content_type`: the type (as `email.message` defaults it) and its charset.
fn content_type(headers: Option<&[(String, String)]>) -> (String, String, String) {
    let Some(headers) = headers else {
        return ("application/octet-stream".into(), "octet-stream".into(), "utf-8".into());
    };
    let raw = headers.iter().rev().find(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    let mut ctype = "text/plain".to_string();
    let mut charset = None;
    if let Some((_, v)) = raw {
        let mut parts = v.split(';');
        let t = parts.next().unwrap_or_default().trim().to_lowercase();
        if t.matches('/').count() == 1 {
            ctype = t;
        }
        for param in parts {
            if let Some((k, val)) = param.split_once('=')
                && k.trim().eq_ignore_ascii_case("charset")
            {
                charset = Some(val.trim().trim_matches('"').to_string());
            }
        }
    }
    let ctype = ctype.split(',').next().unwrap_or_default().to_string();
    let sub = ctype.split_once('/').map(|(_, s)| s.to_string()).unwrap_or_default();
    let charset =
        charset.unwrap_or_else(|| "utf-8".into()).split(',').next().unwrap_or("utf-8").to_string();
    (ctype, sub, charset)
}

fn decode(bytes: &[u8], charset: &str) -> String {
    match charset.to_ascii_lowercase().replace('_', "-").as_str() {
        "latin-1" | "latin1" | "iso-8859-1" | "iso8859-1" => {
            bytes.iter().map(|b| char::from(*b)).collect()
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn request_body(
    p: &Params,
    headers: &mut Vec<(String, String)>,
) -> Result<Option<Vec<u8>>, ModuleResult> {
    let body = p.get("body").clone();
    let has_type =
        |h: &[(String, String)]| h.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    let text = match p.str("body_format").unwrap_or("raw").to_lowercase().as_str() {
        "json" => {
            let t = match &body {
                Value::String(s) => s.clone(),
                other => py_json(other),
            };
            if !has_type(headers) {
                headers.push(("Content-Type".into(), "application/json".into()));
            }
            Some(t)
        }
        "form-urlencoded" => {
            let t = match &body {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => form_urlencoded(other).map_err(fail)?,
            };
            if !has_type(headers) {
                headers.push(("Content-Type".into(), "application/x-www-form-urlencoded".into()));
            }
            (!body.is_null()).then_some(t)
        }
        "form-multipart" => {
            return Err(fail(
                "tack does not build multipart bodies: body_format 'form-multipart' is not supported",
            ));
        }
        _ => match &body {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            _ => {
                return Err(fail(
                    "tack sends a raw body only as a string: give 'body' as text or choose a body_format",
                ));
            }
        },
    };
    Ok(text.map(String::into_bytes))
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    if let Some(skipped) = ctx.skip_in_check_mode() {
        return skipped;
    }
    let url = p.str("url").unwrap_or_default().to_string();
    let method = p.str("method").unwrap_or("GET").to_uppercase();
    if method.is_empty() || !method.chars().all(|c| c.is_ascii_uppercase()) {
        return fail(
            "Parameter 'method' needs to be a single word in uppercase, like GET or POST.",
        );
    }
    let mut headers: Vec<(String, String)> = p
        .get("headers")
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), super::pyfmt::py_str(v)))
        .collect();
    let mut body = match request_body(&p, &mut headers) {
        Ok(b) => b,
        Err(r) => return r,
    };
    if let Some(c) = p.str("creates")
        && paths::exists(c)
    {
        let mut r = ModuleResult::new();
        r.insert("stdout".into(), format!("skipped, since '{c}' exists").into());
        r.insert("changed".into(), false.into());
        return r;
    }
    if let Some(c) = p.str("removes")
        && !paths::exists(c)
    {
        let mut r = ModuleResult::new();
        r.insert("stdout".into(), format!("skipped, since '{c}' does not exist").into());
        r.insert("changed".into(), false.into());
        return r;
    }
    if let Err(r) = fetch::check_supported(&p, &url, false) {
        return r;
    }
    if p.is_set("unix_socket") {
        return fail(
            "tack does not connect through unix sockets: option 'unix_socket' is not supported",
        );
    }
    if let Err(r) = fsattr::check_selinux(&p) {
        return r;
    }
    // `src` is a path on the host: the controller's action staged a controller file there
    // unless `remote_src` named the host's own.
    if let Some(src) = p.str("src") {
        match std::fs::read(src) {
            Ok(b) => {
                headers.push(("Content-Length".into(), b.len().to_string()));
                body = Some(b);
            }
            Err(_) => {
                let mut r = fail(format!("Unable to open source file {src}"));
                r.insert("elapsed".into(), 0.into());
                return r;
            }
        }
    }
    let dest = p.str("dest").map(str::to_string);
    let last_mod = dest
        .as_deref()
        .filter(|d| std::path::Path::new(d).is_file())
        .and_then(|d| std::fs::metadata(d).and_then(|m| m.modified()).ok());
    let mut result = ModuleResult::new();
    if matches!(p.str("follow_redirects"), Some("yes" | "no")) {
        result.insert(
            "deprecations".into(),
            serde_json::json!([{"event": {"msg": "Using 'yes' or 'no' for 'follow_redirects' parameter is deprecated.",
                "__ansible_type": "Event"}, "deprecator": {"resolved_name": "ansible.builtin.uri",
                "type": {"value": "module", "__ansible_type": "PluginType"}, "__ansible_type": "PluginInfo"},
                "version": "2.22", "__ansible_type": "DeprecationSummary"}]),
        );
    }
    let status_codes: Vec<i64> =
        p.get("status_code").as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    let start = Instant::now();
    let unredirected = p
        .get("unredirected_headers")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let fetched = match fetch::fetch(
        &p,
        &url,
        Options {
            method: &method,
            headers,
            unredirected,
            body,
            timeout: p.get("timeout").as_i64().unwrap_or(30),
            follow: fetch::follow_of(&p),
            last_mod_time: last_mod,
            decompress: p.bool("decompress"),
        },
    ) {
        Ok(f) => f,
        Err(r) => return r,
    };
    let elapsed = start.elapsed().as_secs();
    let mut info = fetched.info;
    let status = info.get("status").and_then(Value::as_i64).unwrap_or(-1);
    let answered = fetched.body.is_some();
    let mut dest = dest;
    if answered
        && let Some(d) = &dest
        && paths::isdir(d)
    {
        let name = fetch::disposition_filename(&fetched.headers)
            .or_else(|| {
                let u = fetched.final_url.as_deref().unwrap_or(&url);
                let path = http::parse_url(u).map(|x| x.path).unwrap_or_default();
                let name = paths::basename(path.trim_end_matches('/'));
                (!name.is_empty()).then(|| fetch::unquote(&name))
            })
            .unwrap_or_else(|| "index.html".into());
        dest = Some(paths::join(d, &name));
    }
    let (ctype, sub, charset) = content_type(answered.then_some(fetched.headers.as_slice()));
    let candidates = ["json", "javascript"];
    let maybe_json = if let Some((_, suffix)) = sub.split_once('+') {
        candidates.contains(&suffix.to_lowercase().as_str())
    } else {
        !ctype.is_empty() && candidates.contains(&sub.to_lowercase().as_str())
    };
    let return_content = p.bool("return_content");
    let in_codes = status_codes.contains(&status);
    let maybe_output = maybe_json || return_content || !in_codes;
    let content: Option<Vec<u8>> = if maybe_output {
        info.shift_remove("body");
        Some(fetched.body.clone().unwrap_or_default())
    } else {
        fetched.body.clone()
    };
    let mut resp = Map::new();
    resp.insert(
        "redirected".into(),
        (info.get("url").and_then(Value::as_str) != Some(url.as_str())).into(),
    );
    resp.extend(info);
    resp.insert("elapsed".into(), elapsed.into());
    resp.insert("status".into(), status.into());
    resp.insert("changed".into(), false.into());
    if answered && let Some(d) = &dest {
        if in_codes && status != 304 {
            let bytes = content.clone().unwrap_or_default();
            let same = digest::file_digest(d, "sha1").and_then(Result::ok) == Some(sha1_of(&bytes));
            if !same && let Err(e) = textfile::write_atomic(d, &bytes, p.bool("unsafe_writes")) {
                let mut r = resp.clone();
                let msg = r
                    .shift_remove("msg")
                    .and_then(|m| m.as_str().map(str::to_string))
                    .unwrap_or_default();
                let tail = if msg.is_empty() { String::new() } else { format!(" {msg}") };
                r.extend(fail(format!("failed to copy to {d}: {e}{tail}")));
                return r;
            }
            let args = file::file_args(&p, d);
            let changed = match fsattr::set_fs_attributes(&args, true, None, false) {
                Ok(c) => c,
                Err(r) => return r,
            };
            resp.insert("changed".into(), changed.into());
        }
        resp.insert("path".into(), d.clone().into());
    }
    let mut uresp: Map<String, Value> =
        resp.into_iter().map(|(k, v)| (k.replace('-', "_").to_lowercase(), v)).collect();
    if let Some(loc) = uresp.get("location").and_then(Value::as_str) {
        let joined = http::urljoin(&url, loc);
        uresp.insert("location".into(), joined.into());
    }
    let u_content = match (&content, maybe_output) {
        (Some(bytes), true) => {
            let text = decode(bytes, &charset);
            if maybe_json && let Ok(js) = serde_json::from_str::<Value>(&text) {
                uresp.insert("json".into(), js);
            }
            Value::from(text)
        }
        _ => Value::Null,
    };
    for (k, v) in result {
        uresp.insert(k, v);
    }
    if !in_codes {
        let codes = Value::Array(status_codes.iter().map(|c| Value::from(*c)).collect());
        let prior = uresp.get("msg").and_then(Value::as_str).unwrap_or_default().to_string();
        let msg = format!("Status code was {status} and not {}: {prior}", py_repr(&codes));
        let mut r = Map::new();
        if return_content {
            r.insert("content".into(), u_content);
        }
        r.extend(uresp);
        r.extend(fail(msg));
        return r;
    }
    let mut r = Map::new();
    if return_content {
        r.insert("content".into(), u_content);
    }
    r.extend(uresp);
    host::add_path_info(&mut r);
    r
}

fn sha1_of(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    Sha1::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
