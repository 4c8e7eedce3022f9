//! `--version` says what a user needs to know of the binary they run (issue 25): tack's
//! version, the ansible-core version it is compatible with, and the agent it installs on hosts
//! (machine, static or not, the start of its BLAKE3 hash, the name it is cached under), under
//! tack's own name and under ansible's command names.

use std::os::unix::process::CommandExt;
use std::process::Command;

fn version(argv0: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tack")).arg0(argv0).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_version_names_ansible_core_and_the_embedded_agent() {
    let own = env!("CARGO_PKG_VERSION");
    let tack = version("tack", &["--version"]);
    assert!(tack.starts_with(&format!("tack {own} (compatible with ansible-core 2.21.5; ")));
    // The agent the build was given (scripts/test.sh names scripts/build-agent.sh's), by hash.
    if let Some(path) = option_env!("TACK_AGENT_BIN").filter(|p| !p.is_empty()) {
        let hash = blake3::hash(&std::fs::read(path).unwrap()).to_hex().to_string();
        assert!(tack.ends_with(&format!(", blake3 {})\n", &hash[..16])), "{tack}");
        assert!(tack.contains("; agent x86_64, static, "), "{tack}");
    }
    let aliased = version("ansible-playbook", &["--version"]);
    assert_eq!(
        aliased,
        tack.replacen(&format!("tack {own}"), &format!("ansible-playbook [tack {own}]"), 1)
    );
}
