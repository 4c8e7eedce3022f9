//! Replays the pairs `scripts/record-difflib.py` recorded from CPython 3.13's difflib and
//! compares tack-py's opcodes and unified diffs with CPython's, line for line.

use std::path::Path;

use serde_json::Value;
use tack_py::difflib::{SequenceMatcher, UnifiedOptions, unified_diff};

/// Cases where tack knowingly answers differently, with why. Empty: none are known.
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[];

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn cases() -> Vec<Value> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/difflib.json");
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn opcodes(a: &[String], b: &[String]) -> Vec<(String, usize, usize, usize, usize)> {
    SequenceMatcher::new(a, b, true)
        .opcodes()
        .iter()
        .map(|o| (o.tag.as_str().to_string(), o.i1, o.i2, o.j1, o.j2))
        .collect()
}

fn recorded_opcodes(v: &Value) -> Vec<(String, usize, usize, usize, usize)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|op| {
            let n = |i: usize| op[i].as_u64().unwrap() as usize;
            (op[0].as_str().unwrap().to_string(), n(1), n(2), n(3), n(4))
        })
        .collect()
}

#[test]
fn difflib_matches_cpython() {
    let mut failures = Vec::new();
    let mut matched = Vec::new();
    let all = cases();
    for case in &all {
        let name = case["name"].as_str().unwrap();
        let (a, b) = (strs(&case["a"]), strs(&case["b"]));
        let mut problems = Vec::new();
        // The recorded lines are `str.splitlines(True)` of the text they join back into.
        if tack_py::text::splitlines_keepends(&a.concat()) != a {
            problems.push("splitlines(True) of the before text".to_string());
        }
        if opcodes(&a, &b) != recorded_opcodes(&case["opcodes"]) {
            problems.push(format!("opcodes {:?}", opcodes(&a, &b)));
        }
        let ansible = UnifiedOptions {
            fromfile: "before",
            tofile: "after",
            n: 3,
            lineterm: "\n",
            ..Default::default()
        };
        let got = unified_diff(&a, &b, &ansible);
        if got != strs(&case["unified"]) {
            problems.push(format!("unified_diff:\n{}", got.concat()));
        }
        let other = UnifiedOptions {
            fromfile: "x",
            tofile: "y",
            fromfiledate: "d1",
            n: 1,
            lineterm: "\n",
            ..Default::default()
        };
        let got = unified_diff(&a, &b, &other);
        if got != strs(&case["unified_n1"]) {
            problems.push(format!("unified_diff n=1:\n{}", got.concat()));
        }
        let known = KNOWN_DIVERGENCES.iter().any(|(n, _)| *n == name);
        match (problems.is_empty(), known) {
            (false, false) => failures.push(format!("{name}: {}", problems.join("\n"))),
            (true, true) => matched.push(name.to_string()),
            _ => {}
        }
    }
    assert!(all.len() >= 40, "the corpus holds {} cases", all.len());
    assert!(matched.is_empty(), "listed as divergent but now match: {matched:?}");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n\n"));
}

/// The corpus must exercise what sets difflib apart: pairs where a Myers diff (the
/// `similar` crate) pairs lines differently from CPython's recorded answer.
#[test]
fn corpus_has_pairs_where_myers_disagrees() {
    let mut disagree = 0;
    for case in cases() {
        let (a, b) = (strs(&case["a"]), strs(&case["b"]));
        let myers: Vec<_> = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b)
            .iter()
            .map(|op| {
                let (tag, x, y) = op.as_tag_tuple();
                (format!("{tag:?}"), x, y)
            })
            .collect();
        let ours = recorded_opcodes(&case["opcodes"]);
        let ours_equal: Vec<_> =
            ours.iter().filter(|o| o.0 == "equal").map(|o| (o.1, o.3, o.2 - o.1)).collect();
        let myers_equal: Vec<_> = myers
            .iter()
            .filter(|o| o.0 == "Equal")
            .map(|o| (o.1.start, o.2.start, o.1.len()))
            .collect();
        if ours_equal != myers_equal {
            disagree += 1;
            eprintln!("Myers differs: {}", case["name"]);
        }
    }
    assert!(disagree >= 4, "only {disagree} pairs where Myers and difflib disagree");
}
