//! The type checkers of ansible's `DEFAULT_TYPE_VALIDATORS` (`check_type_str`, `_list`,
//! `_dict`, `_bool`, `_int`, `_float`, `_path`, `_raw`, `_bytes`, `_bits`, `_jsonarg`): each
//! turns a value into the wanted type or gives the `TypeError` text ansible's
//! `ArgumentSpecValidator` quotes.
//!
//! A value "tagged" here is one that came into the validator (ansible's controller values
//! carry their origin, so `type(value)` names `_AnsibleTaggedStr`, ...); what a checker makes
//! is plain. The tag is the node's origin: [`super::tag`] gives every input node one, and
//! new nodes are made bare.

use tack_yaml::{Mapping, Node, Value};

/// `str(type(value))` as ansible's messages print it.
pub(crate) fn type_repr(node: &Node) -> String {
    match (&node.value, node.origin.is_some()) {
        (Value::Null | Value::Bool(_), _) => format!("<class '{}'>", node.value.python_type()),
        (v, true) => v.loaded_type_repr(),
        (v, false) => format!("<class '{}'>", v.python_type()),
    }
}

/// `type(value).__name__` (the class name Python's own `TypeError`s use).
pub(crate) fn class_name(node: &Node) -> &'static str {
    match (&node.value, node.origin.is_some()) {
        (Value::Null | Value::Bool(_), _) => node.value.python_type(),
        (v, true) => v.loaded_type_name(),
        (v, false) => v.python_type(),
    }
}

/// `to_native(value)`: Python's `str()`.
pub(crate) fn py_str(value: &Value) -> String {
    tack_yaml::pyrepr::str(value)
}

fn bare(value: Value) -> Node {
    Node::bare(value)
}

/// The checker a spec's `type` (or `elements`) names; `None` for a name ansible has no checker
/// for (calling it fails with Python's `'NoneType' object is not callable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checker {
    Str,
    List,
    Dict,
    Bool,
    Int,
    Float,
    Path,
    Raw,
    Json,
    Bytes,
    Bits,
}

impl Checker {
    pub(crate) fn named(name: &str) -> Option<Checker> {
        Some(match name {
            "str" => Checker::Str,
            "list" => Checker::List,
            "dict" => Checker::Dict,
            "bool" => Checker::Bool,
            "int" => Checker::Int,
            "float" => Checker::Float,
            "path" => Checker::Path,
            "raw" => Checker::Raw,
            "jsonarg" | "json" => Checker::Json,
            "bytes" => Checker::Bytes,
            "bits" => Checker::Bits,
            _ => return None,
        })
    }

    pub(crate) fn check(self, node: &Node) -> Result<Node, String> {
        match self {
            Checker::Str => Ok(check_str(node)),
            Checker::List => check_list(node),
            Checker::Dict => check_dict(node),
            Checker::Bool => check_bool(node).map(|b| bare(Value::Bool(b))),
            Checker::Int => check_int(node),
            Checker::Float => check_float(node),
            Checker::Path => Ok(check_path(node)),
            Checker::Raw => Ok(node.clone()),
            Checker::Json => check_json(node),
            Checker::Bytes => human_to_bytes(node, false)
                .ok_or_else(|| format!("{} cannot be converted to a Byte value", type_repr(node))),
            Checker::Bits => human_to_bytes(node, true)
                .ok_or_else(|| format!("{} cannot be converted to a Bit value", type_repr(node))),
        }
    }
}

fn check_str(node: &Node) -> Node {
    match &node.value {
        Value::Str(_) | Value::Unsafe(_) => node.clone(),
        Value::Null => bare(Value::Str(String::new())),
        other => bare(Value::Str(py_str(other))),
    }
}

fn check_path(node: &Node) -> Node {
    let text = py_str(&check_str(node).value);
    let env = tack_py::path::ProcessEnv;
    let vars = tack_py::path::expandvars(std::path::Path::new(&text), &env);
    let home = tack_py::path::expanduser(&vars, &env);
    bare(Value::Str(home.to_string_lossy().into_owned()))
}

fn check_list(node: &Node) -> Result<Node, String> {
    match &node.value {
        Value::Seq(_) => Ok(node.clone()),
        Value::Str(s) | Value::Unsafe(s) => {
            Ok(bare(Value::Seq(s.split(',').map(|p| bare(Value::Str(p.into()))).collect())))
        }
        v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_)) => {
            Ok(bare(Value::Seq(vec![bare(Value::Str(py_str(v)))])))
        }
        _ => Err(format!("{} cannot be converted to a list", type_repr(node))),
    }
}

fn check_dict(node: &Node) -> Result<Node, String> {
    let text = match &node.value {
        Value::Map(_) => return Ok(node.clone()),
        Value::Str(s) | Value::Unsafe(s) => s,
        _ => return Err(format!("{} cannot be converted to a dict", type_repr(node))),
    };
    if text.starts_with('{') {
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(text) {
            return Ok(plain(crate::json::from_json(&json)));
        }
        if let Some(v) = tack_agent::modules::pylit::literal_eval(text)
            && v.is_object()
        {
            return Ok(plain(crate::json::from_json(&v)));
        }
        return Err("unable to evaluate string as dictionary".into());
    }
    if !text.contains('=') {
        return Err("dictionary requested, could not parse JSON or key=value".into());
    }
    let fields = tack_agent::modules::argspec::kv_fields(tack_py::text::strip(text));
    let mut map = Mapping::new();
    for field in fields {
        let Some((k, v)) = field.split_once('=') else {
            return Err(
                "unable to evaluate string in the \"key=value\" format as dictionary".into()
            );
        };
        map.insert(bare(Value::Str(k.into())), bare(Value::Str(v.into())));
    }
    Ok(bare(Value::Map(map)))
}

/// A parsed value made plain: nothing a checker builds carries a tag.
fn plain(node: Node) -> Node {
    let value = match node.value {
        Value::Seq(items) => Value::Seq(items.into_iter().map(plain).collect()),
        Value::Map(m) => {
            let mut out = Mapping::new();
            for (k, v) in m.iter() {
                out.insert(plain(k.clone()), plain(v.clone()));
            }
            Value::Map(out)
        }
        other => other,
    };
    Node::bare(value)
}

/// `check_type_bool`: `boolean(value, strict=True)` for a string or number.
fn check_bool(node: &Node) -> Result<bool, String> {
    match &node.value {
        Value::Bool(_)
        | Value::Str(_)
        | Value::Unsafe(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Float(_) => node.value.boolean_strict(),
        _ => Err(format!("{} cannot be converted to a bool", type_repr(node))),
    }
}

/// An integral number as Python's `int`: `i64` when it fits, else its digits.
fn int_value(digits: &str) -> Value {
    match digits.parse::<i64>() {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(digits.to_string()),
    }
}

/// The integer a float holds exactly (`int(f)` for an integral float).
fn float_int(f: f64) -> Value {
    if f.abs() < 9.0e18 { Value::Int(f as i64) } else { int_value(&format!("{f:.0}")) }
}

/// `int(decimal.Decimal(text))` when that is exact: `None` for text `Decimal` refuses, a
/// fractional value, or NaN.
fn decimal_int(text: &str) -> Option<Value> {
    let cleaned: String = tack_py::text::strip(text).chars().filter(|c| *c != '_').collect();
    let (negative, rest) = match cleaned.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, cleaned.strip_prefix('+').unwrap_or(&cleaned)),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return None;
    }
    let mut digits = format!("{int_part}{frac_part}");
    let point = i64::try_from(int_part.len()).ok()? + exponent;
    let len = i64::try_from(digits.len()).ok()?;
    if point >= len {
        // Keeps a hostile exponent from asking for an enormous string.
        if point - len > 4300 {
            return None;
        }
        digits.push_str(&"0".repeat(usize::try_from(point - len).ok()?));
    } else {
        let keep = usize::try_from(point.max(0)).ok()?;
        if digits[keep..].chars().any(|c| c != '0') {
            return None;
        }
        digits.truncate(keep);
    }
    let trimmed = digits.trim_start_matches('0');
    let body = if trimmed.is_empty() { "0" } else { trimmed };
    let sign = if negative && body != "0" { "-" } else { "" };
    Some(int_value(&format!("{sign}{body}")))
}

fn check_int(node: &Node) -> Result<Node, String> {
    let converted = match &node.value {
        Value::Int(_) | Value::BigInt(_) | Value::Bool(_) => return Ok(node.clone()),
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 => Some(float_int(*f)),
        Value::Str(s) | Value::Unsafe(s) => decimal_int(s),
        _ => None,
    };
    converted.map(bare).ok_or_else(|| {
        format!("\"{}\" cannot be converted to an int", tack_yaml::pyrepr::repr(&node.value))
    })
}

fn check_float(node: &Node) -> Result<Node, String> {
    let f = match &node.value {
        Value::Float(_) => return Ok(node.clone()),
        Value::Int(i) => Some(*i as f64),
        Value::BigInt(d) => d.parse::<f64>().ok(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Str(s) | Value::Unsafe(s) => tack_py::num::float(s),
        _ => None,
    };
    f.map(|f| bare(Value::Float(f)))
        .ok_or_else(|| format!("{} cannot be converted to a float", type_repr(node)))
}

fn check_json(node: &Node) -> Result<Node, String> {
    match &node.value {
        Value::Str(s) | Value::Unsafe(s) => {
            Ok(bare(Value::Str(tack_py::text::strip(s).to_string())))
        }
        Value::Seq(_) | Value::Map(_) => {
            tack_yaml::to_json(node, &tack_yaml::JsonOptions::compact())
                .map(|text| bare(Value::Str(text)))
                .map_err(|e| e.to_string())
        }
        _ => Err(format!("{} cannot be converted to a json string", type_repr(node))),
    }
}

/// `human_to_bytes(value, isbits=...)`; `None` for anything it raises `ValueError` on (the
/// caller's message does not say which).
fn human_to_bytes(node: &Node, isbits: bool) -> Option<Node> {
    let text = py_str(&node.value);
    let body = text.strip_suffix('\n').unwrap_or(&text).trim_end_matches(char::is_whitespace);
    let digits_end = body.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(body.len());
    let number = &body[..digits_end];
    let valid_number = match number.split_once('.') {
        None => !number.is_empty(),
        Some((a, b)) => !b.is_empty() && !b.contains('.') && a.chars().all(|c| c.is_ascii_digit()),
    };
    if !valid_number {
        return None;
    }
    let unit = body[digits_end..].trim_start_matches(char::is_whitespace);
    if !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let num: f64 = number.parse().ok()?;
    if unit.is_empty() {
        return Some(bare(float_int(num.round_ties_even())));
    }
    const RANGES: [(char, u32, &str, &str); 9] = [
        ('Y', 80, "yottabyte", "yottabit"),
        ('Z', 70, "zetabyte", "zetabit"),
        ('E', 60, "exabyte", "exabit"),
        ('P', 50, "petabyte", "petabit"),
        ('T', 40, "terabyte", "terabit"),
        ('G', 30, "gigabyte", "gigabit"),
        ('M', 20, "megabyte", "megabit"),
        ('K', 10, "kilobyte", "kilobit"),
        ('B', 0, "byte", "bit"),
    ];
    let key = unit.chars().next()?.to_ascii_uppercase();
    let (_, shift, byte_word, bit_word) = RANGES.iter().find(|r| r.0 == key)?;
    if unit.len() > 1 {
        let (word, short) = if isbits {
            (*bit_word, if key == 'B' { "b".to_string() } else { format!("{key}b") })
        } else {
            (*byte_word, if key == 'B' { "B".to_string() } else { format!("{key}B") })
        };
        if unit.to_lowercase() != word && unit != short {
            return None;
        }
    }
    let limit = 2f64.powi(i32::try_from(*shift).ok()?);
    Some(bare(float_int((num * limit).round_ties_even())))
}
