//! A throw-away PostgreSQL of `scripts/postgres-loopback.sh` for tests, stopped when dropped.
//! Shared by the run store's tests and the server's (`#[path]`-included by both).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A loopback PostgreSQL, stopped when dropped.
pub(crate) struct Postgres {
    dir: PathBuf,
    pub url: String,
}

impl Postgres {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres-loopback.sh")
    }

    pub(crate) fn start(dir: &Path) -> Postgres {
        // The server runs as the `postgres` user when the tests run as root: it must reach DIR.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = dir.join("pg");
        let out = Command::new("sh").arg(Self::script()).arg("start").arg(&dir).output().unwrap();
        assert!(out.status.success(), "postgres: {}", String::from_utf8_lossy(&out.stderr));
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Postgres { dir, url }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("sh").arg(Self::script()).arg("stop").arg(&self.dir).status();
    }
}
