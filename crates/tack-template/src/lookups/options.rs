//! Plugin options as ansible's config manager types them for a lookup's `set_options(direct=
//! kwargs)`: integers, booleans, strings and choices, failing (where ansible fails) with its
//! wording. Also the
//! Python views of values the lookups' messages show.
//!
//! It owns only option coercion; it knows nothing about any lookup.

use minijinja::value::{Value as JValue, ValueKind};

use super::LookupError;

/// `Config 'NAME' for 'PLUGIN' lookup plugin from 'Direct' has an invalid value: ...`.
fn invalid(plugin: &str, option: &str, detail: &str) -> LookupError {
    LookupError::failed(format!(
        "Config '{option}' for '{plugin}' lookup plugin from 'Direct' has an invalid value: {detail}"
    ))
}

/// Python's `str()` of a value.
pub(crate) fn py_str(value: &JValue) -> String {
    crate::python::repr::str_of(value).unwrap_or_else(|_| crate::python::repr::repr_lossy(value))
}

/// Python's `repr()` of a value.
pub(crate) fn py_repr(value: &JValue) -> String {
    crate::python::repr::repr_of(value).unwrap_or_else(|_| crate::python::repr::repr_lossy(value))
}

/// An option of type `integer`.
pub(crate) fn int(plugin: &str, option: &str, value: &JValue) -> Result<i64, LookupError> {
    let bad = || {
        invalid(
            plugin,
            option,
            &format!("Invalid value provided for 'integer': {}", py_repr(value)),
        )
    };
    match value.kind() {
        ValueKind::Bool => Ok(i64::from(value.is_true())),
        ValueKind::Number if value.is_integer() => i64::try_from(value.clone()).map_err(|_| bad()),
        ValueKind::Number => {
            let f = f64::try_from(value.clone()).map_err(|_| bad())?;
            if f.fract() == 0.0 { Ok(f as i64) } else { Err(bad()) }
        }
        ValueKind::String => {
            tack_py::num::int(value.as_str().unwrap_or_default()).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// ansible's `boolean(value, strict=False)` (`subelements` reads its `skip_missing` flag so).
pub(crate) fn loose_bool(value: &JValue) -> bool {
    tack_py::boolean::loose(crate::value::boolean_input(value))
}

/// An option of type `bool`: the config manager's non-strict `boolean()`, which never fails;
/// `None` leaves the option at its `default`.
pub(crate) fn boolean(value: &JValue, default: bool) -> bool {
    if value.is_none() { default } else { loose_bool(value) }
}

/// An option with a closed set of values.
pub(crate) fn choice(
    plugin: &str,
    option: &str,
    value: &str,
    choices: &[&str],
) -> Result<(), LookupError> {
    if choices.contains(&value) {
        return Ok(());
    }
    Err(LookupError::failed(format!(
        "Invalid value {} for config '{option}' for '{plugin}' lookup plugin.",
        tack_yaml::pyrepr::str_repr(value)
    )))
}

/// An option of type `str` (ansible converts other scalars with `str()`).
pub(crate) fn string(value: &JValue) -> String {
    py_str(value)
}
