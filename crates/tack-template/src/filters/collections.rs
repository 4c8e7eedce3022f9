//! Filters that reshape lists and dicts: `dict2items`, `items2dict`, `combine`, `flatten`,
//! `subelements`, `rekey_on_member`, and the `itertools` ones ansible exposes (`zip`,
//! `zip_longest`, `product`, `permutations`, `combinations`).
//!
//! Python tuples come out as lists: ansible's templar finalises them as lists in every result.

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::pyval::{self, class_repr, is_sequence, list_of, repr_of};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new(
        "dict2items",
        Sig::new(
            "dict_to_list_of_dict_key_value_elements",
            &["mydict", "key_name", "value_name"],
            1,
        ),
        dict2items,
    ),
    Entry::new(
        "items2dict",
        Sig::new(
            "list_of_dict_key_value_elements_to_dict",
            &["mylist", "key_name", "value_name"],
            1,
        ),
        items2dict,
    ),
    Entry::new("combine", Sig::new("combine", &[], 0).varargs().varkw(), combine),
    Entry::new("flatten", Sig::new("flatten", &["mylist", "levels", "skip_nulls"], 1), flatten),
    Entry::new(
        "subelements",
        Sig::new("subelements", &["obj", "subelements", "skip_missing"], 2),
        subelements,
    ),
    Entry::new(
        "rekey_on_member",
        Sig::new("rekey_on_member", &["data", "key", "duplicates"], 2),
        rekey_on_member,
    ),
    Entry::new("zip", Sig::new("zip", &[], 0).varargs().varkw(), zip),
    Entry::new("zip_longest", Sig::new("zip_longest", &[], 0).varargs().varkw(), zip_longest),
    Entry::new("product", Sig::new("product", &[], 0).varargs().varkw(), product),
    Entry::new("permutations", Sig::new("permutations", &["iterable", "r"], 1), permutations),
    Entry::new("combinations", Sig::new("combinations", &["iterable", "r"], 1), combinations),
];

fn dict2items(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let dict = args.input();
    if dict.kind() != ValueKind::Map {
        return Err(FilterError::failed(format!(
            "dict2items requires a dictionary, got {} instead.",
            class_repr(dict)
        )));
    }
    let key_name = args.get(1).cloned().unwrap_or_else(|| Value::from("key"));
    let value_name = args.get(2).cloned().unwrap_or_else(|| Value::from("value"));
    let items = dict.try_iter()?.map(|key| {
        let value = dict.get_item(&key).unwrap_or_default();
        Value::from_pairs([(key_name.clone(), key), (value_name.clone(), value)])
    });
    Ok(Value::from(items.collect::<Vec<_>>()))
}

fn items2dict(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let list = args.input();
    if !is_sequence(list) {
        return Err(FilterError::failed(format!(
            "items2dict requires a list, got {} instead.",
            class_repr(list)
        )));
    }
    let key_name = args.get(1).cloned().unwrap_or_else(|| Value::from("key"));
    let value_name = args.get(2).cloned().unwrap_or_else(|| Value::from("value"));
    let mut pairs: Vec<(Value, Value)> = Vec::new();
    for item in list.try_iter()? {
        let not_dicts = || {
            FilterError::failed(format!(
                "items2dict requires a list of dictionaries, got {} instead.",
                pyval::str_of(list)
            ))
        };
        let lookup = |name: &Value| -> Result<Option<Value>, FilterError> {
            match item.kind() {
                ValueKind::Map => Ok(item.get_item(name).ok().filter(|v| !v.is_undefined())),
                // Strings and lists are indexable by integers only.
                ValueKind::Seq | ValueKind::String if name.is_integer() => {
                    Ok(item.get_item(name).ok().filter(|v| !v.is_undefined()))
                }
                _ => Err(not_dicts()),
            }
        };
        let (Some(key), Some(value)) = (lookup(&key_name)?, lookup(&value_name)?) else {
            return Err(FilterError::failed(format!(
                "items2dict requires each dictionary in the list to contain the keys '{}' and \
                 '{}', got {} instead.",
                pyval::str_of(&key_name),
                pyval::str_of(&value_name),
                pyval::str_of(list)
            )));
        };
        if !pyval::hashable(&key) {
            return Err(not_dicts());
        }
        insert(&mut pairs, key, value);
    }
    Ok(Value::from_pairs(pairs))
}

/// `d[key] = value` on an ordered list of pairs (an existing key keeps its place).
pub(super) fn insert(pairs: &mut Vec<(Value, Value)>, key: Value, value: Value) {
    match pairs.iter_mut().find(|(k, _)| pyval::eq(k, &key)) {
        Some(slot) => slot.1 = value,
        None => pairs.push((key, value)),
    }
}

fn pairs_of(dict: &Value) -> Vec<(Value, Value)> {
    dict.try_iter()
        .map(|keys| {
            keys.map(|k| {
                let v = dict.get_item(&k).unwrap_or_default();
                (k, v)
            })
            .collect()
        })
        .unwrap_or_default()
}

const LIST_MERGES: &[&str] = &["replace", "keep", "append", "prepend", "append_rp", "prepend_rp"];

fn combine(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let mut recursive = false;
    let mut list_merge = "replace".to_string();
    for (key, value) in &args.extra_kw {
        match key.as_str() {
            "recursive" => recursive = pyval::truthy(value),
            "list_merge" => list_merge = pyval::str_of(value),
            _ => {
                return Err(FilterError::failed(
                    "'recursive' and 'list_merge' are the only valid keyword arguments",
                ));
            }
        }
    }
    let dicts = flatten_values(&args.extra, Some(1), true);
    let Some(last) = dicts.last() else {
        return Ok(Value::from_pairs(Vec::<(Value, Value)>::new()));
    };
    if dicts.len() == 1 {
        return Ok(last.clone());
    }
    let mut result = last.clone();
    for dict in dicts.iter().rev().skip(1) {
        result = merge_hash(dict, &result, recursive, &list_merge)?;
    }
    Ok(result)
}

/// ansible's `merge_hash`: `y` merged into a copy of `x`, `y` winning.
fn merge_hash(
    x: &Value,
    y: &Value,
    recursive: bool,
    list_merge: &str,
) -> Result<Value, FilterError> {
    if !LIST_MERGES.contains(&list_merge) {
        return Err(FilterError::failed(
            "merge_hash: 'list_merge' argument can only be equal to 'replace', 'keep', 'append', \
             'prepend', 'append_rp' or 'prepend_rp'",
        ));
    }
    if x.kind() != ValueKind::Map || y.kind() != ValueKind::Map {
        return Err(FilterError::failed(format!(
            "failed to combine variables, expected dicts but got a '{}' and a '{}'.",
            pyval::class_name(x),
            pyval::class_name(y)
        )));
    }
    if x.len() == Some(0) || pyval::eq(x, y) {
        return Ok(Value::from_pairs(pairs_of(y)));
    }
    if y.len() == Some(0) {
        return Ok(x.clone());
    }
    let mut out = pairs_of(x);
    for (key, y_value) in pairs_of(y) {
        let Some(slot) = out.iter_mut().find(|(k, _)| pyval::eq(k, &key)) else {
            out.push((key, y_value));
            continue;
        };
        let x_value = slot.1.clone();
        slot.1 = match (x_value.kind(), y_value.kind()) {
            (ValueKind::Map, ValueKind::Map) if recursive => {
                merge_hash(&x_value, &y_value, recursive, list_merge)?
            }
            (ValueKind::Seq, ValueKind::Seq) => {
                let xs = list_of(&x_value).unwrap_or_default();
                let ys = list_of(&y_value).unwrap_or_default();
                let kept = || xs.iter().filter(|z| !pyval::contains(&ys, z)).cloned();
                match list_merge {
                    "append" => Value::from(xs.iter().chain(&ys).cloned().collect::<Vec<_>>()),
                    "prepend" => Value::from(ys.iter().chain(&xs).cloned().collect::<Vec<_>>()),
                    "append_rp" => {
                        Value::from(kept().chain(ys.iter().cloned()).collect::<Vec<_>>())
                    }
                    "prepend_rp" => {
                        Value::from(ys.iter().cloned().chain(kept()).collect::<Vec<_>>())
                    }
                    "keep" => x_value,
                    _ => y_value,
                }
            }
            _ => y_value,
        };
    }
    Ok(Value::from_pairs(out))
}

fn is_null_like(value: &Value) -> bool {
    value.is_none() || matches!(value.as_str(), Some("None" | "null"))
}

/// ansible's `flatten` over already-listed items.
fn flatten_values(items: &[Value], levels: Option<i64>, skip_nulls: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for element in items {
        if skip_nulls && is_null_like(element) {
            continue;
        }
        if is_sequence(element) {
            let inner = list_of(element).unwrap_or_default();
            match levels {
                None => out.extend(flatten_values(&inner, None, skip_nulls)),
                Some(l) if l >= 1 => out.extend(flatten_values(&inner, Some(l - 1), skip_nulls)),
                Some(_) => out.push(element.clone()),
            }
        } else {
            out.push(element.clone());
        }
    }
    out
}

fn flatten(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let list = args.input();
    let Some(items) = list_of(list) else {
        return Err(FilterError::failed(format!(
            "'{}' object is not iterable",
            pyval::type_name(list)
        )));
    };
    let levels = match args.opt(1) {
        None => None,
        Some(l) => match pyval::num(l) {
            Some(pyval::Num::Int(i)) => Some(i64::try_from(i).unwrap_or(i64::MAX)),
            Some(pyval::Num::Float(f)) => Some(f.floor() as i64 + i64::from(f.fract() > 0.0)),
            None => {
                return Err(FilterError::failed(format!(
                    "'>=' not supported between instances of '{}' and 'int'",
                    pyval::type_name(l)
                )));
            }
        },
    };
    let skip_nulls = args.get(2).is_none_or(pyval::truthy);
    Ok(Value::from(flatten_values(&items, levels, skip_nulls)))
}

fn subelements(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let obj = args.input();
    let elements: Vec<Value> = match obj.kind() {
        ValueKind::Map => obj.try_iter()?.map(|k| obj.get_item(&k).unwrap_or_default()).collect(),
        ValueKind::Seq => list_of(obj).unwrap_or_default(),
        _ => return Err(FilterError::failed("obj must be a list of dicts or a nested dict")),
    };
    let path = args.get(1).cloned().unwrap_or_default();
    let parts: Vec<Value> = match path.kind() {
        ValueKind::Seq => list_of(&path).unwrap_or_default(),
        ValueKind::String => {
            path.as_str().unwrap_or_default().split('.').map(Value::from).collect()
        }
        _ => return Err(FilterError::failed("subelements must be a list or a string")),
    };
    let skip_missing = args.get(2).is_some_and(pyval::truthy);
    let mut results = Vec::new();
    'elements: for element in elements {
        let mut values = element.clone();
        for part in &parts {
            let found = match values.kind() {
                ValueKind::Map => values.get_item(part).ok().filter(|v| !v.is_undefined()),
                ValueKind::Seq | ValueKind::String if part.is_integer() => {
                    values.get_item(part).ok().filter(|v| !v.is_undefined())
                }
                _ => {
                    return Err(FilterError::failed(format!(
                        "the key {} should point to a dictionary, got '{}'",
                        pyval::str_of(part),
                        pyval::str_of(&values)
                    )));
                }
            };
            match found {
                Some(v) => values = v,
                None if skip_missing => continue 'elements,
                None => {
                    return Err(FilterError::failed(format!(
                        "could not find {} key in iterated item {}",
                        repr_of(part),
                        repr_of(&values)
                    )));
                }
            }
        }
        if values.kind() != ValueKind::Seq {
            return Err(FilterError::failed(format!(
                "the key {} should point to a list, got {}",
                repr_of(parts.last().unwrap_or(&Value::from(""))),
                repr_of(&values)
            )));
        }
        for value in values.try_iter()? {
            results.push(Value::from(vec![element.clone(), value]));
        }
    }
    Ok(Value::from(results))
}

fn rekey_on_member(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let duplicates = args.get(2).map(pyval::str_of).unwrap_or_else(|| "error".into());
    if duplicates != "error" && duplicates != "overwrite" {
        return Err(FilterError::failed(format!(
            "duplicates parameter to rekey_on_member has unknown value {}",
            tack_yaml::pyrepr::str_repr(&duplicates)
        )));
    }
    let data = args.input();
    let items: Vec<Value> = match data.kind() {
        ValueKind::Map => data.try_iter()?.map(|k| data.get_item(&k).unwrap_or_default()).collect(),
        ValueKind::Seq | ValueKind::Iterable => list_of(data).unwrap_or_default(),
        _ => return Err(FilterError::failed("Type is not a valid list, set, or dict")),
    };
    let key = args.get(1).cloned().unwrap_or_default();
    let mut out: Vec<(Value, Value)> = Vec::new();
    for item in items {
        if item.kind() != ValueKind::Map {
            return Err(FilterError::failed("List item is not a valid dict"));
        }
        let Some(elem) = item.get_item(&key).ok().filter(|v| !v.is_undefined()) else {
            return Err(FilterError::failed(format!("Key {} was not found.", repr_of(&key))));
        };
        let exists = out.iter().any(|(k, v)| pyval::eq(k, &elem) && pyval::truthy(v));
        if exists && duplicates == "error" {
            return Err(FilterError::failed(format!(
                "Key {} is not unique, cannot convert to dict.",
                repr_of(&elem)
            )));
        }
        insert(&mut out, elem, item);
    }
    Ok(Value::from_pairs(out))
}

/// The arguments of an `itertools` function as lists, or Python's "not iterable" message.
fn iterables(
    values: &[Value],
    what: impl Fn(usize, &Value) -> String,
) -> Result<Vec<Vec<Value>>, FilterError> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| list_of(v).ok_or_else(|| FilterError::failed(what(i, v))))
        .collect()
}

fn not_iterable(_: usize, v: &Value) -> String {
    format!("'{}' object is not iterable", pyval::type_name(v))
}

fn zip(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let strict = match args.extra_kw.as_slice() {
        [] => false,
        [(k, v)] if k == "strict" => pyval::truthy(v),
        [(k, _), ..] => {
            return Err(FilterError::failed(format!(
                "zip() got an unexpected keyword argument '{k}'"
            )));
        }
    };
    let lists = iterables(&args.extra, not_iterable)?;
    let shortest = lists.iter().map(Vec::len).min().unwrap_or(0);
    if strict && lists.iter().any(|l| l.len() != shortest) {
        return Err(FilterError::failed("zip() argument 2 is shorter than argument 1"));
    }
    let rows =
        (0..shortest).map(|i| Value::from(lists.iter().map(|l| l[i].clone()).collect::<Vec<_>>()));
    Ok(Value::from(rows.collect::<Vec<_>>()))
}

fn zip_longest(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let mut fill = Value::from(());
    for (key, value) in &args.extra_kw {
        if key != "fillvalue" {
            return Err(FilterError::failed(format!(
                "zip_longest() got an unexpected keyword argument '{key}'"
            )));
        }
        fill = value.clone();
    }
    let lists = iterables(&args.extra, |i, v| {
        format!("zip_longest argument #{} must support iteration ({})", i + 1, not_iterable(i, v))
    })
    .map_err(|_| {
        let bad = args.extra.iter().find(|v| list_of(v).is_none()).cloned().unwrap_or_default();
        FilterError::failed(not_iterable(0, &bad))
    })?;
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    let rows = (0..longest).map(|i| {
        Value::from(
            lists
                .iter()
                .map(|l| l.get(i).cloned().unwrap_or_else(|| fill.clone()))
                .collect::<Vec<_>>(),
        )
    });
    Ok(Value::from(rows.collect::<Vec<_>>()))
}

fn product(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let mut repeat = 1usize;
    for (key, value) in &args.extra_kw {
        if key != "repeat" {
            return Err(FilterError::failed(format!(
                "product() got an unexpected keyword argument '{key}'"
            )));
        }
        repeat = match pyval::num(value) {
            Some(pyval::Num::Int(i)) if i >= 0 => usize::try_from(i).unwrap_or(0),
            Some(pyval::Num::Int(_)) => {
                return Err(FilterError::failed("repeat argument cannot be negative"));
            }
            _ => {
                return Err(FilterError::failed(format!(
                    "'{}' object cannot be interpreted as an integer",
                    pyval::type_name(value)
                )));
            }
        };
    }
    let lists = iterables(&args.extra, not_iterable)?;
    let pools: Vec<&Vec<Value>> = (0..repeat).flat_map(|_| lists.iter()).collect();
    let mut rows: Vec<Vec<Value>> = vec![Vec::new()];
    for pool in pools {
        rows = rows
            .into_iter()
            .flat_map(|row| {
                pool.iter().map(move |item| {
                    let mut next = row.clone();
                    next.push(item.clone());
                    next
                })
            })
            .collect();
    }
    Ok(Value::from(rows.into_iter().map(Value::from).collect::<Vec<_>>()))
}

fn r_arg(args: &Bound) -> Result<Option<usize>, FilterError> {
    match args.opt(1) {
        None => Ok(None),
        Some(r) => match pyval::num(r) {
            Some(pyval::Num::Int(i)) if i >= 0 => {
                Ok(Some(usize::try_from(i).unwrap_or(usize::MAX)))
            }
            Some(pyval::Num::Int(_)) => Err(FilterError::failed("r must be non-negative")),
            _ => Err(FilterError::failed(format!(
                "'{}' object cannot be interpreted as an integer",
                pyval::type_name(r)
            ))),
        },
    }
}

fn permutations(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let pool =
        list_of(args.input()).ok_or_else(|| FilterError::failed(not_iterable(0, args.input())))?;
    let r = r_arg(args)?.unwrap_or(pool.len());
    let mut out = Vec::new();
    if r <= pool.len() {
        let mut used = vec![false; pool.len()];
        let mut current = Vec::with_capacity(r);
        permute(&pool, r, &mut used, &mut current, &mut out);
    }
    Ok(Value::from(out))
}

fn permute(
    pool: &[Value],
    r: usize,
    used: &mut [bool],
    current: &mut Vec<Value>,
    out: &mut Vec<Value>,
) {
    if current.len() == r {
        out.push(Value::from(current.clone()));
        return;
    }
    for i in 0..pool.len() {
        if used[i] {
            continue;
        }
        used[i] = true;
        current.push(pool[i].clone());
        permute(pool, r, used, current, out);
        current.pop();
        used[i] = false;
    }
}

fn combinations(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let pool =
        list_of(args.input()).ok_or_else(|| FilterError::failed(not_iterable(0, args.input())))?;
    let Some(r) = r_arg(args)? else {
        return Err(FilterError::failed(if args.get(1).is_some() {
            "'NoneType' object cannot be interpreted as an integer".to_string()
        } else {
            "combinations() missing required argument 'r' (pos 2)".to_string()
        }));
    };
    let mut out = Vec::new();
    if r <= pool.len() {
        let mut idx: Vec<usize> = (0..r).collect();
        loop {
            out.push(Value::from(idx.iter().map(|&i| pool[i].clone()).collect::<Vec<_>>()));
            let Some(i) = (0..r).rev().find(|&i| idx[i] != i + pool.len() - r) else { break };
            idx[i] += 1;
            for j in i + 1..r {
                idx[j] = idx[j - 1] + 1;
            }
        }
    }
    Ok(Value::from(out))
}
