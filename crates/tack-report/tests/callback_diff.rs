//! Replays the `diff` values `scripts/record-callback-diff.py` rendered with ansible-core
//! 2.21.5's default callback (`_get_diff`) and compares tack's text with ansible's.

use std::path::Path;

use serde_json::Value as Json;
use tack_report::callback::diff::render;
use tack_yaml::{Mapping, Node, Value};

/// Cases where tack knowingly renders differently, with why. Empty: none are known.
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[];

fn node(json: &Json) -> Node {
    Node::bare(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap()),
        },
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::Seq(items.iter().map(node).collect()),
        Json::Object(map) => {
            let mut m = Mapping::new();
            for (k, v) in map {
                m.insert(Node::bare(Value::Str(k.clone())), node(v));
            }
            Value::Map(m)
        }
    })
}

#[test]
fn callback_diff_text_matches_ansible() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/callback-diff.json");
    let cases: Vec<Json> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert!(cases.len() >= 30, "the corpus holds {} cases", cases.len());
    let mut failures = Vec::new();
    let mut matched = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let got = render(&node(&case["diff"]));
        let want = case["text"].as_str().unwrap();
        let known = KNOWN_DIVERGENCES.iter().any(|(n, _)| *n == name);
        if got != want && !known {
            failures.push(format!("{name}:\n got {got:?}\nwant {want:?}"));
        } else if got == want && known {
            matched.push(name);
        }
    }
    assert!(matched.is_empty(), "listed as divergent but now match: {matched:?}");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}
