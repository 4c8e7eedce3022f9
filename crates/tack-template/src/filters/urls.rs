//! URL filters: `urlsplit` (Python's `urllib.parse.urlsplit` as a dict), `urldecode`
//! (`unquote_plus`) and Jinja2's `urlencode`.

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::pyval::{self, str_of, type_name};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("urlsplit", Sig::new("split_url", &["value", "query", "alias"], 1), urlsplit),
    Entry::new(
        "urldecode",
        Sig::new("unquote_plus", &["string", "encoding", "errors"], 1),
        urldecode,
    ),
    Entry::new("urlencode", Sig::new("do_urlencode", &["value"], 1), urlencode),
];

pub(crate) struct Split {
    pub scheme: String,
    pub netloc: String,
    pub path: String,
    pub query: String,
    pub fragment: String,
}

/// Python's `urllib.parse.urlsplit`.
pub(crate) fn split(url: &str) -> Result<Split, FilterError> {
    let url: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\r' | '\n'))
        .collect();
    let mut rest = url.as_str();
    let mut scheme = String::new();
    if let Some(i) = rest.find(':') {
        let candidate = &rest[..i];
        let first_ok = candidate.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if i > 0
            && first_ok
            && candidate.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            scheme = candidate.to_ascii_lowercase();
            rest = &rest[i + 1..];
        }
    }
    let mut netloc = String::new();
    if let Some(after) = rest.strip_prefix("//") {
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        netloc = after[..end].to_string();
        rest = &after[end..];
        if netloc.contains('[') != netloc.contains(']') {
            return Err(FilterError::failed("Invalid IPv6 URL"));
        }
    }
    let (rest, fragment) = match rest.split_once('#') {
        Some((a, b)) => (a, b.to_string()),
        None => (rest, String::new()),
    };
    let (path, query) = match rest.split_once('?') {
        Some((a, b)) => (a.to_string(), b.to_string()),
        None => (rest.to_string(), String::new()),
    };
    Ok(Split { scheme, netloc, path, query, fragment })
}

fn opt_str(s: Option<&str>) -> Value {
    s.map(Value::from).unwrap_or_else(|| Value::from(()))
}

fn components(parts: &Split) -> Result<Vec<(&'static str, Value)>, FilterError> {
    let netloc = parts.netloc.as_str();
    let (userinfo, hostinfo) = match netloc.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, netloc),
    };
    let (username, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((name, pw)) => (Some(name), Some(pw)),
            None => (Some(u), None),
        },
        None => (None, None),
    };
    let (hostname, port) = if let Some(bracketed) = hostinfo.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']').unwrap_or((bracketed, ""));
        (host, after.split_once(':').map(|(_, p)| p))
    } else {
        match hostinfo.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostinfo, None),
        }
    };
    let hostname = if hostname.is_empty() { None } else { Some(hostname.to_lowercase()) };
    let port = match port.filter(|p| !p.is_empty()) {
        None => Value::from(()),
        Some(p) => {
            let n = p.parse::<u32>().ok().filter(|_| p.bytes().all(|b| b.is_ascii_digit()));
            match n {
                Some(n) if n <= 65535 => Value::from(n),
                Some(_) => return Err(FilterError::failed("Port out of range 0-65535")),
                None => {
                    return Err(FilterError::failed(format!(
                        "Port could not be cast to integer value as {}",
                        tack_yaml::pyrepr::str_repr(p)
                    )));
                }
            }
        }
    };
    Ok(vec![
        ("fragment", Value::from(parts.fragment.as_str())),
        ("hostname", hostname.map(Value::from).unwrap_or_else(|| Value::from(()))),
        ("netloc", Value::from(netloc)),
        ("password", opt_str(password)),
        ("path", Value::from(parts.path.as_str())),
        ("port", port),
        ("query", Value::from(parts.query.as_str())),
        ("scheme", Value::from(parts.scheme.as_str())),
        ("username", opt_str(username)),
    ])
}

fn urlsplit(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let Some(url) = value.as_str() else {
        return Err(FilterError::failed(format!(
            "'{}' object has no attribute 'decode'",
            type_name(value)
        )));
    };
    let parts = components(&split(url)?)?;
    let alias = args.get(2).map(str_of).unwrap_or_else(|| "urlsplit".into());
    match args.get(1).filter(|q| pyval::truthy(q)) {
        Some(query) => {
            let name = str_of(query);
            parts.into_iter().find(|(k, _)| *k == name).map(|(_, v)| v).ok_or_else(|| {
                FilterError::failed(format!("{alias}: unknown URL component: {name}"))
            })
        }
        None => Ok(Value::from_pairs(parts.into_iter().map(|(k, v)| (Value::from(k), v)))),
    }
}

fn unquote(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() && s.is_char_boundary(i + 3) {
            let hex = &s[i + 1..i + 3];
            if let Ok(b) = u8::from_str_radix(hex, 16)
                && hex.bytes().all(|c| c.is_ascii_hexdigit())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn urldecode(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let Some(s) = value.as_str() else {
        return Err(FilterError::failed(format!(
            "'{}' object has no attribute 'replace'",
            type_name(value)
        )));
    };
    Ok(Value::from(unquote(&s.replace('+', " "))))
}

/// Jinja2's `url_quote`: everything but letters, digits and `_.-~` (and `/` outside query
/// strings) percent-encoded as UTF-8.
fn url_quote(value: &Value, for_qs: bool) -> String {
    let text = str_of(value);
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) || (!for_qs && b == b'/') {
            out.push(char::from(b));
        } else if for_qs && b == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn urlencode(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let pairs: Vec<(Value, Value)> = match value.kind() {
        ValueKind::String | ValueKind::Number | ValueKind::Bool | ValueKind::None => {
            return Ok(Value::from(url_quote(value, false)));
        }
        ValueKind::Map => value
            .try_iter()?
            .map(|k| {
                let v = value.get_item(&k).unwrap_or_default();
                (k, v)
            })
            .collect(),
        _ => {
            let mut pairs = Vec::new();
            for item in pyval::list_of(value).unwrap_or_default() {
                let kv = pyval::list_of(&item).unwrap_or_default();
                let [k, v] = kv.as_slice() else {
                    return Err(FilterError::failed(format!(
                        "{} unpack (expected 2, got {})",
                        if kv.len() > 2 { "too many values to" } else { "not enough values to" },
                        kv.len()
                    )));
                };
                pairs.push((k.clone(), v.clone()));
            }
            pairs
        }
    };
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", url_quote(k, true), url_quote(v, true)))
        .collect();
    Ok(Value::from(parts.join("&")))
}
