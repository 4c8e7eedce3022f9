//! Set-theory filters (ansible's `mathstuff.py`): `unique`, `union`, `intersect`,
//! `difference`, `symmetric_difference`.
//!
//! ansible builds these with Python sets, whose iteration order follows the elements' hashes;
//! [`super::pyset`] reproduces CPython's set table so the order matches. When an element cannot
//! be hashed (a list or dict), ansible falls back to an order-preserving list version, and so
//! does this module.

use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::lists::{attribute_parts, fold, get_path_strict, iterate};
use super::pyset::PySet;
use super::pyval::{self, hashable};
use super::{Entry, FilterError, require_defined};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new(
        "unique",
        Sig::new("unique", &["a", "case_sensitive", "attribute"], 1).env(),
        unique,
    ),
    Entry::new("union", Sig::new("union", &["a", "b"], 2).env(), union),
    Entry::new("intersect", Sig::new("intersect", &["a", "b"], 2).env(), intersect),
    Entry::new("difference", Sig::new("difference", &["a", "b"], 2).env(), difference),
    Entry::new(
        "symmetric_difference",
        Sig::new("symmetric_difference", &["a", "b"], 2).env(),
        symmetric_difference,
    ),
];

/// Jinja2's `do_unique` over the items' keys, or the unhashable key where it raises
/// `TypeError`.
fn jinja_unique(
    items: &[Value],
    keys: &[Value],
    case_sensitive: bool,
) -> Result<Vec<Value>, Value> {
    let mut seen = Seen::default();
    let mut out = Vec::new();
    for (item, key) in items.iter().zip(keys) {
        let key = fold(key.clone(), case_sensitive);
        if !hashable(&key) {
            return Err(key);
        }
        if seen.insert(key) {
            out.push(item.clone());
        }
    }
    Ok(out)
}

/// A value as Python's set tells it apart: numbers equal across `bool`, `int` and `float`
/// (`1 == 1.0 == True`), strings by their text.
#[derive(Hash, PartialEq, Eq)]
enum HashKey {
    None,
    Undefined,
    Int(i128),
    Float(u64),
    Str(String),
}

fn hash_key(value: &Value) -> Option<HashKey> {
    if let Some(n) = pyval::num(value) {
        return match n {
            pyval::Num::Int(i) => Some(HashKey::Int(i)),
            // NaN equals nothing by value; it is looked for as Python would, one by one.
            pyval::Num::Float(f) if f.is_nan() => None,
            // An integral float is the int of its value (exact: within i128's range).
            pyval::Num::Float(f) if f.fract() == 0.0 && f.abs() < 1.0e38 => {
                Some(HashKey::Int(f as i128))
            }
            pyval::Num::Float(f) => Some(HashKey::Float(f.to_bits())),
        };
    }
    match value.kind() {
        minijinja::value::ValueKind::String => value.as_str().map(|s| HashKey::Str(s.into())),
        minijinja::value::ValueKind::None => Some(HashKey::None),
        minijinja::value::ValueKind::Undefined => Some(HashKey::Undefined),
        _ => None,
    }
}

/// The keys met so far: a hash set for the values Python hashes by value (so `unique` stays
/// linear), the rest compared one by one as Python's `==` does.
#[derive(Default)]
struct Seen {
    hashed: std::collections::HashSet<HashKey>,
    others: Vec<Value>,
}

impl Seen {
    /// Whether `key` is new (and now seen).
    fn insert(&mut self, key: Value) -> bool {
        match hash_key(&key) {
            Some(hashed) => self.hashed.insert(hashed),
            None if pyval::contains(&self.others, &key) => false,
            None => {
                self.others.push(key);
                true
            }
        }
    }
}

/// ansible's own fallback: first occurrences by `==`.
fn list_unique(items: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        if !pyval::contains(&out, item) {
            out.push(item.clone());
        }
    }
    out
}

const UNIQUE_FAILED: &str = "Jinja2's unique filter failed and we cannot fall back to Ansible's \
                             version as it does not support the parameters supplied.";

fn unique(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let items = iterate(args.input())?;
    let case_sensitive = args.get(1);
    let attribute = args.opt(2);
    let parts = attribute_parts(attribute);
    let folded = !case_sensitive.is_some_and(pyval::truthy);
    require_defined(&items)?;
    let keys: Vec<Value> = match items.iter().map(|i| get_path_strict(i, &parts)).collect() {
        Ok(keys) => keys,
        // ansible catches the failure and, given an attribute, reports it as its own.
        Err(FilterError::Template(e)) if attribute.is_some() => {
            let detail = e.detail().map(str::to_string).unwrap_or_else(|| e.to_string());
            return Err(FilterError::caused(UNIQUE_FAILED, &detail));
        }
        Err(e) => return Err(e),
    };
    let unhashable = match jinja_unique(&items, &keys, !folded) {
        Ok(out) => return Ok(Value::from(out)),
        Err(key) => key,
    };
    let explicitly_insensitive = case_sensitive
        .is_some_and(|c| c.kind() == minijinja::value::ValueKind::Bool && !c.is_true());
    if explicitly_insensitive || attribute.is_some() {
        return Err(FilterError::caused(
            UNIQUE_FAILED,
            &format!("unhashable type: '{}'", pyval::class_name(&unhashable)),
        ));
    }
    Ok(Value::from(list_unique(&items)))
}

fn operands(args: &Bound) -> Result<(Vec<Value>, Vec<Value>), FilterError> {
    let a = iterate(args.input())?;
    let b = iterate(args.get(1).unwrap_or(&Value::UNDEFINED))?;
    require_defined(a.iter().chain(&b))?;
    Ok((a, b))
}

fn all_hashable(a: &[Value], b: &[Value]) -> bool {
    a.iter().chain(b).all(hashable)
}

fn union(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (a, b) = operands(args)?;
    if all_hashable(&a, &b) {
        return Ok(Value::from(PySet::from_items(&a).union(&PySet::from_items(&b)).items()));
    }
    let mut both = a;
    both.extend(b);
    Ok(Value::from(list_unique(&both)))
}

fn intersect(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (a, b) = operands(args)?;
    if all_hashable(&a, &b) {
        return Ok(Value::from(PySet::from_items(&a).intersection(&PySet::from_items(&b)).items()));
    }
    let common: Vec<Value> = a.iter().filter(|x| pyval::contains(&b, x)).cloned().collect();
    Ok(Value::from(list_unique(&common)))
}

fn difference(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (a, b) = operands(args)?;
    if all_hashable(&a, &b) {
        return Ok(Value::from(PySet::from_items(&a).difference(&PySet::from_items(&b)).items()));
    }
    let only_a: Vec<Value> = a.iter().filter(|x| !pyval::contains(&b, x)).cloned().collect();
    Ok(Value::from(list_unique(&only_a)))
}

fn symmetric_difference(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (a, b) = operands(args)?;
    if all_hashable(&a, &b) {
        let result = PySet::from_items(&a).symmetric_difference(&PySet::from_items(&b));
        return Ok(Value::from(result.items()));
    }
    let common: Vec<Value> =
        list_unique(&a.iter().filter(|x| pyval::contains(&b, x)).cloned().collect::<Vec<_>>());
    let mut both = a;
    both.extend(b);
    let out = list_unique(&both).into_iter().filter(|x| !pyval::contains(&common, x));
    Ok(Value::from(out.collect::<Vec<_>>()))
}
