//! The filter unit cases recorded from ansible-core 2.21.5 by `scripts/record-filter-units.py`
//! (`tests/filters/*.json`), run through tack's filters in a minijinja environment.
//!
//! The environment here is minijinja's with the filters registered and strict undefined
//! values; the engine's own undefined rules are not part of it, so an expected undefined-name
//! message is matched by the error's kind only. Every other expected value and message is
//! compared exactly. A case this crate knowingly renders differently is listed in
//! `tests/filters/known-divergences.txt` with its reason, and must still differ.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::value::ValueKind;
use minijinja::{Environment, UndefinedBehavior, Value};
use serde_json::Value as Json;

fn units_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("filters")
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    tack_template::filters::register(&mut env);
    env
}

fn to_json(value: &Value) -> Json {
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => Json::Null,
        ValueKind::Bool => Json::Bool(value.is_true()),
        ValueKind::Number if value.is_integer() => match i64::try_from(value.clone()) {
            Ok(i) => Json::from(i),
            Err(_) => serde_json::from_str(&value.to_string()).unwrap_or(Json::Null),
        },
        ValueKind::Number => Json::from(f64::try_from(value.clone()).unwrap_or(f64::NAN)),
        ValueKind::String => Json::String(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Seq | ValueKind::Iterable => Json::Array(
            value.try_iter().map(|it| it.map(|v| to_json(&v)).collect()).unwrap_or_default(),
        ),
        ValueKind::Map => {
            let mut map = serde_json::Map::new();
            for key in value.try_iter().into_iter().flatten() {
                let item = value.get_item(&key).unwrap_or_default();
                let key = match key.as_str() {
                    Some(s) => s.to_string(),
                    None => tack_template::filters::python_str(&key),
                };
                map.insert(key, to_json(&item));
            }
            Json::Object(map)
        }
        _ => serde_json::json!({ "__repr__": tack_template::filters::python_repr(value) }),
    }
}

fn from_json(json: &Json) -> Value {
    match json {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) => Value::from(f),
            _ => Value::from(n.to_string()),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::from(items.iter().map(from_json).collect::<Vec<_>>()),
        Json::Object(map) => {
            Value::from_pairs(map.iter().map(|(k, v)| (Value::from(k.as_str()), from_json(v))))
        }
    }
}

fn holds_undefined(value: &Value) -> bool {
    match value.kind() {
        ValueKind::Undefined => true,
        ValueKind::Seq => value.try_iter().is_ok_and(|mut it| it.any(|v| holds_undefined(&v))),
        ValueKind::Map => value
            .try_iter()
            .is_ok_and(|mut it| it.any(|k| value.get_item(&k).is_ok_and(|v| holds_undefined(&v)))),
        _ => false,
    }
}

/// What tack makes of one case, in the recording's shape.
fn run(env: &Environment<'static>, expr: &str, vars: &Json) -> Json {
    let ctx = from_json(vars);
    let outcome = env.compile_expression(expr).and_then(|e| e.eval(ctx));
    match outcome {
        // Finalising a result that holds an undefined value fails as the value itself would.
        Ok(value) if holds_undefined(&value) => serde_json::json!({ "error": "<undefined>" }),
        Ok(value) => serde_json::json!({ "result": {
            "type": tack_template::filters::python_type_name(&value),
            "value": to_json(&value),
        }}),
        Err(err) if err.kind() == minijinja::ErrorKind::UndefinedError => {
            serde_json::json!({ "error": "<undefined>" })
        }
        // The engine turns this kind into ansible's message (`unknown_filter_message`, checked
        // against the recording below).
        Err(err) if err.kind() == minijinja::ErrorKind::UnknownFilter => {
            serde_json::json!({ "error": "<unknown filter>" })
        }
        Err(err) => {
            // Every failure a filter words itself carries that text as its source.
            let message = match tack_template::filters::FilterMessage::of(&err) {
                Some(own) => own.to_string(),
                None => match err.detail().map(str::to_string) {
                    Some(d) if d.starts_with("The filter plugin") => {
                        format!("<no FilterMessage source> {d}")
                    }
                    Some(d) => d,
                    None => err.to_string(),
                },
            };
            serde_json::json!({ "error": message })
        }
    }
}

fn expected(case: &Json) -> Json {
    match case.get("error") {
        Some(Json::String(msg))
            if msg.ends_with("is undefined")
                || (msg.starts_with("object of type '")
                    && msg.contains("' has no attribute '")) =>
        {
            serde_json::json!({ "error": "<undefined>" })
        }
        Some(Json::String(msg)) if msg.starts_with("Syntax error in template: No filter named") => {
            serde_json::json!({ "error": "<unknown filter>" })
        }
        Some(err) => serde_json::json!({ "error": err }),
        None => serde_json::json!({ "result": case["result"] }),
    }
}

fn known_divergences() -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(units_dir().join("known-divergences.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(':').map(|(n, why)| (n.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

#[test]
fn unknown_filter_message_is_ansibles() {
    let text = std::fs::read_to_string(units_dir().join("unknown.json")).expect("unknown.json");
    let cases: Vec<Json> = serde_json::from_str(&text).expect("json");
    let mut checked = 0;
    for case in &cases {
        let Some(msg) = case["error"].as_str() else { continue };
        let Some(name) = msg.split('\'').nth(1) else { continue };
        if msg.starts_with("Syntax error in template: No filter named") {
            assert_eq!(tack_template::filters::unknown_filter_message(name), msg);
            checked += 1;
        }
    }
    assert!(checked > 0, "no unknown-filter case recorded");
}

#[test]
fn recorded_filter_cases() {
    // The recording ran with these; `strftime` and the path filters read them.
    // SAFETY: this is the only test in this binary, so no other thread reads the environment.
    unsafe {
        std::env::set_var("TZ", "UTC");
        std::env::set_var("HOME", "/nonexistent-home/tack");
    }
    std::env::set_current_dir(units_dir().join("fixture")).expect("fixture directory");
    let env = environment();
    let known = known_divergences();
    let mut files: Vec<PathBuf> = std::fs::read_dir(units_dir())
        .expect("tests/filters")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let (mut total, mut failures, mut unexpectedly_same) = (0, Vec::new(), Vec::new());
    for file in &files {
        let cases: Vec<Json> =
            serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("json");
        for case in &cases {
            total += 1;
            let name = case["name"].as_str().unwrap_or_default();
            let got = run(&env, case["expr"].as_str().unwrap_or_default(), &case["vars"]);
            let want = expected(case);
            match (got == want, known.contains_key(name)) {
                (true, true) => unexpectedly_same.push(name.to_string()),
                (false, false) => failures
                    .push(format!("{name}: {}\n    want {want}\n    got  {got}", case["expr"])),
                _ => {}
            }
        }
    }
    assert!(total > 0, "no recorded cases found");
    assert!(
        unexpectedly_same.is_empty(),
        "listed as known divergences but now identical: {unexpectedly_same:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
