//! ansible's `uri.py` tests: `uri`, `url` and `urn`, on Python's `urllib.parse.urlparse`.
//!
//! `urlparse` accepts any string (every string has a scheme and a path, perhaps empty), so a
//! string is a URI unless parsing fails (a malformed IPv6 host) or its scheme is not among
//! the ones asked for; values that are not strings are not URIs, except `None`, which
//! `urlparse` takes as empty bytes.

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::{Entry, TestResult};
use crate::filters::args::{Bound, Sig};
use crate::filters::pyval;
use crate::filters::urls::{Split, split};

pub(super) const TESTS: &[Entry] = &[
    Entry::new("uri", Sig::new("is_uri", &["value", "schemes"], 1), is_uri),
    Entry::new("url", Sig::new("is_url", &["value", "schemes"], 1), is_url),
    Entry::new("urn", Sig::new("is_urn", &["value"], 1), is_urn),
];

/// `urlparse(value)` where it succeeds.
fn parse(value: &Value) -> Option<Split> {
    match value.kind() {
        ValueKind::String => split(value.as_str().unwrap_or_default()).ok(),
        ValueKind::None => split("").ok(),
        _ => None,
    }
}

/// `scheme in schemes` (a string of schemes is searched as text, as Python's `in` does).
fn scheme_in(scheme: &str, schemes: &Value) -> bool {
    if let Some(text) = schemes.as_str() {
        return text.contains(scheme);
    }
    pyval::list_of(schemes).is_some_and(|items| pyval::contains(&items, &Value::from(scheme)))
}

fn uri_parts(value: &Value, schemes: Option<&Value>) -> Option<Split> {
    let parts = parse(value)?;
    match schemes.filter(|s| pyval::truthy(s)) {
        Some(schemes) if !scheme_in(&parts.scheme, schemes) => None,
        _ => Some(parts),
    }
}

fn is_uri(_: &State, args: &Bound) -> TestResult {
    Ok(uri_parts(args.input(), args.get(1)).is_some())
}

fn is_url(_: &State, args: &Bound) -> TestResult {
    Ok(uri_parts(args.input(), args.get(1))
        .is_some_and(|p| !p.netloc.is_empty() || p.scheme == "file"))
}

fn is_urn(_: &State, args: &Bound) -> TestResult {
    Ok(uri_parts(args.input(), Some(&Value::from(vec![Value::from("urn")]))).is_some())
}
