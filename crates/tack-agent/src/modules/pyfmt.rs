//! Python's `str()` and `repr()` of JSON values, for messages ansible builds with them.

use serde_json::Value;

/// The value as ansible's `boolean()` tells values apart.
pub fn boolean_input(value: &Value) -> tack_py::boolean::Input<'_> {
    use tack_py::boolean::Input;
    match value {
        Value::Bool(b) => Input::Bool(*b),
        Value::Number(n) if n.is_f64() => n.as_f64().map_or(Input::Other, Input::Float),
        Value::Number(n) => n.as_i64().map_or(Input::Other, Input::Int),
        Value::String(s) => Input::Text(s),
        Value::Null | Value::Array(_) | Value::Object(_) => Input::Other,
    }
}

/// `str(value)` as Python prints the value ansible would hold.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `repr(value)`.
pub fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) if n.is_f64() => float_repr(n.as_f64().unwrap_or(f64::NAN)),
        Value::Number(n) => n.to_string(),
        Value::String(s) => str_repr(s),
        Value::Array(items) => {
            format!("[{}]", items.iter().map(py_repr).collect::<Vec<_>>().join(", "))
        }
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", str_repr(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        let s = format!("{f:e}");
        // Rust writes `1e20`; Python writes `1e+20` with at least two exponent digits.
        if let Some((mant, exp)) = s.split_once('e') {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            return format!("{mant}e{sign}{digits:0>2}");
        }
        return s;
    }
    let s = format!("{f}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}
