//! Python's `str()` and `repr()` of JSON values, for messages ansible builds with them: the
//! shape of lists and dicts here, every string and float through `tack_py::repr`.

use serde_json::Value;
use tack_py::repr::{float_repr, str_repr};

/// The value as ansible's `boolean()` tells values apart.
pub(super) fn boolean_input(value: &Value) -> tack_py::boolean::Input<'_> {
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
pub(super) fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `repr(value)`.
pub(super) fn py_repr(value: &Value) -> String {
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
