//! setup's four arguments, checked and converted as ansible's argument spec does (types
//! `list` of `str`, `int`, `path`), with ansible's messages. Private to setup until the
//! shared `argspec` module lands.

use crate::modules::pyfmt::{py_repr, py_str};
use serde_json::{Map, Value};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ArgError {
    #[error(
        "Unsupported parameters for (setup) module: {0}. Supported parameters include: fact_path, filter, gather_subset, gather_timeout."
    )]
    Unsupported(String),
    #[error(
        "argument '{name}' is of type {kind} and we were unable to convert to {target}: {detail}"
    )]
    Type { name: &'static str, kind: &'static str, target: &'static str, detail: String },
    /// A subset name ansible does not know, with the list it prints.
    #[error("Bad subset '{0}' given to Ansible. gather_subset options allowed: all, {1}")]
    BadSubset(String, String),
    /// What tack's setup cannot gather on this host, refused by name.
    #[error("{0}")]
    Refused(String),
}

pub(super) struct Params {
    pub gather_subset: Vec<String>,
    pub gather_timeout: i64,
    pub filter: Vec<String>,
    pub fact_path: String,
    /// The interpreter ansible would run the module with (tack's `_ansible_python_interpreter`,
    /// which the controller adds: the host's `ansible_python_interpreter`, else the
    /// configured or discovered one); `python3` on `PATH` without it.
    pub python: Option<String>,
}

pub(super) fn parse(args: &Map<String, Value>) -> Result<Params, ArgError> {
    let known = ["gather_subset", "gather_timeout", "filter", "fact_path"];
    let mut unknown: Vec<&str> = args
        .keys()
        .map(String::as_str)
        .filter(|k| !known.contains(k) && !k.starts_with("_ansible_"))
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(ArgError::Unsupported(unknown.join(", ")));
    }
    // An explicit null is checked against the type like any value (ansible does not put
    // the default in its place), except for `path`, which lets None through.
    let gather_subset = match args.get("gather_subset") {
        None => vec!["all".to_string()],
        Some(v) => str_list("gather_subset", v)?,
    };
    let gather_timeout = match args.get("gather_timeout") {
        None => 10,
        Some(v) => int("gather_timeout", v)?,
    };
    let filter = match args.get("filter") {
        None => Vec::new(),
        Some(v) => str_list("filter", v)?,
    };
    let fact_path = match args.get("fact_path") {
        None | Some(Value::Null) => "/etc/ansible/facts.d".to_string(),
        Some(Value::String(s)) => expand_path(s),
        Some(other) => expand_path(&py_str(other)),
    };
    let python =
        args.get("_ansible_python_interpreter").and_then(Value::as_str).map(str::to_string);
    Ok(Params { gather_subset, gather_timeout, filter, fact_path, python })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn str_list(name: &'static str, v: &Value) -> Result<Vec<String>, ArgError> {
    match v {
        Value::Array(items) => Ok(items.iter().map(py_str).collect()),
        Value::String(s) => Ok(s.split(',').map(str::to_string).collect()),
        // bool is an int in Python.
        Value::Number(_) | Value::Bool(_) => Ok(vec![py_str(v)]),
        other => Err(ArgError::Type {
            name,
            kind: type_name(other),
            target: "list",
            detail: format!("<class '{}'> cannot be converted to a list", type_name(other)),
        }),
    }
}

/// ansible's `int` check: ints (and bools) as they are; anything `Decimal()` reads as a whole
/// number converted; the rest refused with the value's repr.
fn int(name: &'static str, v: &Value) -> Result<i64, ArgError> {
    let err = || ArgError::Type {
        name,
        kind: type_name(v),
        target: "int",
        detail: format!("\"{}\" cannot be converted to an int", py_repr(v)),
    };
    match v {
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(i),
            (None, Some(f)) if f.fract() == 0.0 && f.is_finite() => Ok(f as i64),
            _ => Err(err()),
        },
        Value::String(s) => decimal_int(s.trim()).ok_or_else(err),
        _ => Err(err()),
    }
}

/// `int(Decimal(s))` when `Decimal(s)` is a whole number: digits with an optional sign,
/// fraction and exponent.
fn decimal_int(s: &str) -> Option<i64> {
    let re = regex::Regex::new(r"^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$").ok()?;
    let c = re.captures(s)?;
    let (int_part, frac) =
        (c.get(2).map_or("", |m| m.as_str()), c.get(3).map_or("", |m| m.as_str()));
    if int_part.is_empty() && frac.is_empty() {
        return None;
    }
    let exp: i64 = c.get(4).map_or(Ok(0), |m| m.as_str().parse()).ok()?;
    let digits = format!("{int_part}{frac}");
    let point = int_part.len() as i64 + exp;
    if point < 0 {
        return digits.chars().all(|d| d == '0').then_some(0);
    }
    let point = point as usize;
    let (whole, rest) = if point >= digits.len() {
        (format!("{digits}{}", "0".repeat(point - digits.len())), String::new())
    } else {
        (digits[..point].to_string(), digits[point..].to_string())
    };
    if rest.chars().any(|d| d != '0') {
        return None;
    }
    let n: i64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    Some(if &c[1] == "-" { -n } else { n })
}

/// ansible's `path` type: `~` and `$VAR` expanded.
fn expand_path(p: &str) -> String {
    let home = crate::modules::environment::var("HOME").unwrap_or_default();
    let p = if p == "~" {
        home
    } else if let Some(rest) = p.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else {
        p.to_string()
    };
    expand_vars(&p)
}

fn expand_vars(p: &str) -> String {
    if !p.contains('$') {
        return p.to_string();
    }
    let re = regex::Regex::new(r"\$(\w+|\{[^}]*\})").ok();
    let Some(re) = re else {
        return p.to_string();
    };
    re.replace_all(p, |c: &regex::Captures<'_>| {
        let name = c[1].trim_start_matches('{').trim_end_matches('}');
        crate::modules::environment::var(name).unwrap_or_else(|| c[0].to_string())
    })
    .into_owned()
}
