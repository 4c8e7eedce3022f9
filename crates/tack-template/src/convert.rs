//! Conversions between tack's loaded data and minijinja values.

use minijinja::value::{Value as JValue, ValueKind};
use tack_yaml::{Mapping, Node, Value, pyrepr};

/// A loaded value as a Jinja2 value (templates inside are not rendered here).
pub fn to_jinja(value: &Value) -> JValue {
    match value {
        Value::Null => JValue::from(()),
        Value::Bool(b) => JValue::from(*b),
        Value::Int(i) => JValue::from(*i),
        Value::BigInt(s) => {
            s.parse::<i128>().map(JValue::from).unwrap_or_else(|_| JValue::from(s.as_str()))
        }
        Value::Float(f) => JValue::from(*f),
        Value::Str(s) | Value::Unsafe(s) => JValue::from(s.as_str()),
        Value::Timestamp(t) => JValue::from(pyrepr::timestamp_str(t)),
        Value::Vault(s) => JValue::from(s.as_str()),
        Value::Seq(items) => items.iter().map(|n| to_jinja(&n.value)).collect(),
        Value::Map(m) => {
            JValue::from_iter(m.iter().map(|(k, v)| (to_jinja(&k.value), to_jinja(&v.value))))
        }
    }
}

/// A Jinja2 value as loaded data.
pub fn from_jinja(value: &JValue) -> Value {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => Value::Null,
        ValueKind::Bool => Value::Bool(value.is_true()),
        ValueKind::Number => {
            if let Ok(i) = i64::try_from(value.clone()) {
                Value::Int(i)
            } else if let Ok(f) = f64::try_from(value.clone()) {
                if value.to_string().contains(['.', 'e', 'E', 'n', 'i']) {
                    Value::Float(f)
                } else {
                    Value::BigInt(value.to_string())
                }
            } else {
                Value::Str(value.to_string())
            }
        }
        ValueKind::String => Value::Str(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Seq | ValueKind::Iterable => match value.try_iter() {
            Ok(iter) => Value::Seq(iter.map(|v| Node::bare(from_jinja(&v))).collect()),
            Err(_) => Value::Str(value.to_string()),
        },
        ValueKind::Map => {
            let mut m = Mapping::new();
            if let Ok(keys) = value.try_iter() {
                for k in keys {
                    let v = value.get_item(&k).unwrap_or_default();
                    m.insert(Node::bare(from_jinja(&k)), Node::bare(from_jinja(&v)));
                }
            }
            Value::Map(m)
        }
        _ => Value::Str(value.to_string()),
    }
}
