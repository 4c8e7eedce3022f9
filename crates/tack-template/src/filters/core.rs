//! The filters about values themselves: `default`/`d`, `mandatory`, `bool`, `ternary`,
//! `type_debug`, `extract`, `comment` (ansible's `core.py`).

use minijinja::{State, Value};

use super::args::{Bound, Sig, truthy};
use super::pyval::{self, type_name};
use super::{Entry, FilterError, is_undefined};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("default", Sig::new("ansible_default", DEFAULT, 1), default).accepting_undefined(),
    Entry::new("d", Sig::new("ansible_default", DEFAULT, 1), default).accepting_undefined(),
    Entry::new("mandatory", Sig::new("mandatory", &["a", "msg"], 1), mandatory)
        .accepting_undefined(),
    Entry::new("bool", Sig::new("to_bool", &["value"], 1), to_bool),
    Entry::new(
        "ternary",
        Sig::new("ternary", &["value", "true_val", "false_val", "none_val"], 3),
        ternary,
    )
    .accepting_undefined(),
    Entry::new("type_debug", Sig::new("type_debug", &["obj"], 1), type_debug).accepting_undefined(),
    Entry::new(
        "extract",
        Sig::new("extract", &["item", "container", "morekeys"], 2).env(),
        extract,
    ),
    Entry::new("comment", Sig::new("comment", &["text", "style"], 1).varkw(), comment),
];

const DEFAULT: &[&str] = &["value", "default_value", "boolean"];

fn default(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let boolean = match args.get(2) {
        None => false,
        Some(b) if b.kind() == minijinja::value::ValueKind::Bool => b.is_true(),
        Some(b) => {
            return Err(FilterError::failed(format!(
                "The 'boolean' argument must be of type 'bool', not '{}'.",
                type_name(b)
            )));
        }
    };
    let value = args.input();
    let fallback = || args.get(1).cloned().unwrap_or_else(|| Value::from(""));
    if is_undefined(value) || (boolean && !truthy(value)) {
        return Ok(fallback());
    }
    Ok(value.clone())
}

fn mandatory(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    if !is_undefined(value) {
        return Ok(value.clone());
    }
    if let Some(msg) = args.get(1).filter(|m| !m.is_none()) {
        return Err(FilterError::failed(pyval::str_of(msg)));
    }
    match undefined_name(value) {
        Some(name) => Err(FilterError::failed(format!(
            "Mandatory variable {} not defined.",
            tack_yaml::pyrepr::str_repr(&name)
        ))),
        None => Err(FilterError::failed("Mandatory variable not defined.")),
    }
}

/// The name an undefined value stands for, when the engine recorded one.
fn undefined_name(_value: &Value) -> Option<String> {
    None
}

/// The Jinja `bool` filter's own words (`_valid_bool_true` in ansible's filter plugin): fewer
/// than `boolean()` takes (no `y`, `t`), matched lower-cased but not stripped. A rule of the
/// filter's, not `tack_py::boolean`.
const BOOL_FILTER_TRUE: [&str; 4] = ["yes", "on", "true", "1"];
/// `_valid_bool_false`.
const BOOL_FILTER_FALSE: [&str; 4] = ["no", "off", "false", "0"];

/// The `bool` filter.
fn to_bool(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    use minijinja::value::ValueKind;
    let value = args.input();
    let as_text = match value.kind() {
        ValueKind::String => Some(value.as_str().unwrap_or_default().to_lowercase()),
        ValueKind::Bool => Some(if value.is_true() { "true".into() } else { "false".into() }),
        ValueKind::Number if value.is_integer() => Some(value.to_string()),
        _ => None,
    };
    if let Some(text) = &as_text {
        if BOOL_FILTER_TRUE.contains(&text.as_str()) {
            return Ok(Value::from(true));
        }
        if BOOL_FILTER_FALSE.contains(&text.as_str()) {
            return Ok(Value::from(false));
        }
    }
    // Anything else is compared with `1` (ansible's backwards-compatible fallback: a string or
    // an integer is compared as its lowered text, never equal), with ansible's deprecation.
    let result = as_text.is_none() && pyval::eq(value, &Value::from(1));
    tack_diag::deprecate(
        &tack_diag::Diagnostic::new(format!(
            "The `bool` filter coerced invalid value {} ({}) to {}.",
            pyval::repr_of(value),
            pyval::type_name(value),
            if result { "True" } else { "False" },
        )),
        "2.23",
    );
    Ok(Value::from(result))
}

fn ternary(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    if is_undefined(value) {
        return Ok(value.clone());
    }
    if let Some(none_val) = args.get(3)
        && value.is_none()
        && !none_val.is_none()
    {
        return Ok(none_val.clone());
    }
    let pick = if truthy(value) { args.get(1) } else { args.get(2) };
    Ok(pick.cloned().unwrap_or_default())
}

fn type_debug(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    if crate::markers::disarm(args.input()).is_some() {
        return Ok(Value::from("VaultExceptionMarker"));
    }
    crate::markers::disarm_within(args.input());
    Ok(Value::from(type_name(args.input())))
}

fn extract(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let mut keys = vec![args.input().clone()];
    match args.get(2) {
        None => {}
        Some(more) if more.is_none() => {}
        Some(more) if more.kind() == minijinja::value::ValueKind::Seq => {
            keys.extend(more.try_iter().into_iter().flatten());
        }
        Some(more) => keys.push(more.clone()),
    }
    let mut value = args.get(1).cloned().unwrap_or_default();
    for key in keys {
        if is_undefined(&value) {
            break;
        }
        value = getitem(&value, &key);
    }
    Ok(value)
}

/// Jinja2's `environment.getitem`: `obj[key]`, else the attribute named `key`, else undefined.
pub(super) fn getitem(obj: &Value, key: &Value) -> Value {
    match obj.get_item(key) {
        Ok(v) if !v.is_undefined() => v,
        _ => match key.as_str() {
            Some(name) => obj.get_attr(name).unwrap_or(Value::UNDEFINED),
            None => Value::UNDEFINED,
        },
    }
}

struct CommentStyle {
    beginning: &'static str,
    decoration: &'static str,
    end: &'static str,
}

fn comment_style(name: &str) -> Option<CommentStyle> {
    let (beginning, decoration, end) = match name {
        "plain" => ("", "# ", ""),
        "erlang" => ("", "% ", ""),
        "c" => ("", "// ", ""),
        "cblock" => ("/*", " * ", " */"),
        "xml" => ("<!--", " - ", "-->"),
        _ => return None,
    };
    Some(CommentStyle { beginning, decoration, end })
}

fn comment(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let style_name = args.get(1).map(pyval::str_of).unwrap_or_else(|| "plain".into());
    let Some(style) = comment_style(&style_name) else {
        return Err(FilterError::failed(format!(
            "Invalid style {}.",
            tack_yaml::pyrepr::str_repr(&style_name)
        )));
    };
    let kw = |name: &str| args.extra_kw.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let kw_str = |name: &str, default: String| kw(name).map(pyval::str_of).unwrap_or(default);
    let prepostfix = kw_str("decoration", style.decoration.to_string());
    let newline = kw_str("newline", "\n".into());
    let beginning = kw_str("beginning", style.beginning.to_string());
    let prefix = kw_str("prefix", prepostfix.trim_end().to_string());
    let decoration = kw_str("decoration", style.decoration.to_string());
    let postfix = kw_str("postfix", prepostfix.trim_end().to_string());
    let end = kw_str("end", style.end.to_string());
    let count = |name: &str| -> Result<usize, FilterError> {
        match kw(name) {
            None => Ok(1),
            Some(v) => match pyval::num(v) {
                Some(pyval::Num::Int(i)) => Ok(usize::try_from(i).unwrap_or(0)),
                _ => pyval::str_of(v)
                    .trim()
                    .parse::<i64>()
                    .map(|i| usize::try_from(i).unwrap_or(0))
                    .map_err(|_| {
                        FilterError::failed(format!(
                            "invalid literal for int() with base 10: {}",
                            pyval::repr_of(v)
                        ))
                    }),
            },
        }
    };
    let (prefix_count, postfix_count) = (count("prefix_count")?, count("postfix_count")?);
    let text = pyval::str_of(args.input());

    let mut out = String::new();
    if !beginning.is_empty() {
        out.push_str(&beginning);
        out.push_str(&newline);
    }
    if !prefix.is_empty() {
        let unit = if prefix != newline { format!("{prefix}{newline}") } else { newline.clone() };
        out.push_str(&unit.repeat(prefix_count));
    }
    let body = format!("{decoration}{}", text.replace(&newline, &format!("{newline}{decoration}")));
    let body = body
        .replace(&format!("{decoration}{newline}"), &format!("{}{newline}", decoration.trim_end()));
    out.push_str(&body);
    for _ in 0..postfix_count {
        out.push_str(&newline);
        out.push_str(&postfix);
    }
    if !end.is_empty() {
        out.push_str(&newline);
        out.push_str(&end);
    }
    Ok(Value::from(out))
}
