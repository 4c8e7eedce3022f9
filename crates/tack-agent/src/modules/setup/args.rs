//! setup's four arguments, checked and converted as ansible's argument spec does (types
//! `list` of `str`, `int`, `path`), with ansible's messages. Private to setup until the
//! shared `argspec` module lands.

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

pub struct Params {
    pub gather_subset: Vec<String>,
    pub gather_timeout: i64,
    pub filter: Vec<String>,
    pub fact_path: String,
}

pub fn parse(args: &Map<String, Value>) -> Result<Params, ArgError> {
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
    let gather_subset = match args.get("gather_subset") {
        None | Some(Value::Null) => vec!["all".to_string()],
        Some(v) => str_list("gather_subset", v)?,
    };
    let filter = match args.get("filter") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => str_list("filter", v)?,
    };
    let gather_timeout = match args.get("gather_timeout") {
        None | Some(Value::Null) => 10,
        Some(v) => int("gather_timeout", v)?,
    };
    let fact_path = match args.get("fact_path") {
        None | Some(Value::Null) => "/etc/ansible/facts.d".to_string(),
        Some(Value::String(s)) => expand_path(s),
        Some(other) => expand_path(&py_str(other)),
    };
    Ok(Params { gather_subset, gather_timeout, filter, fact_path })
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

/// Python's `str()` of a scalar, as ansible's `str` element conversion gives it.
fn py_str(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn str_list(name: &'static str, v: &Value) -> Result<Vec<String>, ArgError> {
    match v {
        Value::Array(items) => Ok(items.iter().map(py_str).collect()),
        Value::String(s) => Ok(s.split(',').map(|p| p.trim().to_string()).collect()),
        Value::Number(_) => Ok(vec![py_str(v)]),
        other => Err(ArgError::Type {
            name,
            kind: type_name(other),
            target: "list",
            detail: format!("<class '{}'> cannot be converted to a list", type_name(other)),
        }),
    }
}

fn int(name: &'static str, v: &Value) -> Result<i64, ArgError> {
    let err = |detail: String| ArgError::Type { name, kind: type_name(v), target: "int", detail };
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else {
                match n.as_f64() {
                    Some(f) if f.fract() == 0.0 => Ok(f as i64),
                    _ => Err(err(format!("\"{n}\" cannot be converted to an int"))),
                }
            }
        }
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| err(format!("\"'{s}'\" cannot be converted to an int"))),
        other => Err(err(format!("<class '{}'> cannot be converted to an int", type_name(other)))),
    }
}

/// ansible's `path` type: `~` and `$VAR` expanded.
fn expand_path(p: &str) -> String {
    let home = std::env::var("HOME").unwrap_or_default();
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
        std::env::var(name).unwrap_or_else(|_| c[0].to_string())
    })
    .into_owned()
}
