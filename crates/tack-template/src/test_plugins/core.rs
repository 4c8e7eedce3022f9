//! ansible's `core.py` tests: the task-result tests (`failed`, `changed`, `skipped`,
//! `reachable`, `timedout`, `started`, `finished` and their aliases), the regular-expression
//! tests (`match`, `search`, `regex`), `version`/`version_compare`, `truthy`/`falsy`, `any`/
//! `all`, and the vault tests `vault_encrypted` and `vaulted_file`.
//!
//! The result tests take a registered result (a dict) and refuse anything else with ansible's
//! message; patterns are Python `re` patterns, compiled by the filters' translation.

use std::io::Read;

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::version;
use super::{Entry, TestError, TestResult, truth};
use crate::filters::args::{Bound, Sig};
use crate::filters::pyval::{self, class_name};
use crate::filters::regex::{Anchor, compile_anchored};

const RESULT: &[&str] = &["result"];

pub(super) const TESTS: &[Entry] = &[
    Entry::new("failed", Sig::new("failed", RESULT, 1), failed),
    Entry::new("failure", Sig::new("failed", RESULT, 1), failed),
    Entry::new("succeeded", Sig::new("success", RESULT, 1), success),
    Entry::new("success", Sig::new("success", RESULT, 1), success),
    Entry::new("successful", Sig::new("success", RESULT, 1), success),
    Entry::new("reachable", Sig::new("reachable", RESULT, 1), reachable),
    Entry::new("unreachable", Sig::new("unreachable", RESULT, 1), unreachable),
    Entry::new("timedout", Sig::new("timedout", RESULT, 1), timedout),
    Entry::new("changed", Sig::new("changed", RESULT, 1), changed),
    Entry::new("change", Sig::new("changed", RESULT, 1), changed),
    Entry::new("skipped", Sig::new("skipped", RESULT, 1), skipped),
    Entry::new("skip", Sig::new("skipped", RESULT, 1), skipped),
    Entry::new("finished", Sig::new("finished", RESULT, 1), finished),
    Entry::new("started", Sig::new("started", RESULT, 1), started),
    Entry::new(
        "match",
        Sig::new("match", &["value", "pattern", "ignorecase", "multiline"], 1),
        re_match,
    ),
    Entry::new(
        "search",
        Sig::new("search", &["value", "pattern", "ignorecase", "multiline"], 1),
        re_search,
    ),
    Entry::new(
        "regex",
        Sig::new("regex", &["value", "pattern", "ignorecase", "multiline", "match_type"], 0),
        regex,
    ),
    Entry::new("version_compare", VERSION_SIG, version_compare),
    Entry::new("version", VERSION_SIG, version_compare),
    Entry::new("any", Sig::builtin_one("any"), any),
    Entry::new("all", Sig::builtin_one("all"), all),
    Entry::new("truthy", Sig::new("truthy", &["value", "convert_bool"], 1), truthy),
    Entry::new("falsy", Sig::new("falsy", &["value", "convert_bool"], 1), falsy),
    Entry::new("vault_encrypted", Sig::new("vault_encrypted", &["value"], 1), vault_encrypted),
    Entry::new("vaulted_file", Sig::new("vaulted_file", &["value"], 1), vaulted_file),
];

const VERSION_SIG: Sig =
    Sig::new("version_compare", &["value", "version", "operator", "strict", "version_type"], 2);

/// The registered result a result test was given, or ansible's refusal naming the test.
fn result<'a>(args: &'a Bound, test: &str) -> Result<&'a Value, TestError> {
    let value = args.input();
    if value.kind() == ValueKind::Map {
        Ok(value)
    } else {
        Err(TestError::failed(format!("The '{test}' test expects a dictionary")))
    }
}

/// `result.get(key)`: `None` when absent.
fn get(result: &Value, key: &str) -> Result<Option<Value>, TestError> {
    let v = result.get_item(&Value::from(key))?;
    Ok((!v.is_undefined()).then_some(v))
}

fn flag(result: &Value, key: &str) -> Result<bool, TestError> {
    match get(result, key)? {
        Some(v) => truth(&v),
        None => Ok(false),
    }
}

fn failed(_: &State, args: &Bound) -> TestResult {
    flag(result(args, "failed")?, "failed")
}

fn success(state: &State, args: &Bound) -> TestResult {
    failed(state, args).map(|f| !f)
}

fn unreachable(_: &State, args: &Bound) -> TestResult {
    flag(result(args, "unreachable")?, "unreachable")
}

fn reachable(state: &State, args: &Bound) -> TestResult {
    unreachable(state, args).map(|u| !u)
}

fn skipped(_: &State, args: &Bound) -> TestResult {
    flag(result(args, "skipped")?, "skipped")
}

fn timedout(_: &State, args: &Bound) -> TestResult {
    let result = result(args, "timedout")?;
    match get(result, "timedout")? {
        Some(t) if truth(&t)? => {
            if t.kind() != ValueKind::Map {
                return Err(TestError::failed(format!(
                    "'{}' object has no attribute 'get'",
                    class_name(&t)
                )));
            }
            flag(&t, "period")
        }
        _ => Ok(false),
    }
}

fn changed(_: &State, args: &Bound) -> TestResult {
    let result = result(args, "changed")?;
    if let Some(changed) = get(result, "changed")? {
        return truth(&changed);
    }
    let Some(results) = get(result, "results")? else { return Ok(false) };
    if results.kind() != ValueKind::Seq {
        return Ok(false);
    }
    let items: Vec<Value> = results.try_iter()?.collect();
    // ansible looks at the first item to decide whether these are results, so an empty list
    // fails as Python's indexing does.
    let Some(first) = items.first() else {
        return Err(TestError::failed("list index out of range"));
    };
    if first.kind() != ValueKind::Map {
        return Ok(false);
    }
    for item in &items {
        if item.kind() != ValueKind::Map {
            return Err(TestError::failed(format!(
                "'{}' object has no attribute 'get'",
                class_name(item)
            )));
        }
        if flag(item, "changed")? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `started`/`finished`: the async status, or true (with ansible's warning) for a result that
/// is not an async task's.
fn async_state(args: &Bound, test: &str) -> TestResult {
    let result = result(args, test)?;
    match get(result, test)? {
        Some(v) => truth(&v),
        None => {
            tack_diag::warn(&tack_diag::Diagnostic::new(format!(
                "The '{test}' test expects an async task, but a non-async task was tested"
            )));
            Ok(true)
        }
    }
}

fn finished(_: &State, args: &Bound) -> TestResult {
    async_state(args, "finished")
}

fn started(_: &State, args: &Bound) -> TestResult {
    async_state(args, "started")
}

fn opt_truth(args: &Bound, i: usize) -> Result<bool, TestError> {
    match args.get(i) {
        Some(v) => truth(v),
        None => Ok(false),
    }
}

/// ansible's `regex`: `re.compile(pattern, flags)` then `search`/`match`/`fullmatch` on
/// `str(value)`.
fn run_regex(args: &Bound, anchor: Anchor) -> TestResult {
    let text = args.get(0).map(pyval::str_of).unwrap_or_default();
    let pattern = match args.get(1) {
        None => String::new(),
        Some(p) => match p.as_str() {
            Some(s) => s.to_string(),
            None => {
                return Err(TestError::failed("first argument must be string or compiled pattern"));
            }
        },
    };
    let (ignorecase, multiline) = (opt_truth(args, 2)?, opt_truth(args, 3)?);
    let re = compile_anchored(&pattern, ignorecase, multiline, anchor)?;
    re.is_match(&text).map_err(|e| TestError::failed(format!("regular expression failed: {e}")))
}

fn re_match(_: &State, args: &Bound) -> TestResult {
    run_regex(args, Anchor::Start)
}

fn re_search(_: &State, args: &Bound) -> TestResult {
    run_regex(args, Anchor::Search)
}

fn regex(_: &State, args: &Bound) -> TestResult {
    let anchor = match args.get(4) {
        None => Anchor::Search,
        Some(kind) => match kind.as_str() {
            Some("search") => Anchor::Search,
            Some("match") => Anchor::Start,
            Some("fullmatch") => Anchor::Full,
            _ => {
                return Err(TestError::failed(
                    "Invalid match_type specified. Expected one of: search, match, fullmatch.",
                ));
            }
        },
    };
    run_regex(args, anchor)
}

const OPERATORS: &[(&str, &str)] = &[
    ("==", "eq"),
    ("=", "eq"),
    ("eq", "eq"),
    ("<", "lt"),
    ("lt", "lt"),
    ("<=", "le"),
    ("le", "le"),
    (">", "gt"),
    ("gt", "gt"),
    (">=", "ge"),
    ("ge", "ge"),
    ("!=", "ne"),
    ("<>", "ne"),
    ("ne", "ne"),
];

const VERSION_TYPES: &[&str] = &["loose", "strict", "semver", "semantic", "pep440"];

fn version_compare(_: &State, args: &Bound) -> TestResult {
    let value = args.input();
    let other = args.get(1).cloned().unwrap_or_default();
    let strict = args.opt(3);
    let version_type = args.opt(4);
    if strict.is_some() && version_type.is_some() {
        return Err(TestError::failed("Cannot specify both 'strict' and 'version_type'"));
    }
    if !truth(value)? {
        return Err(TestError::failed("Input version value cannot be empty"));
    }
    if !truth(&other)? {
        return Err(TestError::failed("Version parameter to compare against cannot be empty"));
    }
    let scheme = if strict.map(truth).transpose()?.unwrap_or(false) {
        version::Scheme::Strict
    } else if let Some(kind) = version_type.filter(|v| pyval::truthy(v)) {
        match kind.as_str().and_then(version::Scheme::named) {
            Some(scheme) => scheme,
            None => {
                let names: Vec<String> = VERSION_TYPES.iter().map(|t| format!("'{t}'")).collect();
                return Err(TestError::failed(format!(
                    "Invalid version type ({}). Must be one of {}",
                    pyval::str_of(kind),
                    names.join(", ")
                )));
            }
        }
    } else {
        version::Scheme::Loose
    };
    let operator = args.get(2).map(pyval::str_of).unwrap_or_else(|| "eq".to_string());
    let op = match (args.get(2), OPERATORS.iter().find(|(k, _)| *k == operator)) {
        (Some(given), _) if given.as_str().is_none() => None,
        (_, found) => found.map(|(_, op)| *op),
    };
    let Some(op) = op else {
        let names: Vec<String> = OPERATORS.iter().map(|(k, _)| format!("'{k}'")).collect();
        return Err(TestError::failed(format!(
            "Invalid operator type ({operator}). Must be one of {}",
            names.join(", ")
        )));
    };
    let ordering = version::compare(scheme, &pyval::str_of(value), &pyval::str_of(&other))
        .map_err(|e| TestError::failed(format!("Version comparison failed: {e}")))?;
    use std::cmp::Ordering::*;
    Ok(match op {
        "eq" => ordering == Equal,
        "ne" => ordering != Equal,
        "lt" => ordering == Less,
        "le" => ordering != Greater,
        "gt" => ordering == Greater,
        _ => ordering != Less,
    })
}

/// The items `any`/`all` iterate, or Python's `TypeError`.
fn items(value: &Value) -> Result<Vec<Value>, TestError> {
    match value.kind() {
        ValueKind::String | ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
            Ok(value.try_iter()?.collect())
        }
        _ => Err(TestError::failed(format!("'{}' object is not iterable", class_name(value)))),
    }
}

fn any(_: &State, args: &Bound) -> TestResult {
    for item in items(args.input())? {
        if truth(&item)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn all(_: &State, args: &Bound) -> TestResult {
    for item in items(args.input())? {
        if !truth(&item)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// ansible's `boolean()` where it gives an answer; `None` where it raises `TypeError`.
fn convert_bool(value: &Value) -> Option<bool> {
    tack_py::boolean::strict(crate::value::boolean_input(value))
}

fn truthy_of(args: &Bound) -> TestResult {
    let value = args.input();
    if opt_truth(args, 1)?
        && let Some(b) = convert_bool(value)
    {
        return Ok(b);
    }
    truth(value)
}

fn truthy(_: &State, args: &Bound) -> TestResult {
    truthy_of(args)
}

fn falsy(_: &State, args: &Bound) -> TestResult {
    truthy_of(args).map(|t| !t)
}

fn vault_encrypted(_: &State, args: &Bound) -> TestResult {
    if let Some(ciphertext) = crate::markers::disarm(args.input()) {
        return Ok(tack_vault::is_encrypted(ciphertext.as_bytes()));
    }
    Ok(crate::engine::active::is_decrypted(args.input()))
}

/// `vaulted_file`: whether the file starts with the vault header.
fn vaulted_file(_: &State, args: &Bound) -> TestResult {
    let value = args.input();
    let path = pyval::str_of(value);
    let cannot = |detail: String| {
        TestError::failed(format!(
            "Cannot test if the file {} is a vault: {detail}",
            pyval::repr_of(value)
        ))
    };
    let bytes_repr = tack_py::repr::bytes_repr(path.as_bytes());
    let mut file = std::fs::File::open(&path)
        .map_err(|e| cannot(format!("{}: {bytes_repr}", tack_py::oserror::os_error_no_name(&e))))?;
    let mut head = [0u8; 14];
    let mut read = 0;
    while read < head.len() {
        match file.read(&mut head[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) => {
                return Err(cannot(format!(
                    "{}: {bytes_repr}",
                    tack_py::oserror::os_error_no_name(&e)
                )));
            }
        }
    }
    Ok(&head[..read] == b"$ANSIBLE_VAULT")
}
