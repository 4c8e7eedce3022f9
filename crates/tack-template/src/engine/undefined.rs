//! ansible's message for an undefined value that was used, from the expression minijinja says
//! produced it (`a.b["c"]`): walked again step by step over the same variables, the first
//! step that fails names the problem as ansible does:
//!
//! - a missing variable: `'a' is undefined`;
//! - a missing attribute or key of a value that exists: `object of type 'dict' has no
//!   attribute 'b'` (an integer key prints bare: `has no attribute 5`);
//! - a variable or item whose own template fails: that template's message (`'zz' is
//!   undefined` for `d.k` when `d.k` is `"{{ zz }}"`).
//!
//! Only reached when a render has already failed, so walking again costs nothing in the
//! common case. Names local to the template (`{% set %}`, loop variables) are not in the
//! render's variables; an expression rooted in one is described generically.

use std::sync::Arc;

use minijinja::Error;
use minijinja::value::{Object, Value as JValue};
use tack_yaml::pyrepr;

use super::errors::ansible_error;
use crate::python::repr::type_name;
use crate::vars::objects::{Dict, List, Root};

pub(super) enum Step {
    Attr(String),
    Item(JValue),
    Unknown,
}

/// Splits `a.b["c"][0]` into its root name and steps; `None` for anything else.
pub(super) fn parse(expr: &str) -> Option<(&str, Vec<Step>)> {
    let bytes = expr.as_bytes();
    let ident_end = |from: usize| {
        let mut i = from;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        i
    };
    let end = ident_end(0);
    if end == 0 {
        return None;
    }
    let root = &expr[..end];
    let mut steps = Vec::new();
    let mut i = end;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                let e = ident_end(i + 1);
                steps.push(Step::Attr(expr[i + 1..e].to_string()));
                i = e;
            }
            b'[' => {
                let close = expr[i..].find(']').map(|p| p + i)?;
                let key = &expr[i + 1..close];
                steps.push(parse_key(key));
                i = close + 1;
            }
            _ => return None,
        }
    }
    Some((root, steps))
}

fn parse_key(key: &str) -> Step {
    for quote in ['"', '\''] {
        if let Some(s) = key.strip_prefix(quote).and_then(|k| k.strip_suffix(quote)) {
            let unescaped = s.replace(&format!("\\{quote}"), &quote.to_string());
            return Step::Item(JValue::from(unescaped.replace("\\\\", "\\")));
        }
    }
    if let Ok(i) = key.parse::<i64>() {
        return Step::Item(JValue::from(i));
    }
    Step::Unknown
}

/// The message ansible gives for using the undefined value `expr` produced.
pub(super) fn explain(expr: &str, root: &Arc<Root>) -> String {
    if let Some(message) = undef_call(expr) {
        return message;
    }

    let Some((name, steps)) = parse(expr) else {
        return format!("'{expr}' is undefined");
    };
    let ctx = root.ctx();
    if let Some(binding) = ctx.scope.get(name)
        && let Err(e) = ctx.try_resolve(binding.data())
    {
        // The variable exists but its template fails: that failure is the message.
        return message_of(&e);
    }
    let mut current = match root.get_value_by_str(name) {
        Some(v) if !v.is_undefined() => v,
        _ => return local_miss(name, &steps),
    };
    let count = steps.len();
    for (i, step) in steps.iter().enumerate() {
        let key = match step {
            Step::Attr(a) => JValue::from(a.as_str()),
            Step::Item(k) => k.clone(),
            Step::Unknown => return format!("'{expr}' is undefined"),
        };
        match lookup(&current, &key) {
            Ok(Some(v)) if !v.is_undefined() => current = v,
            // minijinja names a chain whose every step but the last existed: failing earlier
            // means the render saw another value under this name (a loop variable
            // shadowing a variable).
            Ok(_) if i + 1 < count => return local_miss(name, &steps),
            // Jinja2's sandbox refuses private attributes before looking them up.
            Ok(_) if key.as_str().is_some_and(|k| k.starts_with('_')) => {
                return format!(
                    "access to attribute '{}' of '{}' object is unsafe.",
                    key.as_str().unwrap_or_default(),
                    type_name(&current)
                );
            }
            Ok(_) => {
                // The container the render actually missed in, when it was one of tack's
                // (a loop variable may shadow the variable walked here).
                let type_name = super::active::last_miss(&key).unwrap_or(type_name(&current));
                return format!("object of type '{type_name}' has no attribute {}", key_repr(&key));
            }
            Err(e) => return message_of(&e),
        }
    }
    format!("'{expr}' is undefined")
}

/// The message of an undefined `undef(...)` made: its `hint` (a string literal), else
/// ansible's default words.
fn undef_call(expr: &str) -> Option<String> {
    let args = expr.trim().strip_prefix("undef(")?.strip_suffix(')')?.trim();
    let literal =
        args.strip_prefix("hint").map(|r| r.trim_start()).and_then(|r| r.strip_prefix('='));
    let literal = literal.unwrap_or(args).trim();
    let quoted =
        ['\'', '"'].iter().find_map(|q| literal.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)));
    Some(match quoted {
        Some(hint) if !hint.is_empty() => hint.to_string(),
        _ => crate::undef_hint::BARE_UNDEF.to_string(),
    })
}

/// A chain rooted in a name the render's variables do not have: a name of the template's own
/// (a loop variable). minijinja names the whole chain only when everything before its last
/// step existed, so the last step is the missing one; its container's type is known when
/// the container is one of tack's.
fn local_miss(name: &str, steps: &[Step]) -> String {
    let last = match steps.last() {
        Some(Step::Attr(a)) => JValue::from(a.as_str()),
        Some(Step::Item(k)) => k.clone(),
        _ => return format!("'{name}' is undefined"),
    };
    match super::active::last_miss(&last) {
        Some(type_name) => {
            format!("object of type '{type_name}' has no attribute {}", key_repr(&last))
        }
        None => format!("'{name}' is undefined"),
    }
}

/// One step of the walk: `Err` when the item exists but its template fails.
fn lookup(value: &JValue, key: &JValue) -> Result<Option<JValue>, Error> {
    if let Some(dict) = value.downcast_object_ref::<Dict>() {
        return dict.try_get(key).transpose();
    }
    if let Some(list) = value.downcast_object::<List>() {
        let idx = key.as_i64().and_then(|i| {
            let len = list.len() as i64;
            let i = if i < 0 { i + len } else { i };
            usize::try_from(i).ok()
        });
        return match idx {
            Some(i) => list.try_get(i).transpose(),
            None => Ok(list.get_value(key)),
        };
    }
    match value.get_item(key) {
        Ok(v) if v.is_undefined() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(_) => Ok(None),
    }
}

/// The loaded node a simple expression (`a.b[0]`) names in `scope`, and whether its binding is
/// trusted: how a conditional finds where its value was written.
pub(super) fn loaded_node<'s>(
    expr: &str,
    scope: &'s crate::vars::Scope,
) -> Option<(&'s tack_yaml::Node, bool)> {
    let (name, steps) = parse(expr.trim())?;
    let binding = scope.get(name)?;
    let trusted = *binding.provenance() == crate::vars::Provenance::Trusted;
    let mut node = binding.node();
    for step in steps {
        node = match (step, &node.value) {
            (Step::Attr(a), tack_yaml::Value::Map(m)) => m.get(&a)?,
            (Step::Item(k), tack_yaml::Value::Map(m)) => match k.as_str() {
                Some(s) => m.get(s)?,
                None => m.get_value(&tack_yaml::Value::Int(k.as_i64()?))?,
            },
            (Step::Item(k), tack_yaml::Value::Seq(items)) => {
                let i = k.as_i64()?;
                let i = if i < 0 { i + items.len() as i64 } else { i };
                items.get(usize::try_from(i).ok()?)?
            }
            _ => return None,
        };
    }
    Some((node, trusted))
}

fn key_repr(key: &JValue) -> String {
    match key.as_str() {
        Some(s) => pyrepr::str_repr(s),
        None => key.to_string(),
    }
}

fn message_of(err: &Error) -> String {
    let err = ansible_error(err, None);
    err.detail().map(|d| d.trim_start_matches('\u{2}').to_string()).unwrap_or_default()
}
