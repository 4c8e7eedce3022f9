//! tack's loader against ansible-core 2.21.5's, case by case.
//!
//! `tests/corpus/*.json` were recorded by `scripts/record-yaml.py` from ansible's own
//! `AnsibleLoader`: every value's Python type and text, whether strings are trusted (not
//! `!unsafe`), origins, warnings and errors. Each case is loaded here from a file with the same
//! content and compared field by field. Values PyYAML builds that tack cannot hold (`!!set`,
//! self-referencing aliases) must be refused by name instead.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value as Json;
use tack_yaml::{
    DuplicateKeys, LoadOptions, Loaded, Node, Value, YamlWarning, YamlWarningKind, load_all_with,
    load_single_with, py_float_repr,
};

fn corpus(name: &str) -> Vec<Json> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str::<Json>(&text).unwrap().as_array().unwrap().clone()
}

/// Every way a value can differ from the recording, as a path and a reason.
fn compare(path: &str, want: &Json, got: &Node, diffs: &mut Vec<String>) {
    let mut fail = |why: String| diffs.push(format!("{path}: {why}"));
    if let (Some(line), Some(col)) = (want.get("line"), want.get("col")) {
        let origin = got.origin.as_ref().map(|o| (o.line, o.col));
        let expected = (line.as_u64().unwrap() as u32, col.as_u64().unwrap() as u32);
        if origin != Some(expected) {
            fail(format!("origin {origin:?}, want {expected:?}"));
        }
    }
    let kind = want["type"].as_str().unwrap();
    match (kind, &got.value) {
        ("null", Value::Null) => {}
        // A node that holds itself (the recorder stops at it): tack unrolls it, which
        // `construct`'s own tests check level by level.
        ("recursive", Value::Seq(_) | Value::Map(_)) => {}
        ("bool", Value::Bool(b)) if want["value"].as_bool() == Some(*b) => {}
        ("int", Value::Int(i)) if want["repr"].as_str() == Some(&i.to_string()) => {}
        ("int", Value::BigInt(s)) if want["repr"].as_str() == Some(s) => {}
        ("float", Value::Float(f)) if want["repr"].as_str() == Some(&py_float_repr(*f)) => {}
        ("str", Value::Str(s)) if want["value"].as_str() == Some(s) && want["trusted"] == true => {}
        ("str", Value::Unsafe(s))
            if want["value"].as_str() == Some(s) && want["trusted"] == false => {}
        ("date" | "datetime", Value::Timestamp(t))
            if want["repr"].as_str() == Some(&t.python_repr())
                && want["str"].as_str() == Some(&t.python_str())
                && (kind == "date") == t.time.is_none() => {}
        ("vault", Value::Vault(c)) if want["ciphertext"].as_str() == Some(c) => {}
        ("bytes", Value::Bytes(b))
            if want["repr"].as_str() == Some(&tack_yaml::pyrepr::bytes_repr(b)) => {}
        ("list" | "tuple", Value::Seq(items)) => {
            let want_items = want["items"].as_array().unwrap();
            if want_items.len() != items.len() {
                fail(format!("{} items, want {}", items.len(), want_items.len()));
                return;
            }
            for (i, (w, g)) in want_items.iter().zip(items).enumerate() {
                compare(&format!("{path}[{i}]"), w, g, diffs);
            }
        }
        ("dict", Value::Map(map)) => {
            let want_items = want["items"].as_array().unwrap();
            if want_items.len() != map.len() {
                fail(format!("{} keys, want {}", map.len(), want_items.len()));
                return;
            }
            for (i, (w, (k, v))) in want_items.iter().zip(map.iter()).enumerate() {
                compare(&format!("{path}{{key {i}}}"), &w[0], k, diffs);
                compare(&format!("{path}{{value {i}}}"), &w[1], v, diffs);
            }
        }
        _ => fail(format!("got {:?}, want {want}", got.value)),
    }
}

fn compare_warnings(want: &[Json], got: &[YamlWarning], diffs: &mut Vec<String>) {
    if want.len() != got.len() {
        diffs.push(format!("{} warnings {got:?}, want {}", got.len(), want.len()));
        return;
    }
    for (w, g) in want.iter().zip(got) {
        let kind_ok = match (&g.kind, w["kind"].as_str()) {
            (YamlWarningKind::DuplicateKey, Some("warning")) => true,
            (YamlWarningKind::Deprecated { removed_in }, Some("deprecated")) => {
                w["version"].as_str() == Some(removed_in)
            }
            _ => false,
        };
        let position = w.get("line").map(|line| {
            let origin = g.origin.as_ref().map(|o| (o.line as u64, o.col as u64));
            origin == Some((line.as_u64().unwrap(), w["col"].as_u64().unwrap()))
        });
        if !kind_ok
            || w["message"].as_str() != Some(&g.message)
            || w["help"].as_str() != g.help.as_deref()
            || position == Some(false)
        {
            diffs.push(format!("warning {g:?}, want {w}"));
        }
    }
}

/// Cases ansible loads but tack refuses: the refusal must name what is refused.
fn refusal(want: &Json) -> Option<&'static str> {
    fn walk(j: &Json) -> Option<&'static str> {
        match j["type"].as_str() {
            Some("set") => Some("!!set"),
            _ => j.get("items")?.as_array()?.iter().find_map(|item| match item {
                Json::Array(pair) => pair.iter().find_map(walk),
                other => walk(other),
            }),
        }
    }
    match want {
        Json::Array(docs) => docs.iter().find_map(walk),
        other => walk(other),
    }
}

fn run_case(case: &Json, dir: &Path) -> Vec<String> {
    let text = case["yaml"].as_str().unwrap();
    let file = dir.join("case.yml");
    std::fs::write(&file, text).unwrap();
    let path: Arc<Path> = Arc::from(file.as_path());
    let options = LoadOptions {
        duplicate_keys: match case["duplicate_keys"].as_str() {
            Some("error") => DuplicateKeys::Error,
            Some("ignore") => DuplicateKeys::Ignore,
            _ => DuplicateKeys::Warn,
        },
        ..LoadOptions::default()
    };
    let loaded = if case["mode"] == "all" {
        load_all_with(text, Some(path), &options)
    } else {
        load_single_with(text, Some(path), &options)
    };
    let mut diffs = Vec::new();
    match (case.get("result"), case.get("error"), loaded) {
        (Some(want), _, Err(err)) if refusal(want).is_some() => {
            let named = refusal(want).unwrap();
            if !err.message.starts_with("tack ") || !err.message.contains(named) {
                diffs.push(format!("refusal {:?} does not name {named}", err.message));
            }
        }
        (Some(want), _, Ok(loaded)) if refusal(want).is_some() => {
            diffs.push(format!(
                "loaded {:?}, must refuse {}",
                loaded.documents,
                refusal(want).unwrap()
            ));
        }
        (Some(want), _, Ok(Loaded { documents, warnings })) => {
            if case["mode"] == "all" {
                let want_docs = want.as_array().unwrap();
                if want_docs.len() != documents.len() {
                    diffs.push(format!("{} documents, want {}", documents.len(), want_docs.len()));
                }
                for (i, (w, g)) in want_docs.iter().zip(&documents).enumerate() {
                    compare(&format!("doc{i}"), w, g, &mut diffs);
                }
            } else {
                compare("$", want, &documents[0], &mut diffs);
            }
            compare_warnings(case["warnings"].as_array().unwrap(), &warnings, &mut diffs);
        }
        (_, Some(want), Err(err)) => {
            let origin =
                err.origin.as_ref().filter(|o| o.line > 0).map(|o| (o.line as u64, o.col as u64));
            let want_origin = want["line"].as_u64().map(|l| (l, want["col"].as_u64().unwrap()));
            if want["message"].as_str() != Some(&err.message)
                || want_origin != origin
                || want["help"].as_str() != err.help.as_deref()
            {
                diffs.push(format!(
                    "error {:?} at {origin:?} help {:?}, want {want}",
                    err.message, err.help
                ));
            }
        }
        (_, Some(want), Ok(loaded)) => {
            diffs.push(format!("loaded {:?}, want error {want}", loaded.documents));
        }
        (_, _, Err(err)) => diffs.push(format!("error {err:?}, want success")),
        (None, None, Ok(_)) => diffs.push("the case records neither result nor error".into()),
    }
    diffs
}

fn run_corpus(name: &str) {
    // The loader reports warnings to the process channel too; keep test output clean.
    tack_diag::set_warning_sink(Some(Box::new(|_| {})));
    let dir = tempfile::tempdir().unwrap();
    let cases = corpus(name);
    let mut failures = Vec::new();
    for case in &cases {
        let diffs = run_case(case, dir.path());
        if !diffs.is_empty() {
            failures.push(format!(
                "case {:?}:\n  {}",
                case["name"].as_str().unwrap(),
                diffs.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from ansible-core:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn scalars_match_ansible() {
    assert!(corpus("scalars.json").len() >= 80);
    run_corpus("scalars.json");
}

#[test]
fn structures_match_ansible() {
    // The loader runs on threads with a release build's room for its deepest trees (a
    // recursive alias unrolled); a debug build's frames need more.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(|| run_corpus("structures.json"))
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn untrusted_text_loads_every_string_unsafe() {
    let options = LoadOptions { untrusted: true, ..LoadOptions::default() };
    let loaded = load_single_with("a: [b, 1]\n", None, &options).unwrap();
    let map = loaded.documents[0].as_map().unwrap();
    let (key, value) = map.iter().next().unwrap();
    assert_eq!(key.value, Value::Unsafe("a".into()));
    assert_eq!(value.as_seq().unwrap()[0].value, Value::Unsafe("b".into()));
    assert_eq!(value.as_seq().unwrap()[1].value, Value::Int(1));
}

#[test]
fn text_without_a_file_is_placed_under_unknown() {
    let node = tack_yaml::load_one("a:\n  b: 1\n", None).unwrap();
    let inner = node.as_map().unwrap().get("a").unwrap().as_map().unwrap();
    let origin = inner.get("b").unwrap().origin.clone().unwrap();
    assert_eq!(origin.to_string(), "<unknown>:2:6");
}

#[test]
fn large_mappings_keep_python_semantics() {
    tack_diag::set_warning_sink(Some(Box::new(|_| {})));
    let mut text: String = (0..20_000).map(|i| format!("key_{i}: {i}\n")).collect();
    text.push_str("key_7: last\n");
    let loaded = load_single_with(&text, None, &LoadOptions::default()).unwrap();
    let map = loaded.documents[0].as_map().unwrap();
    assert_eq!(map.len(), 20_000);
    assert_eq!(map.get("key_7").unwrap().value, Value::Str("last".into()));
    assert_eq!(map.keys().nth(7).unwrap().as_str(), Some("key_7"));
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(loaded.warnings[0].message, "Found duplicate mapping key 'key_7'.");
}
