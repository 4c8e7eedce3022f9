//! The lookups that reshape their terms: `items`, `list`, `indexed_items`, `dict`, `nested`,
//! `together`, `subelements`, `random_choice` (ansible's `LookupBase._flatten`, `_combine`,
//! `_flatten_hash_to_list`).
//!
//! They read nothing but their terms.

use indexmap::IndexMap;
use minijinja::value::{Value as JValue, ValueKind};
use tack_yaml::{Node, Value};

use super::options::py_str;
use super::{Call, Entry, LookupError};
use crate::value::{from_node, new_dict, new_list, to_value};

pub(super) const LOOKUPS: &[Entry] = &[
    Entry::new("items", items),
    Entry::new("list", list),
    Entry::new("indexed_items", indexed_items),
    Entry::new("dict", dict),
    Entry::new("nested", nested),
    Entry::new("together", together),
    Entry::new("subelements", subelements),
    Entry::new("random_choice", random_choice),
];

fn is_list(v: &JValue) -> bool {
    matches!(v.kind(), ValueKind::Seq | ValueKind::Iterable)
}

fn items_of(v: &JValue) -> Result<Vec<JValue>, LookupError> {
    Ok(v.try_iter()?.collect())
}

/// `LookupBase._flatten`: one level of lists is opened.
fn flatten(terms: &[JValue]) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in terms {
        if is_list(term) {
            out.extend(items_of(term)?);
        } else {
            out.push(term.clone());
        }
    }
    Ok(out)
}

fn items(call: &Call) -> Result<Vec<JValue>, LookupError> {
    flatten(&call.terms)
}

fn list(call: &Call) -> Result<Vec<JValue>, LookupError> {
    Ok(call.terms.clone())
}

fn indexed_items(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let items = flatten(&call.terms)?;
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(i, v)| JValue::from(vec![JValue::from(i as i64), v]))
        .collect())
}

fn dict(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in &call.terms {
        if term.kind() != ValueKind::Map {
            return Err(LookupError::failed(format!(
                "the 'dict' lookup plugin expects a dictionary, got '{}' of type {})",
                py_str(term),
                crate::filters::pyval::class_repr(term)
            )));
        }
        for key in term.try_iter()? {
            let value = term.get_item(&key)?;
            let mut entry = IndexMap::new();
            entry.insert(JValue::from("key"), key);
            entry.insert(JValue::from("value"), value);
            out.push(new_dict(entry));
        }
    }
    Ok(out)
}

fn nested(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let Some((first, rest)) = call.terms.split_first() else {
        return Err(LookupError::failed(
            "with_nested requires at least one element in the nested list",
        ));
    };
    let mut result: Vec<JValue> = items_of(first)?;
    for next in rest {
        let next = items_of(next)?;
        let mut combined = Vec::new();
        for x in &result {
            for y in &next {
                combined.push(new_list(flatten(&[x.clone(), y.clone()])?));
            }
        }
        result = combined;
    }
    result.iter().map(|x| Ok(new_list(flatten(&items_of_or_self(x)?)?))).collect()
}

/// Iterating an item the way `_flatten(x)` does: a list's items, or a string's characters.
fn items_of_or_self(x: &JValue) -> Result<Vec<JValue>, LookupError> {
    match x.kind() {
        ValueKind::String => Ok(x
            .as_str()
            .unwrap_or_default()
            .chars()
            .map(|c| JValue::from(c.to_string()))
            .collect()),
        _ => items_of(x),
    }
}

fn together(call: &Call) -> Result<Vec<JValue>, LookupError> {
    if call.terms.is_empty() {
        return Err(LookupError::failed(
            "with_together requires at least one element in each list",
        ));
    }
    let lists: Vec<Vec<JValue>> =
        call.terms.iter().map(items_of_or_self).collect::<Result<_, _>>()?;
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(longest);
    for i in 0..longest {
        let row: Vec<JValue> =
            lists.iter().map(|l| l.get(i).cloned().unwrap_or(JValue::from(()))).collect();
        out.push(new_list(flatten(&row)?));
    }
    Ok(out)
}

fn random_choice(call: &Call) -> Result<Vec<JValue>, LookupError> {
    if call.terms.is_empty() {
        return Ok(Vec::new());
    }
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)
        .map_err(|e| LookupError::failed(format!("Unable to choose random term: {e}")))?;
    let i = (u64::from_le_bytes(bytes) % call.terms.len() as u64) as usize;
    Ok(vec![call.terms[i].clone()])
}

const SUBELEMENTS_TERMS: &str = "subelements lookup expects a list of two or three items, ";

fn skipped(item: &tack_yaml::Mapping) -> bool {
    item.get("skipped").is_some_and(|v| v.value != Value::Bool(false))
}

fn subelements(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let terms = &call.terms;
    if !(2..=3).contains(&terms.len()) {
        return Err(LookupError::failed(SUBELEMENTS_TERMS));
    }
    let first = to_value(&terms[0])?;
    let (Some(path), true) = (terms[1].as_str(), matches!(first, Value::Seq(_) | Value::Map(_)))
    else {
        return Err(LookupError::failed(format!(
            "{SUBELEMENTS_TERMS}first a dict or a list, second a string pointing to the subkey"
        )));
    };
    let keys: Vec<&str> = path.split('.').collect();
    let elements: Vec<Node> = match first {
        Value::Map(m) => {
            if skipped(&m) {
                return Ok(Vec::new());
            }
            m.iter().map(|(_, v)| v.clone()).collect()
        }
        Value::Seq(items) => items,
        _ => Vec::new(),
    };
    let mut skip_missing = false;
    if let Some(flags) = terms.get(2) {
        let ok = flags.kind() == ValueKind::Map
            || flags
                .try_iter()
                .is_ok_and(|mut it| it.all(|k| k.as_str().is_some_and(|k| k == "skip_missing")));
        if !ok {
            return Err(LookupError::failed(format!(
                "{SUBELEMENTS_TERMS}the optional third item must be a dict with flags skip_missing"
            )));
        }
        if flags.kind() == ValueKind::Map
            && let Ok(v) = flags.get_item(&JValue::from("skip_missing"))
            && !v.is_undefined()
        {
            skip_missing = super::options::loose_bool(&v);
        }
    }
    let mut out = Vec::new();
    for item in elements {
        let Value::Map(mut item) = item.value else {
            return Err(LookupError::failed(format!(
                "subelements lookup expects a dictionary, got '{}'",
                py_str(&from_node(&item.value))
            )));
        };
        if skipped(&item) {
            continue;
        }
        let Some(sublist) = take_sublist(&mut item, &keys, skip_missing)? else { continue };
        let item = from_node(&Value::Map(item));
        for sub in sublist {
            out.push(JValue::from(vec![item.clone(), from_node(&sub.value)]));
        }
    }
    Ok(out)
}

/// Follows `keys` into `item` and removes the list at the last one (ansible pops it, so the
/// item it yields no longer holds it). `None` when a key is missing and `skip_missing`.
fn take_sublist(
    item: &mut tack_yaml::Mapping,
    keys: &[&str],
    skip_missing: bool,
) -> Result<Option<Vec<Node>>, LookupError> {
    let Some((key, rest)) = keys.split_first() else { return Ok(Some(Vec::new())) };
    let Some(value) = item.get(key) else {
        if skip_missing {
            return Ok(None);
        }
        return Err(LookupError::failed(format!(
            "could not find '{key}' key in iterated item '{}'",
            py_str(&from_node(&Value::Map(item.clone())))
        )));
    };
    if rest.is_empty() {
        let Value::Seq(items) = &value.value else {
            return Err(LookupError::failed(format!(
                "the key {key} should point to a list, got '{}'",
                py_str(&from_node(&value.value))
            )));
        };
        let items = items.clone();
        item.remove(key);
        return Ok(Some(items));
    }
    let Value::Map(sub) = &value.value else {
        if skip_missing {
            return Ok(None);
        }
        return Err(LookupError::failed(format!(
            "the key {key} should point to a dictionary, got '{}'",
            py_str(&from_node(&value.value))
        )));
    };
    let mut sub = sub.clone();
    let found = take_sublist(&mut sub, rest, skip_missing)?;
    item.insert(Node::bare(Value::Str((*key).to_string())), Node::bare(Value::Map(sub)));
    Ok(found)
}
