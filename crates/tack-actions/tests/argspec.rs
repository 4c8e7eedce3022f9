//! The argument spec cases recorded from ansible-core 2.21.5's `validate_argument_spec` action
//! by `scripts/record-argspec.py` (`tests/argspec/cases.json`), replayed through
//! `tack_actions::argspec::validate` as tack's action calls it: the task variables named like
//! an option first, `provided_arguments` over them. Every error message, and their order, is
//! compared exactly; an error ansible raised instead of reporting is compared with tack's
//! `SpecError::Raised` under the action's `Task failed: ` prefix. A case listed in
//! `tests/argspec/known-divergences.txt` (with its reason) must still differ.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use tack_yaml::{Mapping, Node, Value};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("argspec")
}

fn node(json: &Json) -> Node {
    Node::bare(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) if !n.is_f64() => Value::Int(i),
            (_, Some(f)) => Value::Float(f),
            _ => Value::BigInt(n.to_string()),
        },
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::Seq(items.iter().map(node).collect()),
        Json::Object(map) => Value::Map(mapping(map)),
    })
}

fn mapping(map: &serde_json::Map<String, Json>) -> Mapping {
    let mut m = Mapping::new();
    for (k, v) in map {
        m.insert(Node::bare(Value::Str(k.clone())), node(v));
    }
    m
}

/// `node` with every value given an origin, as a spec loaded from a file has (ansible's
/// tagged values, whose class names its errors show).
fn loaded(node: Node) -> Node {
    let origin = Some(tack_diag::Origin::described("cases.yml"));
    let value = match node.value {
        Value::Seq(items) => Value::Seq(items.into_iter().map(loaded).collect()),
        Value::Map(m) => Value::Map(loaded_map(m)),
        other => other,
    };
    Node::new(value, origin)
}

fn loaded_map(m: Mapping) -> Mapping {
    let mut out = Mapping::new();
    for (k, v) in m.iter() {
        out.insert(k.clone(), loaded(v.clone()));
    }
    out
}

/// What tack says of a case, in the recording's terms.
fn outcome(case: &Json) -> Result<Vec<String>, String> {
    let obj = |k: &str| case[k].as_object().cloned().unwrap_or_default();
    let spec = loaded_map(mapping(&obj("spec")));
    let vars = obj("vars");
    let mut params = Mapping::new();
    for (name, _) in spec.iter() {
        let name = tack_yaml::pyrepr::str(&name.value);
        if let Some(v) = vars.get(&name) {
            params.insert(Node::bare(Value::Str(name)), node(v));
        }
    }
    for (k, v) in mapping(&obj("params")).iter() {
        params.insert(k.clone(), v.clone());
    }
    match tack_actions::argspec::validate(&spec, &params) {
        Ok(o) => Ok(o.errors),
        Err(e) => Err(format!("Task failed: {e}")),
    }
}

fn expected(case: &Json) -> Result<Vec<String>, String> {
    match case.get("raised") {
        Some(msg) => Err(msg.as_str().unwrap_or_default().to_string()),
        None => Ok(case["errors"]
            .as_array()
            .map(|a| a.iter().map(|e| e.as_str().unwrap_or_default().to_string()).collect())
            .unwrap_or_default()),
    }
}

#[test]
fn recorded_cases() {
    let text = std::fs::read_to_string(dir().join("cases.json")).expect("cases.json");
    let data: Json = serde_json::from_str(&text).expect("valid JSON");
    let known = std::fs::read_to_string(dir().join("known-divergences.txt")).unwrap_or_default();
    let known: Vec<&str> = known
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let cases = data["cases"].as_array().expect("cases");
    let mut failures = Vec::new();
    let mut identical = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap_or_default();
        let (want, got) = (expected(case), outcome(case));
        let same = want == got;
        if same {
            identical += 1;
        }
        match (same, known.contains(&name)) {
            (false, false) => {
                failures.push(format!("{name}:\n  ansible: {want:?}\n  tack:    {got:?}"))
            }
            (true, true) => {
                failures.push(format!("{name}: listed as a divergence but now matches"))
            }
            _ => {}
        }
    }
    eprintln!("{} cases, {identical} identical, {} known divergences", cases.len(), known.len());
    assert!(cases.len() >= 40, "too few cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
