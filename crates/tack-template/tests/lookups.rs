//! The lookup cases recorded from ansible-core 2.21.5 by `scripts/record-lookups.py`
//! (`tests/lookups/*.json`), run through the real engine: a `Templar::with_loader` over a
//! DataLoader whose base directory is the fixture, as ansible's was, and
//! `tack_template::lookups::run_loop` for the `with_<name>` cases. Every result, error message
//! and written file is compared exactly, except that `fileglob` results are compared as sets
//! (their order is the directory's, which differs from one checkout to another). A case this
//! crate knowingly gets different is listed in `tests/lookups/known-divergences.txt` with its
//! reason, and must still differ.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;
use tack_loader::DataLoader;
use tack_template::{Layer, Provenance, Scope, Templar};
use tack_vault::{VaultSecret, VaultSecrets};
use tack_yaml::{JsonOptions, Node, Value};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("lookups")
}

fn known_divergences() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir().join("known-divergences.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(':').map(|(n, w)| (n.trim().to_string(), w.trim().to_string()))
        })
        .collect()
}

fn files_under(root: &Path, at: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(at).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(root, &path, out);
        } else if path.file_name().is_some_and(|n| n != "cases.yml") {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
            out.insert(rel, String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned());
        }
    }
}

fn sorted_if_glob(case: &Json, mut outcome: Json) -> Json {
    let is_glob = case["expr"].as_str().is_some_and(|e| e.contains("'fileglob'"))
        || case["with"].as_str() == Some("fileglob");
    if !is_glob {
        return outcome;
    }
    if let Some(Json::Array(items)) = outcome.pointer_mut("/result/value") {
        items.sort_by_key(|v| v.to_string());
    }
    if let Some(Json::String(s)) = outcome.pointer_mut("/result/value") {
        let mut parts: Vec<&str> = s.split(',').collect();
        parts.sort();
        *s = parts.join(",");
    }
    outcome
}

/// What tack makes of case `index` of a cases file, in the recording's shape.
fn run(text: &str, index: usize, fixture: &Path, templar: &Templar) -> (String, Json) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let tmp_path = tmp.path().to_string_lossy().into_owned();
    let fixture_s = fixture.to_string_lossy().into_owned();
    let source = text.replace("<FIXTURE>", &fixture_s).replace("<TMP>", &tmp_path);
    let doc = tack_yaml::load_one(&source, None).expect("cases load");
    let doc = doc.as_map().expect("mapping");
    let case = doc.get("cases").and_then(Node::as_seq).expect("cases")[index].clone();
    let case = case.as_map().expect("case mapping");
    let name = case.get("name").and_then(Node::as_str).expect("name").to_string();
    let mut layer = Layer::new();
    for vars in [doc.get("vars"), case.get("vars")].into_iter().flatten() {
        for (k, v) in vars.as_map().into_iter().flat_map(|m| m.iter()) {
            layer.insert(k.as_str().unwrap_or_default(), v.clone(), Provenance::Trusted);
        }
    }
    let scope = Scope::new().with_layer(Arc::new(layer));
    let outcome = match case.get("with").and_then(Node::as_str) {
        Some(with) => {
            let terms = case.get("loop").expect("a with case has a loop");
            tack_template::lookups::run_loop(templar, with, terms, &scope)
                .map(|(items, _)| Node::bare(Value::Seq(items)))
        }
        None => {
            let expr = case.get("expr").and_then(Node::as_str).expect("expr");
            templar.render_str(&format!("{{{{ {expr} }}}}"), &scope).map(|r| r.value)
        }
    };
    let mut json = match outcome {
        Ok(node) => serde_json::json!({ "result": {
            "type": node.python_type(),
            "value": serde_json::from_str::<Json>(
                &tack_yaml::to_json(&node, &JsonOptions::compact()).expect("JSON")
            ).expect("JSON"),
        }}),
        Err(e) => serde_json::json!({ "error": e.message }),
    };
    let mut files = BTreeMap::new();
    files_under(tmp.path(), tmp.path(), &mut files);
    if !files.is_empty() {
        json["files"] = serde_json::to_value(files).expect("files");
    }
    let blob = json.to_string().replace(&fixture_s, "<FIXTURE>").replace(&tmp_path, "<TMP>");
    (name, serde_json::from_str(&blob).expect("JSON"))
}

#[test]
fn recorded_lookup_cases() {
    let fixture = dir().join("fixture");
    // The recording ran with these; `env`, `pipe` and the file lookups read them.
    // SAFETY: this is the only test in this binary, so no other thread reads the environment.
    unsafe {
        std::env::set_var("TZ", "UTC");
        std::env::set_var("HOME", "/nonexistent-home/tack");
        std::env::set_var("LOOKUP_ENV_SET", "from-env");
        std::env::remove_var("LOOKUP_ENV_UNSET");
    }
    std::env::set_current_dir(&fixture).expect("fixture directory");
    let secrets = VaultSecrets::new(vec![VaultSecret::new("default", b"lookup-pw".to_vec())]);
    let mut loader = DataLoader::new(secrets);
    loader.set_basedir(&fixture);
    let templar = Templar::with_loader(Arc::new(loader));
    let known = known_divergences();
    let mut families: Vec<PathBuf> = std::fs::read_dir(dir().join("cases"))
        .expect("cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yml"))
        .collect();
    families.sort();
    let (mut total, mut same, mut failures, mut stale) = (0, 0, Vec::new(), Vec::new());
    for family in &families {
        let text = std::fs::read_to_string(family).expect("cases");
        let recorded = family.with_extension("json");
        let recorded = dir().join(recorded.file_name().expect("name"));
        let cases: Vec<Json> =
            serde_json::from_str(&std::fs::read_to_string(&recorded).expect("recorded"))
                .expect("json");
        for (index, case) in cases.iter().enumerate() {
            total += 1;
            let (name, got) = run(&text, index, &fixture, &templar);
            assert_eq!(
                name,
                case["name"].as_str().unwrap_or_default(),
                "cases and recording disagree"
            );
            let mut want = serde_json::json!({});
            for key in ["result", "error", "files"] {
                if let Some(v) = case.get(key) {
                    want[key] = v.clone();
                }
            }
            let (got, want) = (sorted_if_glob(case, got), sorted_if_glob(case, want));
            match (got == want, known.contains_key(&name)) {
                (true, false) => same += 1,
                (true, true) => stale.push(name),
                (false, false) => {
                    failures.push(format!("{name}:\n    want {want}\n    got  {got}"))
                }
                (false, true) => {}
            }
        }
    }
    eprintln!(
        "{same} of {total} lookup cases identical to ansible-core 2.21.5 ({} known divergences)",
        known.len()
    );
    assert!(total >= 150, "only {total} cases recorded");
    assert!(stale.is_empty(), "listed as divergent but now identical: {stale:?}");
    assert!(failures.is_empty(), "{} cases differ:\n{}", failures.len(), failures.join("\n"));
}
