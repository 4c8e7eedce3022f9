//! The engine cases (`tests/engine/cases.yml`) rendered by tack and compared with what
//! ansible-core 2.21.5 gave for each (`tests/engine/expected.json`, recorded by
//! `scripts/record-template-engine.py`). Every case must match, except the known divergences
//! listed below with their reason; a listed case that starts matching fails the test, so the
//! list stays true.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tack_loader::DataLoader;
use tack_template::{Layer, Provenance, Scope, Templar};
use tack_vault::{VaultSecret, VaultSecrets};
use tack_yaml::{JsonOptions, Mapping, Node, Value};

/// Cases where tack knowingly differs from ansible-core, and why.
const KNOWN: &[(&str, &str)] = &[
    (
        "undef-literal-dict",
        "minijinja cannot describe an undefined value whose base is a literal, so the message \
         is `'(...).z' is undefined` where ansible names the literal's type",
    ),
    (
        "py-list-count",
        "ansible-core 2.21.5 answers 0 for `count()` on a list read from variables (its lazy \
         list compares against its unrendered items); tack counts as Python's list does",
    ),
    (
        "py-append-bound-list",
        "ansible shares a list read from variables with the list it is appended to (changing \
         one later changes both); tack copies it, as ansible copies a list a template built, \
         so that no container can come to hold itself (a self-holding value recurses without \
         end in printing, comparing and hashing)",
    ),
    (
        "ns-holds-itself",
        "ansible prints a namespace that holds itself with Python's `{...}`; tack fails the \
         assignment that closes the loop with ansible's recursion message, because minijinja \
         prints a namespace with no depth limit (a stack overflow would end the run for every \
         host)",
    ),
    ("ns-holds-itself-in-tuple", "as ns-holds-itself"),
    ("ns-holds-itself-through-another", "as ns-holds-itself"),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/engine")
}

fn outcome(templar: &Templar, case: &Mapping, defaults: &Mapping, cases_dir: &str) -> String {
    let mut layer = Layer::from_mapping(defaults, Provenance::Trusted);
    if let Some(vars) = case.get("vars").and_then(Node::as_map) {
        for (k, v) in vars.iter() {
            layer.insert(k.as_str().unwrap_or_default(), v.clone(), Provenance::Trusted);
        }
    }
    let scope = Scope::new().with_layer(Arc::new(layer));
    let template = case.get("template").expect("every case has a template");
    let conditional = case.get("mode").and_then(Node::as_str) == Some("conditional");
    let result = if conditional {
        templar.evaluate_conditional(template, &scope).map(|c| Node::bare(Value::Bool(c.value)))
    } else {
        templar.render(template, &scope).map(|r| r.value)
    };
    let json = match result {
        Ok(node) => serde_json::json!({
            "type": node.python_type(),
            "json": tack_yaml::to_json(&node, &JsonOptions::compact()).expect("JSON"),
        }),
        Err(e) => serde_json::json!({ "error": e.message.replace(cases_dir, "<CASES>") }),
    };
    json.to_string()
}

#[test]
fn engine_cases_match_ansible() {
    let dir = dir();
    let path = dir.join("cases.yml");
    let text = std::fs::read_to_string(&path).expect("cases.yml");
    let doc = tack_yaml::load_one(&text, Some(Arc::from(path.as_path()))).expect("cases.yml loads");
    let doc = doc.as_map().expect("a mapping");
    let defaults = doc.get("defaults").and_then(Node::as_map).expect("defaults");
    let cases = doc.get("cases").and_then(Node::as_seq).expect("cases");
    let expected: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
            .expect("expected.json");

    let secrets = VaultSecrets::new(vec![VaultSecret::new("default", b"secret-pw".to_vec())]);
    let templar = Templar::with_loader(Arc::new(DataLoader::new(secrets)));
    let cases_dir = dir.to_string_lossy().into_owned();

    let mut failures = Vec::new();
    let mut matched = 0;
    for case in cases {
        let case = case.as_map().expect("a case is a mapping");
        let name = case.get("name").and_then(Node::as_str).expect("name");
        let want = expected.get(name).unwrap_or_else(|| panic!("{name}: not recorded"));
        let got = outcome(&templar, case, defaults, &cases_dir);
        let same = serde_json::from_str::<serde_json::Value>(&got).unwrap() == *want;
        let known = KNOWN.iter().any(|(k, _)| *k == name);
        match (same, known) {
            (true, false) => matched += 1,
            (false, true) => {}
            (true, true) => failures.push(format!("{name}: listed as known but now matches")),
            (false, false) => {
                failures.push(format!("{name}:\n  ansible: {want}\n  tack:    {got}"))
            }
        }
    }
    eprintln!("{matched} of {} engine cases identical to ansible-core", cases.len());
    assert!(failures.is_empty(), "{} cases differ:\n{}", failures.len(), failures.join("\n"));
}
