//! What the integration tests that reach a host over ssh share: a loopback sshd of
//! `scripts/sshd-loopback.sh`, stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A loopback sshd of `scripts/sshd-loopback.sh`, stopped when dropped.
pub(crate) struct Sshd {
    dir: PathBuf,
}

impl Sshd {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/sshd-loopback.sh")
    }

    /// Started in `dir`: the inventory line of a host reached through it.
    pub(crate) fn start(dir: &Path) -> (Sshd, String) {
        let out = Command::new("sh")
            .arg(Self::script())
            .arg("start")
            .arg(dir)
            .output()
            .expect("sshd-loopback.sh runs");
        assert!(out.status.success(), "sshd: {}", String::from_utf8_lossy(&out.stderr));
        let sshd = Sshd { dir: dir.to_path_buf() };
        let port = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let user = std::fs::read_to_string(dir.join("user")).expect("user").trim().to_string();
        let line = format!(
            "s1 ansible_host=127.0.0.1 ansible_port={port} ansible_user={user} \
             ansible_ssh_private_key_file={} ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile={}'\n",
            dir.join("client_key").display(),
            dir.join("known_hosts").display(),
        );
        (sshd, line)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = Command::new("sh").arg(Self::script()).arg("stop").arg(&self.dir).status();
    }
}
