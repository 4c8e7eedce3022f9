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
use minijinja::value::{Kwargs, Rest, Value as JValue, ValueKind, ValueOrKwargs, from_args};
use minijinja::{Environment, Error, ErrorKind};

use crate::value::MAX_VALUE_DEPTH;
use crate::vars::objects::{Dict, List, is_view};
use methods::{argument, recursion_error};

/// Registers the Jinja2 builtins tack provides itself.
pub(crate) fn register(env: &mut Environment<'static>) {
    env.add_function("dict", dict);
    env.add_function("cycler", |items: minijinja::value::Rest<JValue>| {
        minijinja_contrib::globals::cycler(items.0)
    });
    env.add_function("joiner", minijinja_contrib::globals::joiner);
    env.add_function("now", now);
    env.add_function("namespace", namespace);
    env.add_function(crate::engine::prepass::NAMESPACE_CHECK, namespace_check);
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

/// How many values one check may visit: a value shared many times over inside a namespace
/// (a list of the same list, over and over) is not walked past this.
const VISIT_BUDGET: usize = 1_000_000;

/// Jinja2's `namespace()` as ansible's templates see it: the values it starts with are copies
/// (ansible hands containers to calls by value).
///
/// A namespace is minijinja's own object (its `{% set ns.x = ... %}` assignment only works on
/// that type), and minijinja prints one, for `~`, with no depth limit of its own: a namespace
/// that held itself would recurse until the stack ran out, ending the run for every host.
/// ansible prints such a namespace with Python's `{...}`; tack fails the template at the
/// assignment that closes the loop ([`namespace_check`], which the pre-pass calls after every
/// `{% set ns.x = ... %}`), with the message ansible gives for a value nested past Python's
/// recursion limit.
fn namespace(raw: Rest<ValueOrKwargs>) -> Result<JValue, Error> {
    let raw = raw.into_values();
    let (defaults, kwargs): (Option<JValue>, Kwargs) = from_args(&raw)?;
    let mut pairs = Vec::new();
    if let Some(defaults) = &defaults {
        // minijinja's own error names what was passed instead of a mapping.
        if defaults.kind() != ValueKind::Map {
            return minijinja::functions::namespace(Some(from_args::<(ValueOrKwargs,)>(&raw)?.0));
        }
        for key in defaults.try_iter()? {
            let value = defaults.get_item(&key)?;
            pairs.push((key, argument(&value)?));
        }
    }
    for key in kwargs.args() {
        pairs.push((JValue::from(key), argument(&kwargs.peek::<JValue>(key)?)?));
    }
    if defaults.is_none() && pairs.is_empty() {
        return minijinja::functions::namespace(None);
    }
    let start = crate::value::new_dict(pairs.into_iter().collect());
    minijinja::functions::namespace(Some(from_args::<(ValueOrKwargs,)>(&[start])?.0))
}

/// Fails when the value just assigned to `ns.attr` leads back to `ns` (or nests deeper than a
/// template value may): a walk down from it then never ends, so one that passes the depth
/// limit is refused. Only what a template made is walked: a binding's containers and the
/// views over variables (`vars`, `hostvars`) cannot hold a namespace, and reading them would
/// render their templates.
fn namespace_check(ns: JValue, attr: &str) -> Result<JValue, Error> {
    let mut budget = VISIT_BUDGET;
    walk(&ns.get_attr(attr)?, 0, &mut budget)?;
    Ok(JValue::from(()))
}

fn walk(value: &JValue, depth: usize, budget: &mut usize) -> Result<(), Error> {
    if *budget == 0 || value.as_object().is_none() || value.as_str().is_some() {
        return Ok(());
    }
    *budget -= 1;
    if depth > MAX_VALUE_DEPTH {
        return Err(recursion_error());
    }
    let children = if let Some(list) = value.downcast_object_ref::<List>() {
        list.own_items().unwrap_or_default()
    } else if let Some(dict) = value.downcast_object_ref::<Dict>() {
        dict.own_values().unwrap_or_default()
    } else if is_view(value) {
        Vec::new()
    } else {
        match value.kind() {
            ValueKind::Seq => value.try_iter()?.collect(),
            ValueKind::Map => {
                value.try_iter()?.map(|key| value.get_item(&key)).collect::<Result<_, _>>()?
            }
            _ => Vec::new(),
        }
    };
    for child in &children {
        walk(child, depth + 1, budget)?;
    }
    Ok(())
}
