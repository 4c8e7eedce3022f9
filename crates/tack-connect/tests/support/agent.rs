//! The workspace's own `tack-agent`, built by cargo for the test (`TACK_AGENT_BIN` names
//! another).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

pub(crate) fn agent_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("TACK_AGENT_BIN") {
            return p.into();
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(cargo)
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

/// The agent without its debug info when `strip` is here (a fifth of the bytes to upload, as
/// the release agent is stripped), kept in cargo's target/tmp; else the agent itself.
pub(crate) fn upload_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let out = dir.join("tack-agent-stripped");
        let tmp = dir.join(format!("tack-agent-stripped.{}", std::process::id()));
        let stripped = std::process::Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(&tmp)
            .arg(agent_bin())
            .status()
            .is_ok_and(|s| s.success());
        if stripped && std::fs::rename(&tmp, &out).is_ok() {
            return out;
        }
        let _ = std::fs::remove_file(&tmp);
        agent_bin().to_path_buf()
    })
}
