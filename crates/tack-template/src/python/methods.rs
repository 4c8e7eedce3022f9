//! Methods of Python's `str`, `list` and `dict` called from templates (`x.split(',')`,
//! `l.append(1)`, `d.get('k', 0)`).
//!
//! String methods start from `minijinja-contrib`'s `pycompat` and add what it lacks; list and
//! dict methods are implemented here because tack's containers change in place (ansible 2.21
//! lets `append`, `extend`, `update`, `pop`, ... change a variable's value for the rest of the
//! template).

use std::sync::Arc;

use indexmap::IndexMap;
use minijinja::value::{Kwargs, Object, Value as JValue, ValueKind, from_args};
use minijinja::{Error, ErrorKind, State};

use super::repr::type_name;
use crate::value::{is_undefined, new_dict, new_list, undefined_error};
use crate::vars::objects::{Dict, List};

fn no_attribute(value: &JValue, method: &str) -> Error {
    crate::engine::no_attribute_error(type_name(value), method)
}

/// The environment's fallback for methods minijinja does not know.
pub(crate) fn unknown_method(
    state: &mut State,
    value: &JValue,
    method: &str,
    args: &[JValue],
) -> Result<JValue, Error> {
    if is_undefined(value) {
        return Err(undefined_error(value));
    }
    if let Some(s) = value.as_str() {
        return match super::strings::call(state, s, method, args) {
            Some(result) => result,
            None => Err(no_attribute(value, method)),
        };
    }
    match value.kind() {
        ValueKind::Seq => {
            let items: Vec<JValue> = value.try_iter()?.collect();
            let list = Arc::new(List::new(items));
            match read_only_list_method(&list, method, args) {
                Some(result) => result,
                None => Err(no_attribute(value, method)),
            }
        }
        ValueKind::Map => {
            let mut entries = IndexMap::new();
            for k in value.try_iter()? {
                let v = value.get_item(&k)?;
                entries.insert(k, v);
            }
            let dict = Arc::new(Dict::new(entries));
            match read_only_dict_method(&dict, method, args) {
                Some(result) => result,
                None => Err(no_attribute(value, method)),
            }
        }
        _ => Err(no_attribute(value, method)),
    }
}

/// A value handed to a method that keeps it (`append`, `update`, ...) or to `namespace()`, as
/// ansible hands it: tack's containers inside are copied whole, so the list appended does not
/// change with the original afterwards (`a.append(2)` after `b.append(a)` leaves `b` as it
/// was), and no container can be made to hold itself (`l.append(l)` stores a copy).
pub(crate) fn argument(value: &JValue) -> Result<JValue, Error> {
    copy_at(value, 0)
}

fn copy_at(value: &JValue, depth: usize) -> Result<JValue, Error> {
    if depth > crate::value::MAX_VALUE_DEPTH {
        return Err(recursion_error());
    }
    if let Some(list) = value.downcast_object_ref::<List>() {
        if let Some(view) = list.unchanged_copy() {
            return Ok(JValue::from_object(view));
        }
        let items = list.try_items()?;
        let copied = items.iter().map(|v| copy_at(v, depth + 1)).collect::<Result<_, _>>()?;
        return Ok(new_list(copied));
    }
    if let Some(dict) = value.downcast_object_ref::<Dict>() {
        if let Some(view) = dict.unchanged_copy() {
            return Ok(JValue::from_object(view));
        }
        let mut copied = IndexMap::new();
        for (k, v) in dict.try_entries()? {
            copied.insert(k.clone(), copy_at(&v, depth + 1)?);
        }
        return Ok(new_dict(copied));
    }
    Ok(value.clone())
}

/// What ansible reports for a value nested past Python's recursion limit.
pub(crate) fn recursion_error() -> Error {
    crate::engine::final_error(
        ErrorKind::InvalidOperation,
        crate::engine::active::RECURSION_MESSAGE.to_string(),
    )
}

/// A method on one of tack's lists.
pub(crate) fn list_method(
    _state: &mut State,
    list: &Arc<List>,
    method: &str,
    args: &[JValue],
) -> Result<JValue, Error> {
    if let Some(result) = read_only_list_method(list, method, args) {
        return result;
    }
    match method {
        "append" => {
            let (item,): (JValue,) = from_args(args)?;
            let item = argument(&item)?;
            list.mutate(|items| items.push(item));
            Ok(JValue::from(()))
        }
        "extend" => {
            let (other,): (JValue,) = from_args(args)?;
            let more = other.try_iter()?.map(|v| argument(&v)).collect::<Result<Vec<_>, _>>()?;
            list.mutate(|items| items.extend(more));
            Ok(JValue::from(()))
        }
        "insert" => {
            let (index, item): (i64, JValue) = from_args(args)?;
            let item = argument(&item)?;
            list.mutate(|items| {
                let len = items.len() as i64;
                let at = if index < 0 { (index + len).max(0) } else { index.min(len) };
                items.insert(at as usize, item);
            });
            Ok(JValue::from(()))
        }
        "pop" => {
            let (index,): (Option<i64>,) = from_args(args)?;
            list.mutate(|items| {
                let len = items.len() as i64;
                if len == 0 {
                    return Err(py_error("pop from empty list"));
                }
                let i = index.unwrap_or(-1);
                let i = if i < 0 { i + len } else { i };
                if !(0..len).contains(&i) {
                    return Err(py_error("pop index out of range"));
                }
                Ok(items.remove(i as usize))
            })
        }
        "remove" => {
            let (item,): (JValue,) = from_args(args)?;
            list.mutate(|items| match items.iter().position(|x| *x == item) {
                Some(i) => {
                    items.remove(i);
                    Ok(JValue::from(()))
                }
                None => Err(py_error("list.remove(x): x not in list")),
            })
        }
        "clear" => {
            let () = from_args(args)?;
            list.mutate(Vec::clear);
            Ok(JValue::from(()))
        }
        "reverse" => {
            let () = from_args(args)?;
            list.mutate(|items| items.reverse());
            Ok(JValue::from(()))
        }
        "sort" => {
            let (kwargs,): (Kwargs,) = from_args(args)?;
            let reverse: Option<bool> = kwargs.get("reverse")?;
            kwargs.assert_all_used()?;
            list.mutate(|items| {
                items.sort();
                if reverse == Some(true) {
                    items.reverse();
                }
            });
            Ok(JValue::from(()))
        }
        _ => Err(no_attribute(&JValue::from_dyn_object(list.clone()), method)),
    }
}

fn read_only_list_method(
    list: &Arc<List>,
    method: &str,
    args: &[JValue],
) -> Option<Result<JValue, Error>> {
    Some(match method {
        "count" => (|| {
            let (what,): (JValue,) = from_args(args)?;
            let items = list.try_items()?;
            Ok(JValue::from(items.iter().filter(|x| **x == what).count()))
        })(),
        "index" => (|| {
            let (what,): (JValue,) = from_args(args)?;
            let items = list.try_items()?;
            match items.iter().position(|x| *x == what) {
                Some(i) => Ok(JValue::from(i)),
                None => Err(py_error(format!("{} is not in list", super::repr::repr_lossy(&what)))),
            }
        })(),
        "copy" => (|| {
            let () = from_args(args)?;
            Ok(new_list(list.try_items()?))
        })(),
        _ => return None,
    })
}

/// A method on one of tack's dicts.
pub(crate) fn dict_method(
    _state: &mut State,
    dict: &Arc<Dict>,
    method: &str,
    args: &[JValue],
) -> Result<JValue, Error> {
    if let Some(result) = read_only_dict_method(dict, method, args) {
        return result;
    }
    match method {
        "update" => {
            let (other, kwargs): (Option<JValue>, Kwargs) = from_args(args)?;
            let mut add = Vec::new();
            if let Some(other) = other {
                if other.kind() == ValueKind::Map {
                    for k in other.try_iter()? {
                        let v = other.get_item(&k)?;
                        add.push((k, argument(&v)?));
                    }
                } else {
                    for pair in other.try_iter()? {
                        let k = pair.get_item_by_index(0)?;
                        let v = pair.get_item_by_index(1)?;
                        add.push((k, argument(&v)?));
                    }
                }
            }
            for k in kwargs.args() {
                add.push((JValue::from(k), argument(&kwargs.peek::<JValue>(k)?)?));
            }
            dict.mutate(|entries| entries.extend(add));
            Ok(JValue::from(()))
        }
        "pop" => {
            let (key, default): (JValue, Option<JValue>) = from_args(args)?;
            dict.mutate(|entries| match entries.shift_remove(&key) {
                Some(v) => Ok(v),
                None => default.ok_or_else(|| py_error(super::repr::repr_lossy(&key))),
            })
        }
        "popitem" => {
            let () = from_args(args)?;
            dict.mutate(|entries| match entries.pop() {
                Some((k, v)) => Ok(new_list(vec![k, v])),
                None => Err(py_error("'popitem(): dictionary is empty'")),
            })
        }
        "setdefault" => {
            let (key, default): (JValue, Option<JValue>) = from_args(args)?;
            let default = default.as_ref().map(argument).transpose()?;
            Ok(dict.mutate(|entries| {
                entries.entry(key).or_insert_with(|| default.unwrap_or(JValue::from(()))).clone()
            }))
        }
        "clear" => {
            let () = from_args(args)?;
            dict.mutate(IndexMap::clear);
            Ok(JValue::from(()))
        }
        _ => Err(no_attribute(&JValue::from_dyn_object(dict.clone()), method)),
    }
}

fn read_only_dict_method(
    dict: &Arc<Dict>,
    method: &str,
    args: &[JValue],
) -> Option<Result<JValue, Error>> {
    Some(match method {
        "keys" => (|| {
            let () = from_args(args)?;
            Ok(new_list(dict.keys()))
        })(),
        "values" => (|| {
            let () = from_args(args)?;
            Ok(new_list(dict.try_entries()?.into_iter().map(|(_, v)| v).collect()))
        })(),
        "items" => (|| {
            let () = from_args(args)?;
            let pairs = dict.try_entries()?.into_iter().map(|(k, v)| new_list(vec![k, v]));
            Ok(new_list(pairs.collect()))
        })(),
        "get" => (|| {
            let (key, default): (JValue, Option<JValue>) = from_args(args)?;
            Ok(match dict.try_get(&key) {
                Some(v) => v?,
                None => default.unwrap_or(JValue::from(())),
            })
        })(),
        "copy" => (|| {
            let () = from_args(args)?;
            Ok(new_dict(dict.try_entries()?.into_iter().collect()))
        })(),
        _ => return None,
    })
}

/// Methods of read-only mappings (`vars`, `hostvars`).
pub(crate) fn mapping_view_method<T: Object + 'static>(
    _state: &mut State,
    view: &Arc<T>,
    method: &str,
    args: &[JValue],
) -> Result<JValue, Error> {
    let keys: Vec<JValue> = match view.enumerate() {
        minijinja::value::Enumerator::Values(v) => v,
        _ => Vec::new(),
    };
    match method {
        "keys" => {
            let () = from_args(args)?;
            Ok(new_list(keys))
        }
        "get" => {
            let (key, default): (JValue, Option<JValue>) = from_args(args)?;
            Ok(view.get_value(&key).unwrap_or_else(|| default.unwrap_or(JValue::from(()))))
        }
        "values" | "items" => {
            let () = from_args(args)?;
            let out = keys.into_iter().map(|k| {
                let v = view.get_value(&k).unwrap_or_default();
                if method == "items" { new_list(vec![k, v]) } else { v }
            });
            Ok(new_list(out.collect()))
        }
        _ => Err(no_attribute(&JValue::from_dyn_object(view.clone()), method)),
    }
}

/// An exception raised by a Python method, as ansible reports it.
pub(crate) fn py_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}
