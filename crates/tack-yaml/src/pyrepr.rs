//! Python's `repr()` and `str()` of loaded values, as ansible's messages, loop labels and
//! templates show them: strings (`'a'`, `"it's"`), floats (`1.5`, `1e+16`, `inf`), `True`,
//! `None`, `{'a': 1}`, dates.
//!
//! The scalar rules (string quoting and escapes, float digits) are CPython's and live in
//! `tack_py::repr`; they are re-exported here so `pyrepr` answers for every loaded value. What
//! this module adds is the shape of containers, dates and ansible's vault values.

pub use tack_py::repr::{bytes_repr, float_repr, str_repr};

use crate::value::{Node, Timestamp, Value};

/// `repr(value)` as CPython prints it.
pub fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// `repr()` of a node's value.
pub fn node_repr(node: &Node) -> String {
    repr(&node.value)
}

/// `str(value)`: strings bare, dates in ISO form, everything else as `repr`.
pub fn str(value: &Value) -> String {
    match value {
        Value::Str(s) | Value::Unsafe(s) => s.clone(),
        Value::Timestamp(t) => timestamp_str(t),
        _ => repr(value),
    }
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, &item.value);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, &k.value);
                out.push_str(": ");
                write_repr(out, &v.value);
            }
            out.push('}');
        }
        Value::Vault(s) => out.push_str(&str_repr(s)),
        other => out.push_str(&py_key_repr(other)),
    }
}

/// Python's `repr()` of a mapping key as ansible's duplicate-key warning shows it.
pub fn py_key_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(digits) => digits.clone(),
        Value::Float(f) => float_repr(*f),
        Value::Str(s) | Value::Unsafe(s) => str_repr(s),
        Value::Timestamp(t) => timestamp_repr(t),
        Value::Vault(_) => "<EncryptedString>".into(),
        Value::Bytes(b) => bytes_repr(b),
        Value::Seq(_) | Value::Map(_) => "<unhashable>".into(),
    }
}

/// `repr()` of a `date` or `datetime`.
pub fn timestamp_repr(t: &Timestamp) -> String {
    let Some(time) = &t.time else {
        return format!("datetime.date({}, {}, {})", t.year, t.month, t.day);
    };
    let mut fields = vec![
        t.year.to_string(),
        t.month.to_string(),
        t.day.to_string(),
        time.hour.to_string(),
        time.minute.to_string(),
    ];
    if time.second != 0 || time.microsecond != 0 {
        fields.push(time.second.to_string());
    }
    if time.microsecond != 0 {
        fields.push(time.microsecond.to_string());
    }
    let tz = match time.utc_offset_minutes {
        None => String::new(),
        Some(0) => ", tzinfo=datetime.timezone.utc".into(),
        Some(m) => {
            let seconds = i64::from(m) * 60;
            let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
            let delta = if days != 0 {
                format!("days={days}, seconds={rest}")
            } else {
                format!("seconds={rest}")
            };
            format!(", tzinfo=datetime.timezone(datetime.timedelta({delta}))")
        }
    };
    format!("datetime.datetime({}{tz})", fields.join(", "))
}

/// `str()` of a `date` or `datetime`: `2001-12-14`, `2001-12-14 21:59:43.100000-05:00`.
pub fn timestamp_str(t: &Timestamp) -> String {
    let date = format!("{:04}-{:02}-{:02}", t.year, t.month, t.day);
    let Some(time) = &t.time else { return date };
    let mut out = format!("{date} {:02}:{:02}:{:02}", time.hour, time.minute, time.second);
    if time.microsecond != 0 {
        out.push_str(&format!(".{:06}", time.microsecond));
    }
    if let Some(m) = time.utc_offset_minutes {
        let sign = if m < 0 { '-' } else { '+' };
        out.push_str(&format!("{sign}{:02}:{:02}", m.abs() / 60, m.abs() % 60));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mapping;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.into()))
    }

    #[test]
    fn containers_and_scalars_as_python_prints_them() {
        let map: Mapping = [(s("a"), Node::bare(Value::Float(1e16)))].into_iter().collect();
        let list =
            Value::Seq(vec![s("it's"), Node::bare(Value::Null), Node::bare(Value::Map(map))]);
        assert_eq!(repr(&list), "[\"it's\", None, {'a': 1e+16}]");
        assert_eq!(str(&Value::Str("bare".into())), "bare");
    }
}
