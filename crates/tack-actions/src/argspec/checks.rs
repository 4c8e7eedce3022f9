//! The cross-option checks of ansible's `validation` module (`check_mutually_exclusive`,
//! `check_required_one_of`, `_together`, `_if`, `_by`, `check_required_arguments`): each
//! returns the `TypeError` text ansible raises for the first rule broken, with the
//! ` found in a -> b` suffix of a sub-option.

use tack_yaml::{Mapping, Node, Value};

use super::types::py_str;
use super::{Ctx, has, is_set, truthy};

/// `msg found in a -> b` (the checks' suffix form).
pub(crate) fn found_in(msg: String, ctx: &Ctx) -> String {
    if ctx.is_empty() { msg } else { format!("{msg} found in {}", ctx.join(" -> ")) }
}

/// Python's `for x in value`: a string's characters, a list's items, a dict's keys; `Err` is
/// the `TypeError` for anything else.
pub(crate) fn py_iter(value: &Value) -> Result<Vec<Node>, String> {
    match value {
        Value::Str(s) | Value::Unsafe(s) => {
            Ok(s.chars().map(|c| Node::bare(Value::Str(c.to_string()))).collect())
        }
        Value::Seq(items) => Ok(items.clone()),
        Value::Map(m) => Ok(m.keys().cloned().collect()),
        other => Err(format!("'{}' object is not iterable", other.python_type())),
    }
}

/// `count_terms`: how many distinct names of `terms` (one name when it is a string) are
/// parameters.
fn count_terms(terms: &Value, params: &Mapping) -> usize {
    let names: Vec<String> = match terms {
        Value::Seq(_) | Value::Map(_) => {
            py_iter(terms).unwrap_or_default().iter().map(|n| py_str(&n.value)).collect()
        }
        other => vec![py_str(other)],
    };
    let mut seen: Vec<&String> = Vec::new();
    for name in &names {
        if has(params, name) && !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen.len()
}

fn joined(term: &Value, sep: &str) -> Result<String, String> {
    Ok(py_iter(term)?.iter().map(|n| py_str(&n.value)).collect::<Vec<_>>().join(sep))
}

pub(crate) fn mutually_exclusive(
    terms: Option<&Value>,
    params: &Mapping,
    ctx: &Ctx,
) -> Result<(), String> {
    let Some(terms) = terms.filter(|t| !matches!(t, Value::Null)) else { return Ok(()) };
    let mut groups = Vec::new();
    for check in py_iter(terms)? {
        if count_terms(&check.value, params) > 1 {
            groups.push(joined(&check.value, "|")?);
        }
    }
    if groups.is_empty() {
        return Ok(());
    }
    Err(found_in(format!("parameters are mutually exclusive: {}", groups.join(", ")), ctx))
}

pub(crate) fn required_one_of(
    terms: Option<&Value>,
    params: &Mapping,
    ctx: &Ctx,
) -> Result<(), String> {
    let Some(terms) = terms.filter(|t| !matches!(t, Value::Null)) else { return Ok(()) };
    for term in py_iter(terms)? {
        if count_terms(&term.value, params) == 0 {
            let msg = format!("one of the following is required: {}", joined(&term.value, ", ")?);
            return Err(found_in(msg, ctx));
        }
    }
    Ok(())
}

pub(crate) fn required_together(
    terms: Option<&Value>,
    params: &Mapping,
    ctx: &Ctx,
) -> Result<(), String> {
    let Some(terms) = terms.filter(|t| !matches!(t, Value::Null)) else { return Ok(()) };
    for term in py_iter(terms)? {
        let counts: Vec<usize> =
            py_iter(&term.value)?.iter().map(|f| count_terms(&f.value, params)).collect();
        if counts.iter().any(|c| *c > 0) && counts.contains(&0) {
            let msg = format!("parameters are required together: {}", joined(&term.value, ", ")?);
            return Err(found_in(msg, ctx));
        }
    }
    Ok(())
}

pub(crate) fn required_by(
    requirements: Option<&Value>,
    params: &Mapping,
    ctx: &Ctx,
) -> Result<(), String> {
    let Some(requirements) = requirements.filter(|t| !matches!(t, Value::Null)) else {
        return Ok(());
    };
    let Value::Map(requirements) = requirements else {
        return Err(format!("'{}' object has no attribute 'items'", requirements.python_type()));
    };
    for (key, value) in requirements.iter() {
        let key = py_str(&key.value);
        if !is_set(params, &key) {
            continue;
        }
        let wanted = match &value.value {
            Value::Str(s) | Value::Unsafe(s) => vec![s.clone()],
            other => py_iter(other)?.iter().map(|n| py_str(&n.value)).collect(),
        };
        let missing: Vec<String> = wanted.into_iter().filter(|r| !is_set(params, r)).collect();
        if !missing.is_empty() {
            let msg = format!("missing parameter(s) required by '{key}': {}", missing.join(", "));
            return Err(found_in(msg, ctx));
        }
    }
    Ok(())
}

pub(crate) fn required_if(
    requirements: Option<&Value>,
    params: &Mapping,
    ctx: &Ctx,
) -> Result<(), String> {
    let Some(requirements) = requirements.filter(|t| !matches!(t, Value::Null)) else {
        return Ok(());
    };
    for req in py_iter(requirements)? {
        let parts = py_iter(&req.value)?;
        let (key, val, needs, any) = match parts.as_slice() {
            [k, v, r, a] => (k, v, r, truthy(Some(&a.value))),
            [k, v, r] => (k, v, r, false),
            _ => {
                let n = parts.len();
                return Err(if n > 4 {
                    "too many values to unpack (expected 3)".to_string()
                } else {
                    format!("not enough values to unpack (expected 3, got {n})")
                });
            }
        };
        let key_name = py_str(&key.value);
        let needs = py_iter(&needs.value)?;
        let mut missing = Vec::new();
        let matches = super::lookup(params, &key_name).is_some_and(|p| py_eq(&p.value, &val.value));
        if matches {
            for check in &needs {
                if count_terms(&check.value, params) == 0 {
                    missing.push(py_str(&check.value));
                }
            }
        }
        let threshold = if any { needs.len() } else { 0 };
        if !missing.is_empty() && missing.len() >= threshold {
            let msg = format!(
                "{key_name} is {} but {} of the following are missing: {}",
                py_str(&val.value),
                if any { "any" } else { "all" },
                missing.join(", ")
            );
            return Err(found_in(msg, ctx));
        }
    }
    Ok(())
}

/// `check_required_arguments`: every `required` option absent, sorted.
pub(crate) fn required_arguments(
    spec: &[super::Opt<'_>],
    params: &Mapping,
    ctx: &Ctx,
) -> Result<(), String> {
    let mut missing: Vec<&str> = spec
        .iter()
        .filter(|o| truthy(o.get("required")) && !has(params, &o.name))
        .map(|o| o.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort_unstable();
    Err(found_in(format!("missing required arguments: {}", missing.join(", ")), ctx))
}

/// Python's `==` between loaded values: numbers by value (`True == 1 == 1.0`), strings by
/// text, containers item by item.
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    fn num(v: &Value) -> Option<f64> {
        match v {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
    match (a, b) {
        (Value::Str(x) | Value::Unsafe(x), Value::Str(y) | Value::Unsafe(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::BigInt(x), Value::BigInt(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(&p.value, &q.value))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get_value(&k.value).is_some_and(|w| py_eq(&v.value, &w.value)))
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}
