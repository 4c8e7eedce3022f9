//! Python's `str()`, `repr()` and type names of template values: what a `{{ }}` block prints
//! and what ansible's messages name.
//!
//! The rules themselves (float digits, string quoting) live in `tack_yaml::pyrepr`; this
//! module only turns template values into loaded values to apply them, so a failure inside a
//! container (an undefined variable in a nested template) surfaces here as ansible's does.

use minijinja::Error;
use minijinja::value::{Value as JValue, ValueKind};
use tack_yaml::pyrepr;

use crate::value::{is_undefined, to_value, undefined_error};
use crate::vars::objects::{Dict, List, Omit};

/// `str(value)`: what a `{{ }}` block writes.
pub(crate) fn str_of(value: &JValue) -> Result<String, Error> {
    if let Some(s) = value.as_str() {
        return Ok(s.to_string());
    }
    if is_undefined(value) {
        return Err(undefined_error(value));
    }
    Ok(pyrepr::str(&to_value(value)?))
}

/// `repr(value)`.
pub(crate) fn repr_of(value: &JValue) -> Result<String, Error> {
    if is_undefined(value) {
        return Err(undefined_error(value));
    }
    Ok(pyrepr::repr(&to_value(value)?))
}

/// `repr(value)` where a failure cannot be reported (minijinja's infallible `Display`): a
/// part that cannot be rendered prints as `<error>`.
pub(crate) fn repr_lossy(value: &JValue) -> String {
    repr_of(value).unwrap_or_else(|_| "<error>".to_string())
}

/// The Python type name ansible would report (`str`, `int`, `dict`, `NoneType`, ...).
pub(crate) fn type_name(value: &JValue) -> &'static str {
    if value.downcast_object_ref::<List>().is_some() {
        return "list";
    }
    if value.downcast_object_ref::<Dict>().is_some() {
        return "dict";
    }
    if value.downcast_object_ref::<Omit>().is_some() {
        return "Omit";
    }
    if let Some(date) = value.downcast_object_ref::<crate::vars::objects::PyDateTime>() {
        return if date.0.time.is_some() { "datetime" } else { "date" };
    }
    if value.downcast_object_ref::<crate::pybytes::PyBytes>().is_some() {
        return "bytes";
    }
    if let Some(class) = crate::filters::exception_class(value) {
        return class;
    }
    match value.kind() {
        ValueKind::Undefined => "AnsibleUndefined",
        ValueKind::None => "NoneType",
        ValueKind::Bool => "bool",
        ValueKind::Number if value.is_integer() => "int",
        ValueKind::Number => "float",
        ValueKind::String => "str",
        ValueKind::Bytes => "bytes",
        ValueKind::Seq => "list",
        ValueKind::Map => "dict",
        ValueKind::Iterable => "generator",
        ValueKind::Plain => "object",
        ValueKind::Invalid => "object",
        _ => "object",
    }
}
