//! Python's view of minijinja values, as the filters need it: type names, truthiness, `==`,
//! `<`, `str()` and `repr()` (the last two through `tack_yaml::pyrepr`, the one home of those
//! rules).
//!
//! It must not grow its own repr rules; it converts and delegates.

use std::cmp::Ordering;

use minijinja::Value;
use minijinja::value::ValueKind;
use tack_yaml::pyrepr;

/// Python's type name of a value (`native_type_name`).
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value.kind() {
        ValueKind::Undefined => "UndefinedMarker",
        ValueKind::None => "NoneType",
        ValueKind::Bool => "bool",
        ValueKind::Number if value.is_integer() => "int",
        ValueKind::Number => "float",
        ValueKind::String => "str",
        ValueKind::Bytes => "bytes",
        ValueKind::Seq | ValueKind::Iterable => "list",
        ValueKind::Map => "dict",
        _ if value.downcast_object_ref::<crate::pybytes::PyBytes>().is_some() => "bytes",
        _ if let Some(class) = exception_class(value) => class,
        _ => match value.downcast_object_ref::<super::DateTime>() {
            Some(dt) if dt.0.time.is_none() => "date",
            Some(_) => "datetime",
            None => "object",
        },
    }
}

/// The class of a dumped failure's exception (`dump_object(marker).exception`), when known.
pub(crate) fn exception_class(value: &Value) -> Option<&'static str> {
    value.downcast_object_ref::<crate::markers::CapturedException>()?.class
}

/// `type(value).__name__` of a value as a filter receives it: ansible hands lists and dicts
/// to filters as its lazy containers, whose class names show in some messages.
pub(crate) fn class_name(value: &Value) -> &'static str {
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable => "_AnsibleLazyTemplateList",
        ValueKind::Map => "_AnsibleLazyTemplateDict",
        _ => type_name(value),
    }
}

/// `type(value)` as Python prints it in messages: `<class 'int'>`.
pub(crate) fn class_repr(value: &Value) -> String {
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map => format!(
            "<class 'ansible._internal._templating._lazy_containers.{}'>",
            class_name(value)
        ),
        _ => format!("<class '{}'>", type_name(value)),
    }
}

/// `bool(value)`.
pub(crate) fn truthy(value: &Value) -> bool {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => false,
        _ => value.is_true(),
    }
}

/// The value as tack's data model.
pub(crate) fn to_node(value: &Value) -> tack_yaml::Value {
    use tack_yaml::{Mapping, Node, Value as Y};
    if let Some(dt) = value.downcast_object_ref::<super::DateTime>() {
        return Y::Timestamp(dt.0.clone());
    }
    if let Some(bytes) = value.downcast_object_ref::<crate::pybytes::PyBytes>() {
        return Y::Bytes(bytes.0.clone());
    }
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => Y::Null,
        ValueKind::Bool => Y::Bool(value.is_true()),
        ValueKind::Number => match num(value) {
            Some(Num::Int(i)) => match i64::try_from(i) {
                Ok(small) => Y::Int(small),
                Err(_) => Y::BigInt(i.to_string()),
            },
            Some(Num::Float(f)) => Y::Float(f),
            None => Y::Str(value.to_string()),
        },
        ValueKind::String => Y::Str(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Seq | ValueKind::Iterable => Y::Seq(
            value
                .try_iter()
                .map(|it| it.map(|v| Node::bare(to_node(&v))).collect())
                .unwrap_or_default(),
        ),
        ValueKind::Map => {
            let mut m = Mapping::new();
            for key in value.try_iter().into_iter().flatten() {
                let item = value.get_item(&key).unwrap_or_default();
                m.insert(Node::bare(to_node(&key)), Node::bare(to_node(&item)));
            }
            Y::Map(m)
        }
        _ => Y::Str(value.to_string()),
    }
}

/// Data from tack's model as a template value.
pub(crate) fn from_node(value: &tack_yaml::Value) -> Value {
    use tack_yaml::Value as Y;
    match value {
        Y::Null => Value::from(()),
        Y::Bool(b) => Value::from(*b),
        Y::Int(i) => Value::from(*i),
        Y::BigInt(s) => {
            s.parse::<i128>().map(Value::from).unwrap_or_else(|_| Value::from(s.as_str()))
        }
        Y::Float(f) => Value::from(*f),
        Y::Str(s) | Y::Unsafe(s) => Value::from(s.as_str()),
        // Decrypting needs the run's secrets, which filters do not hold.
        Y::Vault(_) => Value::from(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            "tack cannot use a !vault value built inside a template",
        )),
        Y::Timestamp(t) => Value::from_object(super::DateTime(t.clone())),
        Y::Bytes(data) => Value::from_object(crate::pybytes::PyBytes(data.clone())),
        Y::Seq(items) => Value::from(items.iter().map(|n| from_node(&n.value)).collect::<Vec<_>>()),
        Y::Map(m) => {
            Value::from_pairs(m.iter().map(|(k, v)| (from_node(&k.value), from_node(&v.value))))
        }
    }
}

/// `str(value)`.
pub(crate) fn str_of(value: &Value) -> String {
    match value.as_str() {
        Some(s) => s.to_string(),
        None => match value.kind() {
            ValueKind::Number if !value.is_integer() => {
                f64::try_from(value.clone()).map(pyrepr::float_repr).unwrap_or_default()
            }
            ValueKind::Number => value.to_string(),
            _ => pyrepr::str(&to_node(value)),
        },
    }
}

/// [`str_of`], or the failure of a value inside that fails when used (an undecryptable
/// `!vault` value read into a container), as ansible's marker fails when `str()` reaches it.
pub(crate) fn try_str_of(value: &Value) -> Result<String, minijinja::Error> {
    match first_failure(value) {
        Some(e) => Err(e),
        None => Ok(str_of(value)),
    }
}

/// The failure of the first value inside `value` that fails when read, if any.
pub(crate) fn first_failure(value: &Value) -> Option<minijinja::Error> {
    let item_failure = |v: Result<Value, minijinja::Error>| match v {
        Ok(v) => first_failure(&v),
        Err(e) => Some(e),
    };
    match value.kind() {
        ValueKind::Invalid => Some(crate::markers::invalid_error(value)),
        ValueKind::Seq => value.try_iter().ok()?.checked().find_map(item_failure),
        ValueKind::Map => value.try_iter().ok()?.find_map(|key| item_failure(value.get_item(&key))),
        _ => None,
    }
}

/// `repr(value)`.
pub(crate) fn repr_of(value: &Value) -> String {
    pyrepr::repr(&to_node(value))
}

/// A number as Python sees it: bools are integers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// An integer as the smallest minijinja representation that holds it.
pub(crate) fn int_value(i: i128) -> Value {
    match i64::try_from(i) {
        Ok(small) => Value::from(small),
        Err(_) => Value::from(i),
    }
}

/// The number a value is, if Python would treat it as one (`bool` included).
pub(crate) fn num(value: &Value) -> Option<Num> {
    match value.kind() {
        ValueKind::Bool => Some(Num::Int(i128::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => i128::try_from(value.clone()).ok().map(Num::Int),
        ValueKind::Number => f64::try_from(value.clone()).ok().map(Num::Float),
        _ => None,
    }
}

fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        _ => a.as_f64().partial_cmp(&b.as_f64()),
    }
}

/// Python's `a == b`.
pub(crate) fn eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return num_cmp(x, y) == Some(Ordering::Equal);
    }
    match (a.kind(), b.kind()) {
        (ValueKind::String, ValueKind::String) => a.as_str() == b.as_str(),
        (ValueKind::None, ValueKind::None) => true,
        (ValueKind::Undefined, ValueKind::Undefined) => true,
        (ValueKind::Seq | ValueKind::Iterable, ValueKind::Seq | ValueKind::Iterable) => {
            let (Ok(xs), Ok(ys)) = (a.try_iter(), b.try_iter()) else { return false };
            let (xs, ys): (Vec<Value>, Vec<Value>) = (xs.collect(), ys.collect());
            xs.len() == ys.len() && xs.iter().zip(&ys).all(|(x, y)| eq(x, y))
        }
        (ValueKind::Map, ValueKind::Map) => {
            let (Ok(keys), Some(la), Some(lb)) = (a.try_iter(), a.len(), b.len()) else {
                return false;
            };
            la == lb
                && keys.into_iter().all(|k| match (a.get_item(&k), b.get_item(&k)) {
                    (Ok(x), Ok(y)) => !y.is_undefined() && eq(&x, &y),
                    _ => false,
                })
        }
        _ => false,
    }
}

/// `value in container` for a list (Python's `list.__contains__`).
pub(crate) fn contains(items: &[Value], value: &Value) -> bool {
    items.iter().any(|item| eq(item, value))
}

/// Python's ordering of `a` and `b` for `op` (`<` or `>`), or its `TypeError` text.
pub(crate) fn cmp(a: &Value, b: &Value, op: &str) -> Result<Ordering, String> {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        // NaN compares false both ways; Python's sort then keeps the order it has.
        return Ok(num_cmp(x, y).unwrap_or(Ordering::Equal));
    }
    match (a.kind(), b.kind()) {
        (ValueKind::String, ValueKind::String) => Ok(a.as_str().cmp(&b.as_str())),
        (ValueKind::Seq | ValueKind::Iterable, ValueKind::Seq | ValueKind::Iterable) => {
            let (Ok(xs), Ok(ys)) = (a.try_iter(), b.try_iter()) else {
                return Err(unorderable(a, b, op));
            };
            let (xs, ys): (Vec<Value>, Vec<Value>) = (xs.collect(), ys.collect());
            for (x, y) in xs.iter().zip(&ys) {
                if !eq(x, y) {
                    return cmp(x, y, op);
                }
            }
            Ok(xs.len().cmp(&ys.len()))
        }
        _ => Err(unorderable(a, b, op)),
    }
}

fn unorderable(a: &Value, b: &Value, op: &str) -> String {
    format!("'{op}' not supported between instances of '{}' and '{}'", class_name(a), class_name(b))
}

/// Whether a value can be a member of a Python set or a dict key.
pub(crate) fn hashable(value: &Value) -> bool {
    !matches!(value.kind(), ValueKind::Seq | ValueKind::Map | ValueKind::Iterable)
}

/// The items of a list-like value (list, tuple, iterator; a dict gives its keys; a string its
/// characters), as Python's `list(value)`.
pub(crate) fn list_of(value: &Value) -> Option<Vec<Value>> {
    match value.kind() {
        ValueKind::String => Some(
            value
                .as_str()
                .unwrap_or_default()
                .chars()
                .map(|c| Value::from(c.to_string()))
                .collect(),
        ),
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map => {
            value.try_iter().ok().map(Iterator::collect)
        }
        // `bytes`: its items are ints.
        _ if value.downcast_object_ref::<crate::pybytes::PyBytes>().is_some() => {
            value.try_iter().ok().map(Iterator::collect)
        }
        _ => None,
    }
}

/// Whether `value` is a sequence in ansible's `is_sequence` sense (not a string, not a dict).
pub(crate) fn is_sequence(value: &Value) -> bool {
    matches!(value.kind(), ValueKind::Seq | ValueKind::Iterable)
}
