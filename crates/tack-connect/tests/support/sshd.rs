//! A loopback sshd for one test: `scripts/sshd-loopback.sh start` in a temporary directory,
//! stopped (and the directory removed) on drop. Sessions made with its client key have
//! `$HOME` inside that directory, so agents a test installs never reach the real home.

use std::path::{Path, PathBuf};
use std::process::Command;

use tack_connect::SshTarget;

pub(crate) struct Sshd {
    dir: tempfile::TempDir,
    pub port: u16,
    pub user: String,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/sshd-loopback.sh")
}

impl Sshd {
    pub(crate) fn start() -> Sshd {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let out = Command::new(script())
            .arg("start")
            .arg(dir.path().join("sshd"))
            .output()
            .expect("run sshd-loopback.sh");
        assert!(out.status.success(), "sshd-loopback.sh: {}", String::from_utf8_lossy(&out.stderr));
        let port = String::from_utf8_lossy(&out.stdout).trim().parse().expect("a port");
        let user = std::fs::read_to_string(dir.path().join("sshd/user")).expect("the user");
        Sshd { dir, port, user: user.trim().to_string() }
    }

    /// The sshd's own directory (`%D` in the recorded cases).
    pub(crate) fn dir(&self) -> PathBuf {
        self.dir.path().join("sshd")
    }

    pub(crate) fn key(&self) -> PathBuf {
        self.dir().join("client_key")
    }

    /// `$HOME` of the sessions this sshd runs.
    pub(crate) fn home(&self) -> PathBuf {
        self.dir().join("home")
    }

    /// A target reaching this sshd with its key, its host key known, and a control path
    /// directory of the test's own.
    pub(crate) fn target(&self) -> SshTarget {
        let mut t = SshTarget::new("127.0.0.1");
        t.port = Some(self.port);
        t.user = Some(self.user.clone());
        t.private_key_file = Some(self.key().display().to_string());
        t.ssh_common_args =
            Some(format!("-o UserKnownHostsFile={}", self.dir().join("known_hosts").display()));
        t.control_path_dir = self.control_dir("default").display().to_string();
        t
    }

    /// A control path directory of this sshd's own, named `name`: its masters end on drop.
    pub(crate) fn control_dir(&self, name: &str) -> PathBuf {
        self.dir.path().join("cp").join(name)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Control masters first: stopping the server leaves its sessions running.
        let cp = self.dir.path().join("cp");
        let dirs = std::fs::read_dir(&cp).into_iter().flatten().flatten();
        let masters = dirs
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
            // Not the forwards to the host's listener that tack keeps beside them.
            .filter(|e| !e.file_name().to_string_lossy().ends_with(".agent"));
        for entry in masters {
            let _ = Command::new("ssh")
                .args(["-o", &format!("ControlPath={}", entry.path().display()), "-O", "exit", "x"])
                .stderr(std::process::Stdio::null())
                .status();
        }
        let _ = Command::new(script()).arg("stop").arg(self.dir()).status();
    }
}
