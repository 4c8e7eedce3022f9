//! ansible's `mathstuff.py` tests: `subset`/`issubset`, `superset`/`issuperset` (Python sets of
//! the two values), `contains` (`in` the other way round) and `nan`/`isnan`.

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::{Entry, TestError, TestResult};
use crate::filters::args::{Bound, Sig};
use crate::filters::pyval::{self, class_name};

pub(super) const TESTS: &[Entry] = &[
    Entry::new("subset", Sig::new("issubset", &["a", "b"], 2), issubset),
    Entry::new("issubset", Sig::new("issubset", &["a", "b"], 2), issubset),
    Entry::new("superset", Sig::new("issuperset", &["a", "b"], 2), issuperset),
    Entry::new("issuperset", Sig::new("issuperset", &["a", "b"], 2), issuperset),
    Entry::new("contains", Sig::new("contains", &["seq", "value"], 2), contains),
    Entry::new("nan", Sig::new("isnotanumber", &["x"], 1), isnotanumber),
    Entry::new("isnan", Sig::new("isnotanumber", &["x"], 1), isnotanumber),
];

/// The members of `set(value)`, or Python's `TypeError`.
fn set_of(value: &Value) -> Result<Vec<Value>, TestError> {
    let items: Vec<Value> = match value.kind() {
        ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
            pyval::list_of(value).unwrap_or_default()
        }
        _ => {
            return Err(TestError::failed(format!(
                "'{}' object is not iterable",
                class_name(value)
            )));
        }
    };
    crate::filters::require_defined(&items)?;
    if let Some(unhashable) = items.iter().find(|v| !pyval::hashable(v)) {
        return Err(TestError::failed(format!("unhashable type: '{}'", class_name(unhashable))));
    }
    Ok(items)
}

fn second(args: &Bound) -> Value {
    args.get(1).cloned().unwrap_or_default()
}

fn issubset(_: &State, args: &Bound) -> TestResult {
    let (a, b) = (set_of(args.input())?, set_of(&second(args))?);
    Ok(a.iter().all(|x| pyval::contains(&b, x)))
}

fn issuperset(_: &State, args: &Bound) -> TestResult {
    let (a, b) = (set_of(args.input())?, set_of(&second(args))?);
    Ok(b.iter().all(|x| pyval::contains(&a, x)))
}

fn contains(_: &State, args: &Bound) -> TestResult {
    super::jinja::contains(args.input(), &second(args))
}

fn isnotanumber(_: &State, args: &Bound) -> TestResult {
    // `math.isnan` raises `TypeError` for anything but a number, which the test reads as false.
    Ok(matches!(pyval::num(args.input()), Some(pyval::Num::Float(f)) if f.is_nan()))
}
