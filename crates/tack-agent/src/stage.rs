//! The agent's staging directory: where files the controller sends for one sub-task wait
//! until the module that needs them has run (seed 002, "What stays on the host").
//!
//! One directory per link, `stage-<host>-<pid>/` inside the agent's cache (the directory the
//! agent binary is in), made on the link's first put, mode 0700, and used only while a
//! no-follow `lstat` says it is a directory this uid alone owns, in a cache no other user
//! may change. Making it also removes the
//! directories dead agents of the same host left behind. Each staged file gets a name of the
//! agent's own choosing (a sequence number and the BLAKE3 hash of its bytes), mode 0600 (0700
//! for an executable), and goes when the controller unstages it; the whole directory goes
//! when the link ends.
//!
//! Owns the directory and the files in it; the bytes come from `serve`, and what a module
//! does with a staged file is the module's.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file could not be staged or unstaged.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("this agent has no cache directory to stage files in")]
    NoRoot,
    #[error(
        "the staging directory {0} is not a directory this user alone owns (checked without following links); refusing to stage files there"
    )]
    NotPrivate(PathBuf),
    #[error(
        "the agent's cache {0} is not a directory only its owner may change; refusing to stage files there"
    )]
    OpenCache(PathBuf),
    #[error("the staged bytes do not match their hash: expected {expected}, got {got}")]
    Hash { expected: String, got: String },
    #[error("the link already stages for host '{ours}', not '{asked}'")]
    OtherHost { ours: String, asked: String },
    #[error("{0} was not staged by this link")]
    NotStaged(String),
    #[error("could not {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StageError {
    let path = path.to_path_buf();
    move |source| StageError::Io { what, path, source }
}

/// One link's staging.
pub struct Stage {
    root: Option<PathBuf>,
    /// The directory, once the first put made it, and the host it is for.
    dir: Option<(String, PathBuf)>,
    staged: BTreeSet<PathBuf>,
    next: u64,
    pid: u32,
    uid: u32,
}

impl Stage {
    /// Staging inside `root` (the agent's cache); `None` stages nothing.
    pub fn new(root: Option<PathBuf>) -> Self {
        // SAFETY: geteuid cannot fail and touches no memory.
        let uid = unsafe { libc::geteuid() };
        Stage { root, dir: None, staged: BTreeSet::new(), next: 1, pid: std::process::id(), uid }
    }

    /// The directory next to the running agent's own executable (its cache on a host).
    pub fn beside_executable() -> Self {
        let root = std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf));
        Stage::new(root)
    }

    /// Keeps `bytes` (whose hash the controller says is `hash`) and returns its path.
    pub fn put(
        &mut self,
        host: &str,
        hash: &str,
        bytes: &[u8],
        executable: bool,
    ) -> Result<PathBuf, StageError> {
        let got = blake3::hash(bytes).to_hex();
        if !got.as_str().eq_ignore_ascii_case(hash) {
            return Err(StageError::Hash { expected: hash.to_string(), got: got.to_string() });
        }
        let dir = self.dir_for(host)?;
        check_private(&dir, self.uid)?;
        let path = dir.join(format!("{}-{}", self.next, got.as_str()));
        self.next += 1;
        let mode = if executable { 0o700 } else { 0o600 };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io("create", &path))?;
        self.staged.insert(path.clone());
        if let Err(e) = file.write_all(bytes).and_then(|()| file.sync_data()) {
            let _ = std::fs::remove_file(&path);
            self.staged.remove(&path);
            return Err(StageError::Io { what: "write", path, source: e });
        }
        Ok(path)
    }

    /// Removes a file this link staged; one a module already moved away is fine.
    pub fn remove(&mut self, path: &str) -> Result<(), StageError> {
        let path = PathBuf::from(path);
        if !self.staged.remove(&path) {
            return Err(StageError::NotStaged(path.display().to_string()));
        }
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StageError::Io { what: "remove", path, source: e }),
        }
    }

    /// The link's directory (`None` before the first put).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_ref().map(|(_, d)| d.as_path())
    }

    /// Removes the whole directory: the link has ended.
    pub fn close(&mut self) {
        if let Some((_, dir)) = self.dir.take() {
            // Only what this agent made and still owns alone is removed.
            if check_private(&dir, self.uid).is_ok() {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        self.staged.clear();
    }

    fn dir_for(&mut self, host: &str) -> Result<PathBuf, StageError> {
        let name = dir_host(host);
        if let Some((ours, dir)) = &self.dir {
            return if *ours == name {
                Ok(dir.clone())
            } else {
                Err(StageError::OtherHost { ours: ours.clone(), asked: name })
            };
        }
        let root = self.root.clone().ok_or(StageError::NoRoot)?;
        check_root(&root, self.uid)?;
        remove_dead(&root, &name, self.uid);
        let dir = root.join(format!("stage-{name}-{}", self.pid));
        make_private(&dir, self.uid)?;
        self.dir = Some((name, dir.clone()));
        Ok(dir)
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        self.close();
    }
}

/// The host as a directory-name part: what is not a letter, digit, `.`, `_` or `-` becomes
/// `_`, so no name can climb out of the cache or look like another host's pid.
pub fn dir_host(host: &str) -> String {
    let name: String = host
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') { c } else { '_' })
        .collect();
    // A `-` would make `stage-a-1-<pid>` ambiguous with host `a`'s; `..` alone would climb.
    if name.is_empty() || name.chars().all(|c| c == '.') { format!("_{name}") } else { name }
}

/// Makes `dir` 0700; a directory already there under this name (a dead agent whose pid came
/// back) is emptied and reused only when it is private to `uid`.
fn make_private(dir: &Path, uid: u32) -> Result<(), StageError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            check_private(dir, uid)?;
            std::fs::remove_dir_all(dir).map_err(io("clear", dir))?;
            std::fs::DirBuilder::new().mode(0o700).create(dir).map_err(io("create", dir))?;
        }
        Err(e) => {
            return Err(StageError::Io { what: "create", path: dir.to_path_buf(), source: e });
        }
    }
    check_private(dir, uid)
}

/// Whether `dir` is, without following a link, a directory owned by `uid` that no one else
/// may enter.
pub fn check_private(dir: &Path, uid: u32) -> Result<(), StageError> {
    let meta = std::fs::symlink_metadata(dir).map_err(io("inspect", dir))?;
    if meta.file_type().is_dir() && meta.uid() == uid && meta.mode() & 0o077 == 0 {
        Ok(())
    } else {
        Err(StageError::NotPrivate(dir.to_path_buf()))
    }
}

/// Whether no other user can rename entries of the cache `root` (and so swap a staging
/// directory between its check and its use): a directory, not a link, owned by `uid` or
/// root, writable by its owner only.
fn check_root(root: &Path, uid: u32) -> Result<(), StageError> {
    let meta = std::fs::symlink_metadata(root).map_err(io("inspect", root))?;
    let owner = meta.uid() == uid || meta.uid() == 0;
    if meta.file_type().is_dir() && owner && meta.mode() & 0o022 == 0 {
        Ok(())
    } else {
        Err(StageError::OpenCache(root.to_path_buf()))
    }
}

/// Removes `stage-<host>-<pid>` directories under `root` whose agent is no longer alive.
fn remove_dead(root: &Path, host: &str, uid: u32) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let prefix = format!("stage-{host}-");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else { continue };
        let Ok(pid) = pid.parse::<i32>() else { continue };
        if pid <= 0 || alive(pid) {
            continue;
        }
        let path = entry.path();
        if check_private(&path, uid).is_ok() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
#[path = "stage_tests.rs"]
mod tests;
