//! Jinja2 3.1.6's builtin tests (`jinja2/tests.py`) as ansible exposes them: the type tests,
//! `defined`/`undefined` (ansible's wrappers), the comparison operators, `in`, `odd`, `even`,
//! `divisibleby`, `lower`, `upper`, `sameas`, `callable`, `escaped`, `filter` and `test`.
//!
//! Values are judged by Python's rules on the value ansible would hand the test: lists and
//! dicts are its lazy containers (whose class names show in messages), strings are `str`.

use std::cmp::Ordering;

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::{Entry, TestError, TestResult};
use crate::filters::args::{Bound, Sig};
use crate::filters::pyval::{self, Num, class_name};

pub(super) const TESTS: &[Entry] = &[
    Entry::new("defined", Sig::new("test_defined", &["value"], 1), defined).accepting_undefined(),
    Entry::new("undefined", Sig::new("test_undefined", &["value"], 1), undefined)
        .accepting_undefined(),
    Entry::new("none", Sig::new("test_none", &["value"], 1), none),
    Entry::new("boolean", Sig::new("test_boolean", &["value"], 1), boolean),
    Entry::new("false", Sig::new("test_false", &["value"], 1), is_false),
    Entry::new("true", Sig::new("test_true", &["value"], 1), is_true),
    Entry::new("integer", Sig::new("test_integer", &["value"], 1), integer),
    Entry::new("float", Sig::new("test_float", &["value"], 1), float),
    Entry::new("lower", Sig::new("test_lower", &["value"], 1), lower),
    Entry::new("upper", Sig::new("test_upper", &["value"], 1), upper),
    Entry::new("string", Sig::new("test_string", &["value"], 1), string),
    Entry::new("mapping", Sig::new("test_mapping", &["value"], 1), mapping),
    Entry::new("number", Sig::new("test_number", &["value"], 1), number),
    Entry::new("sequence", Sig::new("test_sequence", &["value"], 1), sequence),
    Entry::new("iterable", Sig::new("test_iterable", &["value"], 1), iterable),
    Entry::new("callable", Sig::builtin_one("callable"), callable),
    Entry::new("sameas", Sig::new("test_sameas", &["value", "other"], 2), sameas),
    Entry::new("escaped", Sig::new("test_escaped", &["value"], 1), escaped),
    Entry::new("in", Sig::new("test_in", &["value", "seq"], 2), is_in),
    Entry::new("odd", Sig::new("test_odd", &["value"], 1), odd),
    Entry::new("even", Sig::new("test_even", &["value"], 1), even),
    Entry::new("divisibleby", Sig::new("test_divisibleby", &["value", "num"], 2), divisibleby),
    Entry::new("filter", Sig::new("test_filter", &["value"], 1).env(), filter),
    Entry::new("test", Sig::new("test_test", &["value"], 1).env(), test),
    Entry::operator("==", "eq", eq),
    Entry::operator("eq", "eq", eq),
    Entry::operator("equalto", "eq", eq),
    Entry::operator("!=", "ne", ne),
    Entry::operator("ne", "ne", ne),
    Entry::operator(">", "gt", gt),
    Entry::operator("gt", "gt", gt),
    Entry::operator("greaterthan", "gt", gt),
    Entry::operator("ge", "ge", ge),
    Entry::operator(">=", "ge", ge),
    Entry::operator("<", "lt", lt),
    Entry::operator("lt", "lt", lt),
    Entry::operator("lessthan", "lt", lt),
    Entry::operator("<=", "le", le),
    Entry::operator("le", "le", le),
];

fn arg(args: &Bound, i: usize) -> &Value {
    static NONE: Value = Value::UNDEFINED;
    args.get(i).unwrap_or(&NONE)
}

/// A value whose template failed (an invalid value) passes its failure on, as ansible's
/// wrapped `defined` returns any marker that is not an undefined one.
fn invalid(value: &Value) -> Option<TestError> {
    (value.kind() == ValueKind::Invalid)
        .then(|| TestError::Template(crate::value::invalid_error(value)))
}

fn defined(_: &State, args: &Bound) -> TestResult {
    let value = args.input();
    if let Some(err) = invalid(value) {
        return Err(err);
    }
    Ok(!value.is_undefined())
}

fn undefined(_: &State, args: &Bound) -> TestResult {
    let value = args.input();
    if let Some(err) = invalid(value) {
        return Err(err);
    }
    Ok(value.is_undefined())
}

fn none(_: &State, args: &Bound) -> TestResult {
    Ok(args.input().is_none())
}

fn boolean(_: &State, args: &Bound) -> TestResult {
    Ok(args.input().kind() == ValueKind::Bool)
}

fn is_false(_: &State, args: &Bound) -> TestResult {
    let v = args.input();
    Ok(v.kind() == ValueKind::Bool && !v.is_true())
}

fn is_true(_: &State, args: &Bound) -> TestResult {
    let v = args.input();
    Ok(v.kind() == ValueKind::Bool && v.is_true())
}

fn integer(_: &State, args: &Bound) -> TestResult {
    let v = args.input();
    Ok(v.kind() == ValueKind::Number && v.is_integer())
}

fn float(_: &State, args: &Bound) -> TestResult {
    let v = args.input();
    Ok(v.kind() == ValueKind::Number && !v.is_integer())
}

/// `str(value).islower()`: some cased character, and no uppercase one.
fn cased(value: &Value, lower: bool) -> bool {
    let text = pyval::str_of(value);
    let mut any_cased = false;
    for c in text.chars() {
        let (is_lower, is_upper) = (c.is_lowercase(), c.is_uppercase());
        if (lower && is_upper) || (!lower && is_lower) {
            return false;
        }
        any_cased |= is_lower || is_upper;
    }
    any_cased
}

fn lower(_: &State, args: &Bound) -> TestResult {
    Ok(cased(args.input(), true))
}

fn upper(_: &State, args: &Bound) -> TestResult {
    Ok(cased(args.input(), false))
}

fn string(_: &State, args: &Bound) -> TestResult {
    Ok(args.input().kind() == ValueKind::String)
}

fn mapping(_: &State, args: &Bound) -> TestResult {
    Ok(args.input().kind() == ValueKind::Map)
}

fn number(_: &State, args: &Bound) -> TestResult {
    Ok(matches!(args.input().kind(), ValueKind::Number | ValueKind::Bool))
}

fn sequence(_: &State, args: &Bound) -> TestResult {
    // `len()` and `__getitem__`: strings, lists, tuples, ranges and dicts. ansible turns what
    // a filter or method produces (a generator, `dict.items()`) into a list, so every
    // iterable a test can see is one of these.
    Ok(matches!(
        args.input().kind(),
        ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
    ))
}

fn iterable(_: &State, args: &Bound) -> TestResult {
    Ok(matches!(
        args.input().kind(),
        ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
    ))
}

fn callable(_: &State, args: &Bound) -> TestResult {
    // Functions and macros are minijinja's plain objects; tack's own plain objects (`omit`,
    // dates) are not callable.
    let v = args.input();
    Ok(v.kind() == ValueKind::Plain
        && !crate::value::is_omit_value(v)
        && v.downcast_object_ref::<crate::filters::DateTime>().is_none()
        && v.downcast_object_ref::<crate::vars::objects::PyDateTime>().is_none())
}

/// `value is other`: the singletons `None`, `True` and `False` are themselves; a container is
/// itself only as the same object. A number or string from variables is its own tagged object
/// in ansible, never the literal it equals.
fn sameas(_: &State, args: &Bound) -> TestResult {
    let (a, b) = (args.input(), arg(args, 1));
    Ok(match (a.kind(), b.kind()) {
        (ValueKind::None, ValueKind::None) => true,
        (ValueKind::Bool, ValueKind::Bool) => a.is_true() == b.is_true(),
        _ if a.as_object().is_some() && b.as_object().is_some() => {
            minijinja::tests::is_sameas(a, b)
        }
        _ => false,
    })
}

fn escaped(_: &State, args: &Bound) -> TestResult {
    Ok(args.input().is_safe())
}

/// Python's `value in container`.
pub(crate) fn contains(container: &Value, value: &Value) -> Result<bool, TestError> {
    if let Some(err) = crate::filters::require_defined([container, value]).err() {
        return Err(err.into());
    }
    match container.kind() {
        ValueKind::String => match value.as_str() {
            Some(needle) => Ok(container.as_str().unwrap_or_default().contains(needle)),
            None => Err(TestError::failed(format!(
                "'in <string>' requires string as left operand, not {}",
                class_name(value)
            ))),
        },
        ValueKind::Map => {
            if !pyval::hashable(value) {
                return Err(TestError::failed(format!("unhashable type: '{}'", class_name(value))));
            }
            let keys: Vec<Value> = container.try_iter()?.collect();
            Ok(pyval::contains(&keys, value))
        }
        ValueKind::Seq | ValueKind::Iterable => {
            for item in container.try_iter()? {
                if item.is_undefined() {
                    return Err(TestError::Template(crate::value::undefined_error(&item)));
                }
                if pyval::eq(&item, value) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        _ => Err(TestError::failed(format!(
            "argument of type '{}' is not iterable",
            class_name(container)
        ))),
    }
}

fn is_in(_: &State, args: &Bound) -> TestResult {
    contains(arg(args, 1), args.input())
}

/// Python's `value % num` compared with `want`, as `test_odd`/`test_divisibleby` compute it.
fn remainder_is(value: &Value, num: &Value, want: i128) -> TestResult {
    if let Some(text) = value.as_str() {
        // `str % x` is string formatting: its result (a string) never equals a number.
        if text.contains('%') {
            return crate::python::percent::format_percent(text, num)
                .map(|_| false)
                .map_err(|e| TestError::failed(plain_message(&e)));
        }
        return Err(TestError::failed("not all arguments converted during string formatting"));
    }
    let (Some(x), Some(y)) = (pyval::num(value), pyval::num(num)) else {
        return Err(TestError::failed(format!(
            "unsupported operand type(s) for %: '{}' and '{}'",
            class_name(value),
            class_name(num)
        )));
    };
    match (x, y) {
        (Num::Int(_), Num::Int(0)) => Err(TestError::failed("integer modulo by zero")),
        (Num::Int(a), Num::Int(b)) => {
            Ok(a.rem_euclid(b) + if b < 0 && a.rem_euclid(b) != 0 { b } else { 0 } == want)
        }
        _ => {
            let (a, b) = (x.as_f64(), y.as_f64());
            if b == 0.0 {
                return Err(TestError::failed("float modulo by zero"));
            }
            let mut r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r += b;
            }
            Ok(r == want as f64)
        }
    }
}

/// The message of an error the engine already worded, without its template prefix.
fn plain_message(err: &minijinja::Error) -> String {
    let detail = err.detail().unwrap_or_default().trim_start_matches('\u{2}');
    detail.strip_prefix("Error rendering template: ").unwrap_or(detail).to_string()
}

fn odd(_: &State, args: &Bound) -> TestResult {
    remainder_is(args.input(), &Value::from(2), 1)
}

fn even(_: &State, args: &Bound) -> TestResult {
    remainder_is(args.input(), &Value::from(2), 0)
}

fn divisibleby(_: &State, args: &Bound) -> TestResult {
    remainder_is(args.input(), arg(args, 1), 0)
}

fn filter(state: &State, args: &Bound) -> TestResult {
    // ansible's plugin lookup fails on a name that is not a string, and its container reports
    // such a failure as "present".
    Ok(match args.input().as_str() {
        Some(name) => minijinja::tests::is_filter(state, name),
        None => true,
    })
}

fn test(state: &State, args: &Bound) -> TestResult {
    Ok(match args.input().as_str() {
        Some(name) => minijinja::tests::is_test(state, name),
        None => true,
    })
}

/// `a OP b` for an ordering operator, with Python's `TypeError` for values that have none.
fn ordered(args: &Bound, op: &str, accept: fn(Ordering) -> bool) -> TestResult {
    let (a, b) = (args.input(), arg(args, 1));
    if let (Some(x), Some(y)) = (pyval::num(a), pyval::num(b))
        && (x.as_f64().is_nan() || y.as_f64().is_nan())
    {
        return Ok(false);
    }
    pyval::cmp(a, b, op).map(accept).map_err(TestError::failed)
}

fn eq(_: &State, args: &Bound) -> TestResult {
    Ok(pyval::eq(args.input(), arg(args, 1)))
}

fn ne(_: &State, args: &Bound) -> TestResult {
    Ok(!pyval::eq(args.input(), arg(args, 1)))
}

fn lt(_: &State, args: &Bound) -> TestResult {
    ordered(args, "<", |o| o == Ordering::Less)
}

fn le(_: &State, args: &Bound) -> TestResult {
    ordered(args, "<=", |o| o != Ordering::Greater)
}

fn gt(_: &State, args: &Bound) -> TestResult {
    ordered(args, ">", |o| o == Ordering::Greater)
}

fn ge(_: &State, args: &Bound) -> TestResult {
    ordered(args, ">=", |o| o != Ordering::Less)
}
