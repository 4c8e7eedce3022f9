//! Python's behaviours on template values, as ansible users rely on them: methods of `str`,
//! `list` and `dict` (including the in-place ones ansible 2.21 allows), `str()`/`repr()`, and
//! Jinja2 builtins where minijinja's differ from Jinja2's.
//!
//! Formatting rules for numbers and strings come from `tack_yaml::pyrepr`; this module must
//! not grow its own copy of them.

pub(crate) mod format;
pub(crate) mod memory;
pub(crate) mod methods;
pub(crate) mod percent;
pub(crate) mod repr;
pub(crate) mod strings;

use indexmap::IndexMap;
use minijinja::value::{Kwargs, Value as JValue, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

/// Registers the Jinja2 builtins tack provides itself.
pub(crate) fn register(env: &mut Environment<'static>) {
    env.add_function("dict", dict);
    env.add_function("cycler", |items: minijinja::value::Rest<JValue>| {
        minijinja_contrib::globals::cycler(items.0)
    });
    env.add_function("joiner", minijinja_contrib::globals::joiner);
    env.add_function("now", now);
}

/// ansible's `now(utc=False, fmt=None)`: the current time as a `datetime`, or with `fmt` the
/// text its `strftime(fmt)` gives. tack's clock is UTC either way.
fn now(utc: Option<bool>, kwargs: Kwargs) -> Result<JValue, Error> {
    let _ = utc.or(kwargs.get::<Option<bool>>("utc")?);
    let fmt = kwargs.get::<Option<JValue>>("fmt")?;
    kwargs.assert_all_used()?;
    let stamp = crate::engine::template_file::timestamp(std::time::SystemTime::now());
    match fmt {
        Some(fmt) if !fmt.is_none() => {
            let fmt = crate::python::repr::str_of(&fmt)?;
            crate::filters::strftime_of(&stamp, &fmt).map(JValue::from)
        }
        _ => Ok(JValue::from_object(crate::vars::objects::PyDateTime(stamp))),
    }
}

/// Jinja2's `dict()` global is Python's `dict`: a mapping or an iterable of pairs, then
/// keyword arguments (minijinja's takes only a mapping).
fn dict(value: Option<JValue>, kwargs: Kwargs) -> Result<JValue, Error> {
    let mut entries = IndexMap::new();
    match value {
        None => {}
        Some(v) if v.is_undefined() => return Err(crate::value::undefined_error(&v)),
        Some(v) if v.kind() == ValueKind::Map => {
            for k in v.try_iter()? {
                let item = v.get_item(&k)?;
                entries.insert(k, item);
            }
        }
        Some(v) => {
            for (i, pair) in v.try_iter()?.enumerate() {
                let items: Vec<JValue> = pair.try_iter()?.collect();
                let [k, item] = <[JValue; 2]>::try_from(items).map_err(|items| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        format!(
                            "dictionary update sequence element #{i} has length {}; 2 is required",
                            items.len()
                        ),
                    )
                })?;
                entries.insert(k, item);
            }
        }
    }
    for key in kwargs.args() {
        entries.insert(JValue::from(key), kwargs.peek::<JValue>(key)?);
    }
    Ok(crate::value::new_dict(entries))
}
