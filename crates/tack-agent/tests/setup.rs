//! tack's `setup` against ansible-core 2.21.5's, case by case (tests/setup/cases.yml).
//!
//! Two comparisons:
//! - `live_against_reference` (when the reference is installed, `$ANSIBLE_REF` or
//!   /opt/ansible-ref): runs `scripts/record-setup-facts.py --print` (ansible's setup on this
//!   machine, now) and tack's setup with the same arguments, and compares the whole results:
//!   every key set exactly, recursively, and every value exactly except the facts listed in
//!   `SHAPE_ONLY` (they change between two runs; compared by JSON type) and `UNORDERED` (lists
//!   ansible builds from Python sets; compared as multisets).
//! - `stored_recording_shapes` (always): against tests/setup/recorded.json, recorded on
//!   another machine of the same kind, only what does not depend on the machine: the
//!   result's keys, the fact names each subset yields (interface names aside), the keys of
//!   fixed-shape facts, and failure messages; the `local` facts of the fixture exactly.
//!
//! `KNOWN_DIVERGENCES` lists (case, fact path, why) pairs where tack differs; a listed pair
//! that starts matching fails the test so the list stays true.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};
use tack_agent::{Invocation, run_module};

/// Facts whose values change from one run to the next, compared by type only.
const SHAPE_ONLY: &[(&str, &str)] = &[
    ("ansible_date_time/epoch", "the clock"),
    ("ansible_date_time/epoch_int", "the clock"),
    ("ansible_date_time/iso8601", "the clock"),
    ("ansible_date_time/iso8601_basic", "the clock"),
    ("ansible_date_time/iso8601_basic_short", "the clock"),
    ("ansible_date_time/iso8601_micro", "the clock"),
    ("ansible_date_time/second", "the clock"),
    ("ansible_date_time/minute", "the clock"),
    ("ansible_date_time/hour", "the clock (a run may straddle the hour)"),
    ("ansible_date_time/time", "the clock"),
    ("ansible_loadavg/1m", "the kernel's load average moves"),
    ("ansible_loadavg/5m", "the kernel's load average moves"),
    ("ansible_loadavg/15m", "the kernel's load average moves"),
    ("ansible_memfree_mb", "free memory moves"),
    ("ansible_memory_mb/real/free", "free memory moves"),
    ("ansible_memory_mb/real/used", "free memory moves"),
    ("ansible_memory_mb/nocache/free", "page cache moves"),
    ("ansible_memory_mb/nocache/used", "page cache moves"),
    ("ansible_swapfree_mb", "swap use moves"),
    ("ansible_memory_mb/swap/free", "swap use moves"),
    ("ansible_memory_mb/swap/used", "swap use moves"),
    ("ansible_memory_mb/swap/cached", "swap use moves"),
    ("ansible_mounts/[]/block_available", "disk use moves"),
    ("ansible_mounts/[]/block_used", "disk use moves"),
    ("ansible_mounts/[]/inode_available", "disk use moves"),
    ("ansible_mounts/[]/inode_used", "disk use moves"),
    ("ansible_mounts/[]/size_available", "disk use moves"),
    ("ansible_uptime_seconds", "the clock"),
];

/// Lists ansible builds from a Python set or a directory listing: their order is not stable.
const UNORDERED: &[(&str, &str)] = &[
    ("ansible_interfaces", "/sys/class/net listing order"),
    ("ansible_virtualization_tech_guest", "a Python set"),
    ("ansible_virtualization_tech_host", "a Python set"),
];

/// (case, fact path, why): where tack knowingly differs from ansible on this machine.
const KNOWN_DIVERGENCES: &[(&str, &str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/setup/fixture")
        .canonicalize()
        .expect("fixture directory")
        .to_string_lossy()
        .into_owned()
}

fn replace_strings(v: &Value, old: &str, new: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace(old, new)),
        Value::Array(a) => Value::Array(a.iter().map(|x| replace_strings(x, old, new)).collect()),
        Value::Object(m) => Value::Object(
            m.iter().map(|(k, x)| (k.clone(), replace_strings(x, old, new))).collect(),
        ),
        other => other.clone(),
    }
}

fn recorded() -> Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/setup/recorded.json"),
    )
    .expect("recorded.json");
    serde_json::from_str(&text).expect("recorded.json is JSON")
}

/// tack's result for a case, with the fixture path written as the recording writes it.
fn run_tack(args: &Value) -> Value {
    let args = replace_strings(args, "@FIXTURE@", &fixture());
    let invocation =
        Invocation { args: args.as_object().cloned().unwrap_or_default(), ..Invocation::default() };
    let result = run_module("setup", &invocation).expect("setup is native");
    replace_strings(&Value::Object(result), &fixture(), "@FIXTURE@")
}

/// A path without the `ansible_facts/` prefix and with interface names generalised.
fn fact_path(path: &str) -> &str {
    path.strip_prefix("ansible_facts/").unwrap_or(path)
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn compare(expected: &Value, actual: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let fp = fact_path(path);
    if SHAPE_ONLY.iter().any(|(p, _)| *p == fp) {
        if type_of(expected) != type_of(actual) {
            out.push((fp.into(), format!("type {} != {}", type_of(actual), type_of(expected))));
        }
        return;
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let ek: BTreeSet<&String> = e.keys().collect();
            let ak: BTreeSet<&String> = a.keys().collect();
            for k in ek.difference(&ak) {
                out.push((format!("{fp}/{k}"), "missing in tack".into()));
            }
            for k in ak.difference(&ek) {
                out.push((format!("{fp}/{k}"), "extra in tack".into()));
            }
            for k in ek.intersection(&ak) {
                let sub = if path.is_empty() { (*k).clone() } else { format!("{path}/{k}") };
                compare(&e[*k], &a[*k], &sub, out);
            }
        }
        (Value::Array(e), Value::Array(a)) if UNORDERED.iter().any(|(p, _)| *p == fp) => {
            let mut es: Vec<String> = e.iter().map(Value::to_string).collect();
            let mut as_: Vec<String> = a.iter().map(Value::to_string).collect();
            es.sort();
            as_.sort();
            if es != as_ {
                out.push((fp.into(), format!("{actual} != {expected} (as sets)")));
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (x, y) in e.iter().zip(a) {
                compare(x, y, &format!("{path}/[]"), out);
            }
        }
        _ => {
            if expected != actual {
                out.push((fp.into(), format!("tack {actual} != ansible {expected}")));
            }
        }
    }
}

fn check_divergences(found: Vec<(String, String, String)>) {
    let mut unexpected = Vec::new();
    for (case, path, what) in &found {
        if !KNOWN_DIVERGENCES.iter().any(|(c, p, _)| c == case && p == path) {
            unexpected.push(format!("{case}: {path}: {what}"));
        }
    }
    let mut fixed = Vec::new();
    for (c, p, _) in KNOWN_DIVERGENCES {
        if !found.iter().any(|(case, path, _)| case == c && path == p) {
            fixed.push(format!("{c}: {p}"));
        }
    }
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "{} divergences not listed:\n{}\nlisted but now matching:\n{}",
        unexpected.len(),
        unexpected.join("\n"),
        fixed.join("\n")
    );
}

#[test]
fn varying_facts_are_all_compared_by_shape() {
    let rec = recorded();
    let varying = rec["varying"].as_array().expect("varying list");
    let missing: Vec<&str> = varying
        .iter()
        .filter_map(Value::as_str)
        .map(fact_path)
        .filter(|p| {
            let list = p.strip_suffix("/[]").unwrap_or(p);
            !SHAPE_ONLY.iter().any(|(s, _)| s == p) && !UNORDERED.iter().any(|(u, _)| *u == list)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "facts that varied between two reference runs but are compared exactly: {missing:?}"
    );
}

#[test]
fn live_against_reference() {
    let reference = std::env::var("ANSIBLE_REF").unwrap_or_else(|_| "/opt/ansible-ref".into());
    let python = Path::new(&reference).join("bin/python3");
    if !python.exists() {
        eprintln!("no reference at {reference}: live comparison skipped");
        return;
    }
    let out = Command::new(&python)
        .arg(root().join("scripts/record-setup-facts.py"))
        .arg("--print")
        .current_dir(root())
        .output()
        .expect("run the recording script");
    assert!(
        out.status.success(),
        "record-setup-facts.py --print failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let live: Value = serde_json::from_slice(&out.stdout).expect("script prints JSON");
    let rec = recorded();
    let cases = rec["cases"].as_object().expect("cases");
    let mut found = Vec::new();
    let mut identical = 0;
    for (name, case) in cases {
        let expected = &live["cases"][name];
        let actual = run_tack(&case["args"]);
        let mut diffs = Vec::new();
        compare(expected, &actual, "", &mut diffs);
        if diffs.is_empty() {
            identical += 1;
        }
        for (path, what) in diffs {
            found.push((name.clone(), path, what));
        }
    }
    eprintln!("setup live: {} cases, {identical} identical", cases.len());
    check_divergences(found);
}

/// Fact names a result yields, with the per-interface facts (named after the machine's
/// interfaces) left out.
fn fact_names(facts: &Map<String, Value>) -> BTreeSet<String> {
    let ifaces: BTreeSet<String> = facts
        .get("ansible_interfaces")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(|i| format!("ansible_{i}")).collect())
        .unwrap_or_default();
    facts.keys().filter(|k| !ifaces.contains(*k)).cloned().collect()
}

/// Facts of a fixed shape whose key sets do not depend on the machine.
const FIXED_SHAPE: &[&str] = &[
    "ansible_date_time",
    "ansible_python",
    "ansible_memory_mb",
    "ansible_apparmor",
    "ansible_selinux",
    "ansible_locally_reachable_ips",
    "ansible_device_links",
    "ansible_loadavg",
];

#[test]
fn stored_recording_shapes() {
    let rec = recorded();
    let cases = rec["cases"].as_object().expect("cases");
    let mut found = Vec::new();
    let mut identical = 0;
    for (name, case) in cases {
        let before = found.len();
        let expected = &case["result"];
        let actual = run_tack(&case["args"]);
        let mut push = |path: &str, what: String| {
            found.push((name.clone(), format!("stored:{path}"), what));
        };
        let ek: BTreeSet<&String> = expected.as_object().expect("result").keys().collect();
        let ak: BTreeSet<&String> = actual.as_object().expect("result").keys().collect();
        if ek != ak {
            push("", format!("result keys {ak:?} != {ek:?}"));
        }
        if expected.get("msg") != actual.get("msg") {
            push("msg", format!("{:?} != {:?}", actual.get("msg"), expected.get("msg")));
        }
        let (Some(ef), Some(af)) = (
            expected.get("ansible_facts").and_then(Value::as_object),
            actual.get("ansible_facts").and_then(Value::as_object),
        ) else {
            identical += usize::from(found.len() == before);
            continue;
        };
        let (en, an) = (fact_names(ef), fact_names(af));
        for k in en.difference(&an) {
            push(k, "missing in tack".into());
        }
        for k in an.difference(&en) {
            push(k, "extra in tack".into());
        }
        for key in FIXED_SHAPE {
            if let (Some(e), Some(a)) = (ef.get(*key), af.get(*key)) {
                let keys = |v: &Value| -> BTreeSet<String> {
                    v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
                };
                if keys(e) != keys(a) {
                    push(key, format!("keys {:?} != {:?}", keys(a), keys(e)));
                }
            }
        }
        if let (Some(e), Some(a)) = (ef.get("ansible_local"), af.get("ansible_local"))
            && e != a
        {
            push("ansible_local", format!("{a} != {e}"));
        }
        if expected.get("warnings") != actual.get("warnings") {
            push(
                "warnings",
                format!("{:?} != {:?}", actual.get("warnings"), expected.get("warnings")),
            );
        }
        if found.len() == before {
            identical += 1;
        }
    }
    eprintln!(
        "setup stored: {} cases, {identical} identical in their machine-independent parts",
        cases.len()
    );
    check_divergences(found);
}

/// The comparison itself finds what differs (so an all-identical run means something).
#[test]
fn comparison_sees_differences() {
    let e = serde_json::json!({"ansible_facts": {"ansible_lsb": {"id": "Debian"},
        "ansible_interfaces": ["lo", "eth0"], "ansible_uptime_seconds": 5, "ansible_mounts": [{"size_available": 1}]}});
    let mut diffs = Vec::new();
    compare(&e, &e, "", &mut diffs);
    assert!(diffs.is_empty(), "{diffs:?}");
    let a = serde_json::json!({"ansible_facts": {"ansible_lsb": {"id": "Ubuntu", "x": 1},
        "ansible_interfaces": ["eth0", "lo"], "ansible_uptime_seconds": 9, "ansible_mounts": [{"size_available": 2}]}});
    compare(&e, &a, "", &mut diffs);
    let paths: Vec<&str> = diffs.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["ansible_lsb/x", "ansible_lsb/id"]);
    let b = serde_json::json!({"ansible_facts": {"ansible_lsb": {"id": "Debian"},
        "ansible_interfaces": ["lo"], "ansible_uptime_seconds": "9", "ansible_mounts": []}});
    diffs.clear();
    compare(&e, &b, "", &mut diffs);
    let paths: Vec<&str> = diffs.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["ansible_interfaces", "ansible_mounts", "ansible_uptime_seconds"]);
}
