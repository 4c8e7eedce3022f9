//! The test-plugin cases (`tests/test_plugins/cases/*.yml`) rendered by tack's real engine and
//! compared with what ansible-core 2.21.5 gave for each (`tests/test_plugins/*.json`, recorded
//! by `scripts/record-test-plugins.py`).
//!
//! Each case is `"{{ EXPR }}"` rendered by [`Templar`] with the case file's variables (and the
//! case's own) as one trusted layer; the result's Python type and JSON value, or the error's
//! message, and the warnings the render raised must be exactly the recorded ones. A case tack
//! knowingly renders differently is listed in `tests/test_plugins/known-divergences.txt` with
//! its reason, and must still differ.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value as Json, json};
use tack_loader::DataLoader;
use tack_template::{Layer, Provenance, Scope, Templar};
use tack_vault::{VaultSecret, VaultSecrets};
use tack_yaml::{JsonOptions, Mapping, Node};

/// name -> target, relative to the fixture directory (as the recording script makes them).
const SYMLINKS: &[(&str, &str)] =
    &[("link-to-file", "plain.txt"), ("link-to-dir", "sub"), ("broken-link", "no-such-target")];

static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("test_plugins")
}

fn make_symlinks(fixture: &Path) {
    for (name, target) in SYMLINKS {
        let link = fixture.join(name);
        if std::fs::read_link(&link).is_ok_and(|t| t == Path::new(target)) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).expect("create fixture symlink");
    }
}

fn known_divergences() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir().join("known-divergences.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(':').map(|(n, why)| (n.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

/// The warnings' messages, as the recording captures them (without the `[WARNING]: ` block
/// framing).
fn take_warnings() -> Vec<String> {
    let mut captured = WARNINGS.lock().unwrap_or_else(|p| p.into_inner());
    captured
        .drain(..)
        .map(|t| {
            let t = t.strip_prefix("[WARNING]: ").unwrap_or(&t);
            t.trim_end().to_string()
        })
        .collect()
}

fn outcome(templar: &Templar, expr: &str, vars: &Mapping) -> Json {
    let scope = Scope::new().with_layer(Arc::new(Layer::from_mapping(vars, Provenance::Trusted)));
    tack_diag::forget_shown_warnings();
    take_warnings();
    let rendered = templar.render_str(&format!("{{{{ {expr} }}}}"), &scope);
    let mut out = match rendered {
        Ok(r) => {
            let text = tack_yaml::to_json(&r.value, &JsonOptions::compact()).expect("JSON");
            json!({ "result": {
                "type": r.value.python_type(),
                "value": serde_json::from_str::<Json>(&text).expect("tack's JSON parses"),
            }})
        }
        Err(e) => json!({ "error": e.message }),
    };
    let warnings = take_warnings();
    if !warnings.is_empty() {
        out["warnings"] = json!(warnings);
    }
    out
}

fn recorded(case: &Json) -> Json {
    let mut want = serde_json::Map::new();
    for key in ["result", "error", "warnings"] {
        if let Some(v) = case.get(key) {
            want.insert(key.to_string(), v.clone());
        }
    }
    Json::Object(want)
}

#[test]
fn recorded_test_plugin_cases() {
    let fixture = dir().join("fixture");
    make_symlinks(&fixture);
    // SAFETY: this is the only test in this binary, so no other thread reads the environment.
    unsafe {
        std::env::set_var("TZ", "UTC");
        std::env::set_var("HOME", "/nonexistent-home/tack");
    }
    std::env::set_current_dir(&fixture).expect("fixture directory");
    tack_diag::set_warning_sink(Some(Box::new(|text: &str| {
        WARNINGS.lock().unwrap_or_else(|p| p.into_inner()).push(text.to_string());
    })));

    let secrets = VaultSecrets::new(vec![VaultSecret::new("default", b"secret-pw".to_vec())]);
    let templar = Templar::with_loader(Arc::new(DataLoader::new(secrets)));
    let known = known_divergences();
    let mut families: Vec<PathBuf> = std::fs::read_dir(dir().join("cases"))
        .expect("tests/test_plugins/cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yml"))
        .collect();
    families.sort();

    let (mut total, mut identical) = (0, 0);
    let (mut failures, mut unexpectedly_same) = (Vec::new(), Vec::new());
    let mut seen_known = Vec::new();
    for path in &families {
        let family = path.file_stem().and_then(|s| s.to_str()).expect("family name");
        let text = std::fs::read_to_string(path).expect("cases file");
        let doc = tack_yaml::load_one(&text, Some(Arc::from(path.as_path()))).expect("cases load");
        let doc = doc.as_map().expect("a mapping");
        let shared = doc.get("vars").and_then(Node::as_map).cloned().unwrap_or_default();
        let cases = doc.get("cases").and_then(Node::as_seq).expect("cases");
        let recorded_path = dir().join(format!("{family}.json"));
        let recorded_cases: Vec<Json> = serde_json::from_str(
            &std::fs::read_to_string(&recorded_path)
                .unwrap_or_else(|_| panic!("{family}: not recorded; run the recording script")),
        )
        .expect("recorded JSON");
        assert_eq!(recorded_cases.len(), cases.len(), "{family}: recording is stale");
        for (case, want) in cases.iter().zip(&recorded_cases) {
            let case = case.as_map().expect("a case is a mapping");
            let name = case.get("name").and_then(Node::as_str).expect("name");
            let expr = case.get("expr").and_then(Node::as_str).expect("expr");
            assert_eq!(want["name"], name, "{family}: recording is stale");
            assert_eq!(want["expr"], expr, "{family}/{name}: recording is stale");
            let mut vars = shared.clone();
            if let Some(own) = case.get("vars").and_then(Node::as_map) {
                for (k, v) in own.iter() {
                    vars.insert(k.clone(), v.clone());
                }
            }
            total += 1;
            let got = outcome(&templar, expr, &vars);
            let want = recorded(want);
            let listed = known.contains_key(name);
            if listed {
                seen_known.push(name.to_string());
            }
            match (got == want, listed) {
                (true, false) => identical += 1,
                (true, true) => unexpectedly_same.push(name.to_string()),
                (false, true) => {}
                (false, false) => failures
                    .push(format!("{family}/{name}: {expr}\n    want {want}\n    got  {got}")),
            }
        }
    }
    tack_diag::set_warning_sink(None);
    let stale: Vec<&String> = known.keys().filter(|k| !seen_known.contains(k)).collect();
    eprintln!(
        "{identical} of {total} test-plugin cases identical to ansible-core ({} known divergences)",
        known.len()
    );
    assert!(total >= 250, "too few recorded cases: {total}");
    assert!(stale.is_empty(), "known divergences that name no case: {stale:?}");
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

#[test]
fn unknown_test_message_is_ansibles() {
    let text = std::fs::read_to_string(dir().join("misc.json")).expect("misc.json");
    let cases: Vec<Json> = serde_json::from_str(&text).expect("json");
    let mut checked = 0;
    for case in &cases {
        let Some(msg) = case["error"].as_str() else { continue };
        if let Some(rest) = msg.strip_prefix("Syntax error in template: No test named '") {
            let name = rest.trim_end_matches("'.");
            assert_eq!(tack_template::test_plugins::unknown_test_message(name), msg);
            checked += 1;
        }
    }
    assert!(checked > 0, "no unknown-test case recorded");
}

#[test]
fn every_registered_test_has_a_recorded_case() {
    let mut exprs = String::new();
    for entry in std::fs::read_dir(dir()).expect("dir").flatten() {
        if entry.path().extension().is_some_and(|x| x == "json") {
            exprs.push_str(&std::fs::read_to_string(entry.path()).expect("read"));
        }
    }
    let missing: Vec<&str> = tack_template::test_plugins::names()
        .into_iter()
        .filter(|name| {
            let quoted = format!("'{name}'");
            let is_word = |s: &str| {
                exprs.match_indices(s).any(|(i, _)| {
                    let before = exprs[..i].chars().next_back();
                    let after = exprs[i + s.len()..].chars().next();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            !(is_word(&format!("is {name}"))
                || is_word(&format!("is not {name}"))
                || exprs.contains(&quoted))
        })
        .collect();
    assert!(missing.is_empty(), "tests without a recorded case: {missing:?}");
}
