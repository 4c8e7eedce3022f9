//! `tack eval` as a user runs it: the real binary on expressions whose outcome was recorded from
//! ansible-core 2.21.5 (the real-world filter idioms in
//! `crates/tack-template/tests/filters/idioms.json`, recorded by
//! `scripts/record-filter-units.py`), with their variables passed as `-e @file`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value as Json;

fn tack(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(args)
        .current_dir(cwd)
        .env("ANSIBLE_CONFIG", "")
        .env("TZ", "UTC")
        .output()
        .expect("tack runs")
}

fn idioms() -> Vec<Json> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tack-template/tests/filters/idioms.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("idioms.json")).expect("json")
}

#[test]
fn bare_expressions_give_what_ansible_recorded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut checked = 0;
    for case in idioms() {
        let Some(want) = case.get("result") else { continue };
        let name = case["name"].as_str().expect("name");
        let vars = dir.path().join(format!("{name}.json"));
        std::fs::write(&vars, case["vars"].to_string()).expect("write vars");
        let at = format!("@{}", vars.display());
        let expr = case["expr"].as_str().expect("expr");
        let out = tack(&["eval", "--typed", "-e", &at, expr], dir.path());
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let got: Json = serde_json::from_slice(&out.stdout).expect("eval prints JSON");
        assert_eq!(got["type"], want["type"], "{name}: {expr}");
        assert_eq!(got["value"], want["value"], "{name}: {expr}");
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} idioms checked");
}

#[test]
fn a_template_keeps_native_typing_and_mixed_text_is_a_string() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tack(&["eval", "--typed", "-e", "n=41", "{{ n | int + 1 }}"], dir.path());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"type": "int", "value": 42}"#);
    let out = tack(&["eval", "--typed", "-e", "n=41", "n={{ n }}"], dir.path());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"type": "str", "value": "n=41"}"#);
}

#[test]
fn an_undefined_name_is_ansibles_error_and_exit_code_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tack(&["eval", "missing_var | upper"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'missing_var' is undefined"), "{stderr}");
}

#[test]
fn conditionals_print_true_or_false() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tack(&["eval", "--conditional", "-e", "x=3", "x | int > 2"], dir.path());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "true");
    let out = tack(&["eval", "--conditional", "-e", "x=3", "x | int > 5"], dir.path());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "false");
}
