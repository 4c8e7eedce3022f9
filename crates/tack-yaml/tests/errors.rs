//! Malformed and suspicious YAML: tack's rendered diagnostics against what ansible-core 2.21.5
//! printed for `ansible-playbook --syntax-check` on the same file.
//!
//! The cases are the CLI golden cases under `tests/golden/yaml-errors/`, recorded by
//! `scripts/record-goldens.py`; this test loads each `bad.yml` with this crate alone and
//! compares the warnings and the `[ERROR]` block with the recorded stderr byte for byte, the
//! run directory written `<CASE>` as the recorder writes it. (The CLI cases themselves pass once
//! `ansible-playbook` is wired to this loader.)

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tack_yaml::{DuplicateKeys, LoadOptions, load_one_with, source_text};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/yaml-errors");
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.join("bad.yml").exists())
        .collect();
    found.sort();
    found
}

fn options(case: &Path) -> LoadOptions {
    let env = std::fs::read_to_string(case.join("env")).unwrap_or_default();
    let duplicate_keys =
        match env.lines().find_map(|line| line.strip_prefix("ANSIBLE_DUPLICATE_YAML_DICT_KEY=")) {
            Some("error") => DuplicateKeys::Error,
            Some("ignore") => DuplicateKeys::Ignore,
            _ => DuplicateKeys::Warn,
        };
    LoadOptions { duplicate_keys, ..LoadOptions::default() }
}

/// Loads the case as the playbook loader will, returning stderr and the exit code.
fn run(case: &Path, work: &Path, shown: &Arc<Mutex<String>>) -> (String, i32) {
    let file = work.join("bad.yml");
    std::fs::copy(case.join("bad.yml"), &file).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let path: Arc<Path> = Arc::from(file.as_path());
    tack_diag::forget_shown_warnings();
    shown.lock().unwrap().clear();
    let result = source_text(&bytes, &path)
        .and_then(|text| load_one_with(text, Some(path.clone()), &options(case)));
    let mut stderr = shown.lock().unwrap().clone();
    let rc = match result {
        Ok(_) => 0,
        Err(err) => {
            let diag = err.to_diagnostic();
            stderr.push_str(&diag.render());
            diag.class.exit_code()
        }
    };
    (stderr.replace(&work.display().to_string(), "<CASE>"), rc)
}

#[test]
fn rendered_errors_match_ansible() {
    let shown = Arc::new(Mutex::new(String::new()));
    let sink = shown.clone();
    tack_diag::set_warning_sink(Some(Box::new(move |text| sink.lock().unwrap().push_str(text))));
    let cases = cases();
    assert!(cases.len() >= 12, "only {} malformed cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let work = tempfile::tempdir().unwrap();
        let (stderr, rc) = run(case, work.path(), &shown);
        let expected = std::fs::read_to_string(case.join("expected/stderr")).unwrap();
        let expected_rc: i32 =
            std::fs::read_to_string(case.join("expected/rc")).unwrap().trim().parse().unwrap();
        if stderr != expected || rc != expected_rc {
            failures.push(format!(
                "{}: rc {rc} (want {expected_rc})\n--- tack\n{stderr}--- ansible\n{expected}",
                case.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
