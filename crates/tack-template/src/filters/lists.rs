//! Jinja2's list filters as Jinja2 3.1.6 (under ansible's wrappers) runs them: `sort`,
//! `dictsort`, `map`, `select`, `reject`, `selectattr`, `rejectattr`, `groupby`, `first`,
//! `last`, `min`, `max`, `sum`, `length`/`count`, `list`, `reverse`, `batch`, `slice`, `join`,
//! `items`, `attr`.
//!
//! minijinja's versions differ from Jinja2's in case folding (Jinja2 sorts, groups and compares
//! case-insensitively by default), in Python's mixed-number rules, and in their errors.

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::core::getitem;
use super::pysort::sort_by_keys;
use super::pyval::{self, list_of, type_name};
use super::{Entry, FilterError, is_undefined, require_defined};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new(
        "sort",
        Sig::new("do_sort", &["value", "reverse", "case_sensitive", "attribute"], 1).env(),
        sort,
    ),
    Entry::new(
        "dictsort",
        Sig::new("do_dictsort", &["value", "case_sensitive", "by", "reverse"], 1),
        dictsort,
    ),
    Entry::new("map", Sig::new("do_map", &["value"], 1).env().varargs().varkw(), map),
    Entry::new("select", Sig::new("do_select", &["value"], 1).env().varargs().varkw(), select),
    Entry::new("reject", Sig::new("do_reject", &["value"], 1).env().varargs().varkw(), reject),
    Entry::new(
        "selectattr",
        Sig::new("do_selectattr", &["value"], 1).env().varargs().varkw(),
        selectattr,
    ),
    Entry::new(
        "rejectattr",
        Sig::new("do_rejectattr", &["value"], 1).env().varargs().varkw(),
        rejectattr,
    ),
    Entry::new(
        "groupby",
        Sig::new("do_groupby", &["value", "attribute", "default", "case_sensitive"], 2).env(),
        groupby,
    ),
    Entry::new("first", Sig::new("do_first", &["seq"], 1).env(), first),
    Entry::new("last", Sig::new("do_last", &["seq"], 1).env(), last),
    Entry::new("min", Sig::new("do_min", MIN_MAX, 1).env(), min),
    Entry::new("max", Sig::new("do_max", MIN_MAX, 1).env(), max),
    Entry::new("sum", Sig::new("do_sum", &["iterable", "attribute", "start"], 1).env(), sum),
    Entry::new("length", Sig::builtin_one("len"), length),
    Entry::new("count", Sig::builtin_one("len"), length),
    Entry::new("list", Sig::new("do_list", &["value"], 1), list),
    Entry::new("reverse", Sig::new("do_reverse", &["value"], 1), reverse),
    Entry::new("batch", Sig::new("do_batch", &["value", "linecount", "fill_with"], 2), batch),
    Entry::new("slice", Sig::new("do_slice", &["value", "slices", "fill_with"], 2), slice),
    Entry::new("join", Sig::new("do_join", &["value", "d", "attribute"], 1).env(), join),
    Entry::new("items", Sig::new("do_items", &["value"], 1), items),
    Entry::new("attr", Sig::new("do_attr", &["obj", "name"], 2).env(), attr),
];

const MIN_MAX: &[&str] = &["value", "case_sensitive", "attribute"];

/// Python's "not iterable" error for a value that is not.
pub(super) fn iterate(value: &Value) -> Result<Vec<Value>, FilterError> {
    list_of(value).ok_or_else(|| {
        FilterError::failed(format!("'{}' object is not iterable", type_name(value)))
    })
}

/// The path Jinja2's `make_attrgetter` follows: `a.b.0` → `a`, `b`, `0` (digits as integers).
pub(super) fn attribute_parts(attribute: Option<&Value>) -> Vec<Value> {
    match attribute {
        None => Vec::new(),
        Some(a) if a.is_none() => Vec::new(),
        Some(a) => match a.as_str() {
            Some(s) => s
                .split('.')
                .map(|part| match part.parse::<i64>() {
                    Ok(i) if part.bytes().all(|b| b.is_ascii_digit()) => Value::from(i),
                    _ => Value::from(part),
                })
                .collect(),
            None => vec![a.clone()],
        },
    }
}

/// `make_attrgetter(environment, attribute, postprocess, default)` applied to `item`.
pub(super) fn get_path(item: &Value, parts: &[Value], default: Option<&Value>) -> Value {
    let mut value = item.clone();
    for part in parts {
        value = getitem(&value, part);
    }
    match default {
        Some(d) if is_undefined(&value) && !d.is_none() => d.clone(),
        _ => value,
    }
}

/// [`get_path`] for filters that do not accept undefined values: a missing attribute is the
/// undefined error at once, as ansible raises it inside such filters.
pub(super) fn get_path_strict(item: &Value, parts: &[Value]) -> Result<Value, FilterError> {
    let mut value = item.clone();
    for part in parts {
        let next = getitem(&value, part);
        if is_undefined(&next) {
            return Err(undefined_attribute(&value, part));
        }
        value = next;
    }
    Ok(value)
}

/// Jinja2's message for reading a missing attribute or key.
pub(super) fn undefined_attribute(obj: &Value, key: &Value) -> FilterError {
    let message =
        format!("object of type '{}' has no attribute '{}'", type_name(obj), pyval::str_of(key));
    FilterError::Template(
        minijinja::Error::new(minijinja::ErrorKind::UndefinedError, message.clone())
            .with_source(super::FilterMessage(message)),
    )
}

/// Jinja2's `ignore_case` post-processing: strings lowered, anything else unchanged.
pub(super) fn fold(value: Value, case_sensitive: bool) -> Value {
    match value.as_str() {
        Some(s) if !case_sensitive => Value::from(s.to_lowercase()),
        _ => value,
    }
}

fn less(a: &Value, b: &Value) -> Result<bool, String> {
    if is_undefined(a) || is_undefined(b) {
        return Err("undefined".into());
    }
    pyval::cmp(a, b, "<").map(|o| o == std::cmp::Ordering::Less)
}

fn flag(args: &Bound, i: usize) -> bool {
    args.get(i).is_some_and(pyval::truthy)
}

fn sort(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    require_defined(&items)?;
    let (reverse, case_sensitive) = (flag(args, 1), flag(args, 2));
    let attribute = args.opt(3);
    // `make_multi_attrgetter`: several comma-separated attributes compare as a list.
    let paths: Vec<Vec<Value>> = match attribute.and_then(Value::as_str) {
        Some(s) if s.contains(',') => {
            s.split(',').map(|p| attribute_parts(Some(&Value::from(p)))).collect()
        }
        _ => vec![attribute_parts(attribute)],
    };
    let mut keys: Vec<Value> = Vec::with_capacity(items.len());
    for item in &items {
        let mut parts = Vec::with_capacity(paths.len());
        for p in &paths {
            parts.push(fold(get_path_strict(item, p)?, case_sensitive));
        }
        keys.push(if parts.len() == 1 {
            parts.pop().unwrap_or_default()
        } else {
            Value::from(parts)
        });
    }
    sort_by_keys(items, keys, reverse, less).map(Value::from).map_err(FilterError::failed)
}

fn dictsort(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let dict = args.input();
    if dict.kind() != ValueKind::Map {
        return Err(FilterError::failed(format!(
            "'{}' object has no attribute 'items'",
            pyval::class_name(dict)
        )));
    }
    let case_sensitive = flag(args, 1);
    let pos = match args.get(2).map(pyval::str_of).as_deref() {
        None | Some("key") => 0,
        Some("value") => 1,
        Some(_) => {
            return Err(FilterError::failed(r#"You can only sort by either "key" or "value""#));
        }
    };
    let pairs: Vec<Value> = dict
        .try_iter()?
        .map(|k| {
            let v = dict.get_item(&k).unwrap_or_default();
            Value::from(vec![k, v])
        })
        .collect();
    let keys = pairs
        .iter()
        .map(|p| fold(p.get_item_by_index(pos).unwrap_or_default(), case_sensitive))
        .collect();
    sort_by_keys(pairs, keys, flag(args, 3), less).map(Value::from).map_err(FilterError::failed)
}

fn kwargs_value(pairs: &[(String, Value)]) -> Option<Value> {
    if pairs.is_empty() {
        return None;
    }
    Some(Value::from(Kwargs::from_iter(pairs.iter().map(|(k, v)| (k.as_str(), v.clone())))))
}

fn call_args(item: Value, extra: &[Value], kwargs: &[(String, Value)]) -> Vec<Value> {
    let mut out = Vec::with_capacity(extra.len() + 2);
    out.push(item);
    out.extend(extra.iter().cloned());
    out.extend(kwargs_value(kwargs));
    out
}

fn map(state: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    if args.extra.is_empty() && args.extra_kw.iter().any(|(k, _)| k == "attribute") {
        let mut attribute = None;
        let mut default = None;
        for (key, value) in &args.extra_kw {
            match key.as_str() {
                "attribute" => attribute = Some(value.clone()),
                "default" => default = Some(value.clone()),
                other => {
                    return Err(FilterError::failed(format!(
                        "Unexpected keyword argument {}",
                        tack_yaml::pyrepr::str_repr(other)
                    )));
                }
            }
        }
        let parts = attribute_parts(attribute.as_ref());
        let mut out = Vec::with_capacity(items.len());
        for item in &items {
            let value = get_path(item, &parts, default.as_ref());
            // The undefined item is explained, when used, as Jinja's attribute lookup
            // failed (the engine cannot name it from the template's expression).
            if is_undefined(&value) && default.is_none() {
                let mut at = item.clone();
                for part in &parts {
                    let next = getitem(&at, part);
                    if is_undefined(&next) {
                        let message = format!(
                            "object of type '{}' has no attribute '{}'",
                            type_name(&at),
                            pyval::str_of(part)
                        );
                        crate::undef_hint::set(message);
                        break;
                    }
                    at = next;
                }
            }
            out.push(value);
        }
        return Ok(Value::from(out));
    }
    let Some((name, rest)) = args.extra.split_first() else {
        return Err(FilterError::failed("map requires a filter argument"));
    };
    let name = pyval::str_of(name);
    // A collection's filter is called through the engine's dispatcher, its name first.
    let qualified: Vec<Value>;
    let (filter, rest) = if crate::python_plugins::is_collection_name(&name) {
        qualified =
            std::iter::once(Value::from(name.as_str())).chain(rest.iter().cloned()).collect();
        (crate::engine::QUALIFIED_FILTER, qualified.as_slice())
    } else {
        (name.as_str(), rest)
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let result = state.apply_filter(filter, &call_args(item, rest, &args.extra_kw));
        match result {
            Err(e) if e.kind() == minijinja::ErrorKind::UnknownFilter => {
                return Err(FilterError::failed(format!("No filter named '{name}'.")));
            }
            other => out.push(other?),
        }
    }
    Ok(Value::from(out))
}

fn select_or_reject(
    state: &mut State,
    args: &Bound,
    keep_when: bool,
    by_attribute: bool,
) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    let mut rest: &[Value] = &args.extra;
    let parts = if by_attribute {
        let Some((attr, tail)) = rest.split_first() else {
            return Err(FilterError::failed("Missing parameter for attribute name"));
        };
        rest = tail;
        Some(attribute_parts(Some(attr)))
    } else {
        None
    };
    let test = match rest.split_first() {
        Some((name, tail)) => {
            rest = tail;
            Some(pyval::str_of(name))
        }
        None => None,
    };
    // A collection's test is called through the engine's dispatcher, its name first.
    let qualified: Vec<Value>;
    let dispatched = test.as_deref().filter(|n| crate::python_plugins::is_collection_name(n));
    if let Some(name) = dispatched {
        qualified = std::iter::once(Value::from(name)).chain(rest.iter().cloned()).collect();
        rest = qualified.as_slice();
    }
    let test_name = |name: &str| -> String {
        if dispatched.is_some() {
            crate::engine::QUALIFIED_TEST.to_string()
        } else {
            name.to_string()
        }
    };
    let mut out = Vec::new();
    for item in items {
        let subject = match &parts {
            Some(p) => get_path(&item, p, None),
            None => item.clone(),
        };
        let passed = match &test {
            Some(name) => match state
                .perform_test(&test_name(name), &call_args(subject, rest, &args.extra_kw))
            {
                Err(e) if e.kind() == minijinja::ErrorKind::UnknownTest => {
                    return Err(FilterError::failed(format!("No test named '{name}'.")));
                }
                other => other?,
            },
            None => {
                if is_undefined(&subject) {
                    return Ok(subject);
                }
                pyval::truthy(&subject)
            }
        };
        if passed == keep_when {
            out.push(item);
        }
    }
    Ok(Value::from(out))
}

fn select(state: &mut State, args: &Bound) -> Result<Value, FilterError> {
    select_or_reject(state, args, true, false)
}

fn reject(state: &mut State, args: &Bound) -> Result<Value, FilterError> {
    select_or_reject(state, args, false, false)
}

fn selectattr(state: &mut State, args: &Bound) -> Result<Value, FilterError> {
    select_or_reject(state, args, true, true)
}

fn rejectattr(state: &mut State, args: &Bound) -> Result<Value, FilterError> {
    select_or_reject(state, args, false, true)
}

fn groupby(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    require_defined(&items)?;
    let parts = attribute_parts(args.get(1));
    // `default` (argument 2) never applies: ansible raises the missing attribute inside this
    // filter before Jinja2 could substitute it.
    let case_sensitive = flag(args, 3);
    let mut keys: Vec<Value> = Vec::with_capacity(items.len());
    for item in &items {
        keys.push(fold(get_path_strict(item, &parts)?, case_sensitive));
    }
    let sorted_keys = {
        let mut pairs: Vec<(Value, Value)> =
            keys.iter().cloned().zip(items.iter().cloned()).collect();
        let order = sort_by_keys((0..pairs.len()).collect::<Vec<_>>(), keys.clone(), false, less)
            .map_err(FilterError::failed)?;
        order.into_iter().map(|i| std::mem::take(&mut pairs[i])).collect::<Vec<_>>()
    };
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    for (key, item) in sorted_keys {
        match groups.last_mut() {
            Some((k, members)) if pyval::eq(k, &key) => members.push(item),
            _ => groups.push((key, vec![item])),
        }
    }
    let out = groups.into_iter().map(|(key, members)| {
        // Jinja2 reports the first member's own value, not the folded key.
        let grouper = if case_sensitive { key } else { get_path(&members[0], &parts, None) };
        Value::from_object(GroupTuple { grouper, list: Value::from(members) })
    });
    Ok(Value::from(out.collect::<Vec<_>>()))
}

/// Jinja2's `_GroupTuple`: a `(grouper, list)` pair that also has those names as attributes.
#[derive(Debug)]
struct GroupTuple {
    grouper: Value,
    list: Value,
}

impl minijinja::value::Object for GroupTuple {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Seq
    }

    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        match (key.as_str(), key.as_i64()) {
            (Some("grouper"), _) | (_, Some(0 | -2)) => Some(self.grouper.clone()),
            (Some("list"), _) | (_, Some(1 | -1)) => Some(self.list.clone()),
            _ => None,
        }
    }

    fn enumerate(self: &std::sync::Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Seq(2)
    }
}

fn first(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(iterate(args.input())?.into_iter().next().unwrap_or(Value::UNDEFINED))
}

fn last(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let seq = args.input();
    if !matches!(
        seq.kind(),
        ValueKind::Seq | ValueKind::Map | ValueKind::String | ValueKind::Iterable
    ) {
        return Err(FilterError::failed(format!("'{}' object is not reversible", type_name(seq))));
    }
    Ok(iterate(seq)?.pop().unwrap_or(Value::UNDEFINED))
}

fn min_or_max(args: &Bound, op: &str) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    require_defined(&items)?;
    let case_sensitive = flag(args, 1);
    let parts = attribute_parts(args.opt(2));
    let mut best: Option<(Value, Value)> = None;
    for item in items {
        let key = fold(get_path_strict(&item, &parts)?, case_sensitive);
        best = match best {
            None => Some((key, item)),
            Some((best_key, best_item)) => {
                let ord = pyval::cmp(&key, &best_key, op).map_err(FilterError::failed)?;
                let better = if op == "<" { ord.is_lt() } else { ord.is_gt() };
                if better { Some((key, item)) } else { Some((best_key, best_item)) }
            }
        };
    }
    Ok(best.map(|(_, item)| item).unwrap_or(Value::UNDEFINED))
}

fn min(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    min_or_max(args, "<")
}

fn max(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    min_or_max(args, ">")
}

/// Python's `a + b` for the values `sum()` adds.
fn add(a: &Value, b: &Value) -> Result<Value, FilterError> {
    if let (Some(x), Some(y)) = (pyval::num(a), pyval::num(b)) {
        return Ok(match (x, y) {
            (pyval::Num::Int(x), pyval::Num::Int(y)) => pyval::int_value(x.saturating_add(y)),
            _ => Value::from(x.as_f64() + y.as_f64()),
        });
    }
    match (a.kind(), b.kind()) {
        (ValueKind::Seq, ValueKind::Seq) => {
            let mut out = list_of(a).unwrap_or_default();
            out.extend(list_of(b).unwrap_or_default());
            Ok(Value::from(out))
        }
        _ => Err(FilterError::failed(format!(
            "unsupported operand type(s) for +: '{}' and '{}'",
            type_name(a),
            type_name(b)
        ))),
    }
}

fn sum(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    require_defined(&items)?;
    let parts = attribute_parts(args.opt(1));
    let start = args.get(2).cloned().unwrap_or_else(|| Value::from(0));
    if start.kind() == ValueKind::String {
        return Err(FilterError::failed("sum() can't sum strings [use ''.join(seq) instead]"));
    }
    let values: Vec<Value> =
        items.iter().map(|i| get_path_strict(i, &parts)).collect::<Result<_, _>>()?;
    // Python 3.12+ adds floats with Neumaier's compensated summation.
    if pyval::num(&start).is_some() && values.iter().all(|v| pyval::num(v).is_some()) {
        let mut int_total: i128 = 0;
        let mut floats = false;
        let (mut total, mut compensation) = (0.0f64, 0.0f64);
        let mut all = vec![start.clone()];
        all.extend(values.iter().cloned());
        for v in &all {
            match pyval::num(v) {
                Some(pyval::Num::Int(i)) if !floats => int_total = int_total.saturating_add(i),
                Some(n) => {
                    if !floats {
                        floats = true;
                        total = int_total as f64;
                    }
                    let x = n.as_f64();
                    let t = total + x;
                    if total.abs() >= x.abs() {
                        compensation += (total - t) + x;
                    } else {
                        compensation += (x - t) + total;
                    }
                    total = t;
                }
                None => {}
            }
        }
        return Ok(if floats {
            Value::from(if compensation.is_finite() { total + compensation } else { total })
        } else {
            pyval::int_value(int_total)
        });
    }
    let mut total = start;
    for v in &values {
        total = add(&total, v)?;
    }
    Ok(total)
}

fn length(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let n = match value.kind() {
        ValueKind::String => value.as_str().unwrap_or_default().chars().count(),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => iterate(value)?.len(),
        _ if let Some(bytes) = value.downcast_object_ref::<crate::pybytes::PyBytes>() => {
            bytes.0.len()
        }
        _ => {
            return Err(FilterError::failed(format!(
                "object of type '{}' has no len()",
                type_name(value)
            )));
        }
    };
    Ok(Value::from(n))
}

fn list(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    iterate(args.input()).map(Value::from)
}

fn reverse(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    if let Some(s) = value.as_str() {
        return Ok(Value::from(s.chars().rev().collect::<String>()));
    }
    let mut items = list_of(value).ok_or_else(|| {
        FilterError::caused(
            "argument must be iterable",
            &format!("'{}' object is not iterable", type_name(value)),
        )
    })?;
    items.reverse();
    Ok(Value::from(items))
}

fn count_arg(value: Option<&Value>) -> Option<i128> {
    value.and_then(pyval::num).and_then(|n| match n {
        pyval::Num::Int(i) => Some(i),
        pyval::Num::Float(f) if f.fract() == 0.0 => Some(f as i128),
        pyval::Num::Float(_) => None,
    })
}

fn batch(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    let linecount = count_arg(args.get(1));
    let fill = args.opt(2);
    let mut out = Vec::new();
    let mut tmp: Vec<Value> = Vec::new();
    for item in items {
        if linecount == Some(tmp.len() as i128) {
            out.push(Value::from(std::mem::take(&mut tmp)));
        }
        tmp.push(item);
    }
    if !tmp.is_empty() {
        if let (Some(fill), Some(n)) = (fill, linecount) {
            while (tmp.len() as i128) < n {
                tmp.push(fill.clone());
            }
        }
        out.push(Value::from(tmp));
    }
    Ok(Value::from(out))
}

fn slice(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let seq = iterate(args.input())?;
    let slices_arg = args.get(1).cloned().unwrap_or_default();
    let Some(slices) = count_arg(Some(&slices_arg)).filter(|_| slices_arg.is_integer()) else {
        return Err(FilterError::failed(format!(
            "unsupported operand type(s) for //: 'int' and '{}'",
            type_name(&slices_arg)
        )));
    };
    if slices == 0 {
        return Err(FilterError::failed("integer division or modulo by zero"));
    }
    let length = seq.len() as i128;
    let per = length.div_euclid(slices);
    let extra = length.rem_euclid(slices);
    let fill = args.opt(2);
    let mut offset = 0i128;
    let mut out = Vec::new();
    for n in 0..slices.max(0) {
        let start = offset + n * per;
        if n < extra {
            offset += 1;
        }
        let end = offset + (n + 1) * per;
        let clamp = |i: i128| i.clamp(0, length) as usize;
        let mut tmp: Vec<Value> = if clamp(start) < clamp(end) {
            seq[clamp(start)..clamp(end)].to_vec()
        } else {
            Vec::new()
        };
        if let Some(fill) = fill
            && n >= extra
        {
            tmp.push(fill.clone());
        }
        out.push(Value::from(tmp));
    }
    Ok(Value::from(out))
}

fn join(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    require_defined(&items)?;
    let sep = args.get(1).map(pyval::str_of).unwrap_or_default();
    let parts = attribute_parts(args.opt(2));
    let mut texts = Vec::with_capacity(items.len());
    for item in &items {
        texts.push(pyval::str_of(&get_path_strict(item, &parts)?));
    }
    Ok(Value::from(texts.join(&sep)))
}

fn items(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let dict = args.input();
    if dict.kind() != ValueKind::Map {
        return Err(FilterError::failed("Can only get item pairs from a mapping."));
    }
    let pairs = dict.try_iter()?.map(|k| {
        let v = dict.get_item(&k).unwrap_or_default();
        Value::from(vec![k, v])
    });
    Ok(Value::from(pairs.collect::<Vec<_>>()))
}

fn attr(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    // Jinja2's `attr` reads Python attributes only, never dict keys or list items; the plain
    // data ansible templates has no attributes a template could read this way.
    let obj = args.input();
    match obj.kind() {
        ValueKind::Map
        | ValueKind::Seq
        | ValueKind::String
        | ValueKind::Number
        | ValueKind::Bool
        | ValueKind::None => Ok(Value::UNDEFINED),
        _ => Ok(args
            .get(1)
            .and_then(Value::as_str)
            .and_then(|name| obj.get_attr(name).ok())
            .unwrap_or(Value::UNDEFINED)),
    }
}
