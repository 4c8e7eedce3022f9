//! The Python path over a child agent and in process: a payload goes to the agent once per
//! link, runs from the warm server each time, and a new link is sent it again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use base64::Engine;
use serde_json::Value;
use tack_agent::python::PythonRun;
use tack_connect::{ChildAgent, Connection, InProcess};

const REF_PYTHON: &str = "/opt/ansible-ref/bin/python";

/// The agent binary, built the way `child_agent.rs` builds it (or `TACK_AGENT_BIN`).
fn agent_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("TACK_AGENT_BIN") {
            return p.into();
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["build", "-q", "-p", "tack-agent", "--bin", "tack-agent"])
            .arg("--message-format=json")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run cargo build");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m["target"]["name"] == "tack-agent")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo names the tack-agent executable")
    })
}

/// `getent`'s payload, built by the engine's builder with the reference ansible-core.
fn payload() -> Option<(Vec<u8>, PythonRun)> {
    if !Path::new(REF_PYTHON).exists() {
        eprintln!("no ansible-core at {REF_PYTHON}: not run");
        return None;
    }
    let script =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../tack-actions/src/python_path/build_payload.py");
    let mut child = Command::new(REF_PYTHON)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(br#"[{"name": "getent"}]"#).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["modules"][0];
    let zip = base64::engine::general_purpose::STANDARD.decode(m["zip"].as_str().unwrap()).unwrap();
    let params = serde_json::json!({"ANSIBLE_MODULE_ARGS": {"database": "passwd", "key": "root"}});
    let run = PythonRun {
        hash: blake3_hex(&zip),
        fqn: m["fqn"].as_str().unwrap().into(),
        profile: m["profile"].as_str().unwrap().into(),
        interpreter: REF_PYTHON.into(),
        params: params.to_string(),
        environment: Default::default(),
        rlimit_nofile: None,
    };
    Some((zip, run))
}

fn blake3_hex(bytes: &[u8]) -> String {
    tack_agent::python::payload_name(bytes)
}

fn root_entry(out: &tack_agent::python::PythonOutput) -> Value {
    assert_eq!(out.rc, 0, "{out:?}");
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    v["ansible_facts"]["getent_passwd"]["root"].clone()
}

#[test]
fn a_child_agent_runs_a_python_path_module_again_and_again() {
    let Some((zip, run)) = payload() else { return };
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    for _ in 0..3 {
        let out = agent.run_python(&zip, &run).unwrap();
        assert_eq!(root_entry(&out)[0], "x");
    }
    // A payload whose bytes are not what its name says is the agent's refusal, not a run.
    let mut wrong = run.clone();
    wrong.hash = tack_agent::python::payload_name(b"other");
    let err = agent.run_python(&zip, &wrong).unwrap_err();
    assert!(err.to_string().contains("hash to"), "{err}");
}

#[test]
fn in_process_runs_the_same_module_with_the_same_result() {
    let Some((zip, run)) = payload() else { return };
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    let there = agent.run_python(&zip, &run).unwrap();
    let here = InProcess.run_python(&zip, &run).unwrap();
    assert_eq!(root_entry(&there), root_entry(&here));
}
