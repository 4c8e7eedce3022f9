//! Payloads kept on the controller between runs: building one starts the controller's
//! ansible-core interpreter (about half a second), which a converged run of a role that only
//! uses Python-path modules would otherwise pay on every run.
//!
//! An entry is kept under a key naming everything the builder's answer can depend on besides
//! files (the builder itself, the interpreter and its ansible-core version, the request, the
//! `ANSIBLE_*` and `PYTHON*` environment and every `ansible.cfg` ansible could read), and is
//! used only while every file the builder read into it is unchanged (size and mtime) and every
//! directory where a file of the same import name would have been found first is as it was.
//! A payload is code that runs on managed hosts, so the cache directory and its entries must be
//! this user's and private; anything else is passed over as if absent.
//!
//! Owns `$XDG_CACHE_HOME/tack/payloads` (or `~/.cache/tack/payloads`): the builder's answers,
//! and the files `bytecode` keeps there (compiled payloads, the tags hosts named); it never
//! holds a task's arguments (payloads never do).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// Whether this run may add entries (a plan changes nothing on the controller, not even
/// a cache; it still uses what earlier runs kept).
static KEEP: AtomicBool = AtomicBool::new(true);

/// Settles whether the run adds payloads to the cache ([`KEEP`]).
pub fn keep_new_payloads(keep: bool) {
    KEEP.store(keep, Ordering::Relaxed);
}

/// Bumped when the entry format changes.
const FORMAT: u64 = 1;

/// A file younger than this at build time may have changed while it was read without its
/// mtime showing it (a coarse clock): such a payload is not kept.
const SETTLE: Duration = Duration::from_secs(2);

/// The user's cache directory for payloads (not made here).
pub(super) fn user_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("tack").join("payloads"))
}

/// `dir` (made, private, when `create`), when it is there and safe to use.
fn usable(dir: &Path, create: bool) -> Option<PathBuf> {
    let dir = dir.to_path_buf();
    if !dir.is_dir() {
        if !create {
            return None;
        }
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).ok()?;
    }
    private(&dir, true).then_some(dir)
}

/// Whether `path` is this user's and nobody else can write it (nor, for a directory, list it).
fn private(path: &Path, directory: bool) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mode = meta.permissions().mode();
    let kind = if directory { meta.is_dir() } else { meta.is_file() };
    let closed = if directory { mode & 0o077 == 0 } else { mode & 0o022 == 0 };
    kind && meta.uid() == me && closed
}

/// The key of a builder request: the builder, the interpreter, its ansible-core, the request
/// and the environment and configuration files ansible's settings come from.
pub(super) fn key(builder: &str, python: &Path, version: &str, request: &Value) -> String {
    let mut hasher = blake3::Hasher::new();
    let mut part = |bytes: &[u8]| {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    part(&FORMAT.to_le_bytes());
    part(builder.as_bytes());
    part(python.as_os_str().as_encoded_bytes());
    part(version.as_bytes());
    part(request.to_string().as_bytes());
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("ANSIBLE_") || k.starts_with("PYTHON"))
        .collect();
    env.sort();
    for (k, v) in &env {
        part(k.as_bytes());
        part(v.as_bytes());
    }
    for file in config_candidates() {
        part(file.as_os_str().as_encoded_bytes());
        match std::fs::read(&file) {
            Ok(bytes) => part(&bytes),
            Err(_) => part(b"\0absent"),
        }
    }
    hasher.finalize().to_hex().to_string()
}

/// Every file ansible-core could read its settings from (the one it uses is among them).
fn config_candidates() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(named) = std::env::var_os("ANSIBLE_CONFIG") {
        let named = PathBuf::from(named);
        files.push(named.join("ansible.cfg"));
        files.push(named);
    }
    if let Ok(cwd) = std::env::current_dir() {
        files.push(cwd.join("ansible.cfg"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        files.push(PathBuf::from(home).join(".ansible.cfg"));
    }
    files.push(PathBuf::from("/etc/ansible/ansible.cfg"));
    files
}

/// The builder's answer for one module (its `modules[i]` entry with the run's `internal`
/// beside it), kept under `key`, when every input it names is as it was.
pub(super) fn load(dir: &Path, key: &str) -> Option<Value> {
    let path = usable(dir, false)?.join(format!("{key}.json"));
    if !private(&path, false) {
        return None;
    }
    let entry: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    (entry["format"].as_u64() == Some(FORMAT) && unchanged(&entry["module"]["inputs"]))
        .then_some(entry)
}

/// Keeps the builder's answer for one module under `key`, unless it cannot be kept (it names
/// no inputs, or one of them was written too recently to trust its mtime).
pub(super) fn store(
    dir: &Path,
    key: &str,
    module: &Value,
    internal: &Map<String, Value>,
    started: SystemTime,
) {
    let inputs = &module["inputs"];
    if !KEEP.load(Ordering::Relaxed)
        || inputs.is_null()
        || module.get("error").is_some()
        || !settled(inputs, started)
    {
        return;
    }
    let Some(dir) = usable(dir, true) else { return };
    let entry = serde_json::json!({ "format": FORMAT, "module": module, "internal": internal });
    write_private(&dir, &format!("{key}.json"), entry.to_string().as_bytes());
}

/// The bytes kept under `name` (a compiled payload), when the file is private.
pub(super) fn load_bytes(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let path = usable(dir, false)?.join(name);
    private(&path, false).then(|| std::fs::read(&path).ok()).flatten()
}

/// Keeps `bytes` under `name`, private, unless the run keeps nothing new.
pub(super) fn store_bytes(dir: &Path, name: &str, bytes: &[u8]) {
    if !KEEP.load(Ordering::Relaxed) {
        return;
    }
    let Some(dir) = usable(dir, true) else { return };
    write_private(&dir, name, bytes);
}

/// The bytecode tags hosts named in earlier runs (`tags`, one a line).
pub(super) fn tags(dir: &Path) -> Vec<String> {
    let Some(text) = load_bytes(dir, "tags") else { return Vec::new() };
    String::from_utf8_lossy(&text).lines().map(str::to_string).collect()
}

/// Adds `tag` to the tags hosts named, unless the run keeps nothing new.
pub(super) fn remember_tag(dir: &Path, tag: &str) {
    let mut known = tags(dir);
    if known.iter().any(|t| t == tag) {
        return;
    }
    known.push(tag.to_string());
    store_bytes(dir, "tags", (known.join("\n") + "\n").as_bytes());
}

/// Writes `name` in `dir` through a private partial file renamed into place.
fn write_private(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    let partial = dir.join(format!("{name}.{}.part", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&partial)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&partial, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// Whether every file and directory the entry names is as the builder saw it.
fn unchanged(inputs: &Value) -> bool {
    let (Some(files), Some(dirs)) = (inputs["files"].as_array(), inputs["dirs"].as_array()) else {
        return false;
    };
    let file_ok = |f: &Value| {
        let Some(path) = f[0].as_str() else { return false };
        // An input the builder saw absent (a package's made-up `__init__.py`) must still be.
        if f[1].is_null() && f[2].is_null() {
            return std::fs::symlink_metadata(path).is_err();
        }
        let (Some(size), Some(mtime)) = (f[1].as_u64(), f[2].as_i64()) else { return false };
        std::fs::metadata(path)
            .is_ok_and(|m| m.is_file() && m.len() == size && mtime_ns(&m) == i128::from(mtime))
    };
    let dir_ok = |d: &Value| {
        let Some(path) = d[0].as_str() else { return false };
        match (std::fs::metadata(path), d[1].as_i64()) {
            (Ok(m), Some(mtime)) => m.is_dir() && mtime_ns(&m) == i128::from(mtime),
            (Err(_), None) => true,
            _ => false,
        }
    };
    files.iter().all(file_ok) && dirs.iter().all(dir_ok)
}

/// Whether every recorded mtime is older than the build's start by [`SETTLE`].
fn settled(inputs: &Value, started: SystemTime) -> bool {
    let Ok(start) = started.duration_since(UNIX_EPOCH) else { return false };
    let limit = i128::try_from(start.saturating_sub(SETTLE).as_nanos()).unwrap_or(i128::MAX);
    let times = inputs["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| &f[2])
        .chain(inputs["dirs"].as_array().into_iter().flatten().map(|d| &d[1]));
    times.filter(|t| !t.is_null()).all(|t| t.as_i64().is_some_and(|t| i128::from(t) < limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(path: &Path) -> Value {
        let m = std::fs::metadata(path).unwrap();
        serde_json::json!([path, m.len(), i64::try_from(mtime_ns(&m)).unwrap()])
    }

    fn dir_state(path: &Path) -> Value {
        match std::fs::metadata(path) {
            Ok(m) => serde_json::json!([path, i64::try_from(mtime_ns(&m)).unwrap()]),
            Err(_) => serde_json::json!([path, null]),
        }
    }

    #[test]
    fn an_entry_holds_while_its_files_and_directories_are_as_they_were() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("mod.py");
        std::fs::write(&file, "x = 1\n").unwrap();
        let shadow = tmp.path().join("utils");
        let inputs = serde_json::json!({
            "files": [state(&file)],
            "dirs": [dir_state(tmp.path()), dir_state(&shadow)],
        });
        assert!(unchanged(&inputs));
        // A file of the same import name appearing where it would be found first.
        std::fs::create_dir(&shadow).unwrap();
        assert!(!unchanged(&inputs));
        std::fs::remove_dir(&shadow).unwrap();
        // The module edited (a different size).
        std::fs::write(&file, "x = 22\n").unwrap();
        assert!(!unchanged(&inputs));
    }

    #[test]
    fn a_file_the_builder_saw_absent_must_stay_absent() {
        let tmp = tempfile::tempdir().unwrap();
        let init = tmp.path().join("__init__.py");
        let inputs = serde_json::json!({ "files": [[init, null, null]], "dirs": [] });
        assert!(unchanged(&inputs));
        std::fs::write(&init, "").unwrap();
        assert!(!unchanged(&inputs));
    }

    #[test]
    fn a_file_written_just_before_the_build_is_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("mod.py");
        std::fs::write(&file, "x = 1\n").unwrap();
        let inputs = serde_json::json!({ "files": [state(&file)], "dirs": [] });
        assert!(!settled(&inputs, SystemTime::now()));
        assert!(settled(&inputs, SystemTime::now() + Duration::from_secs(5)));
    }

    #[test]
    fn the_key_changes_with_the_request_and_the_settings_environment() {
        let python = Path::new("/usr/bin/python3");
        let a = key("b", python, "2.21.5", &serde_json::json!({"name": "getent"}));
        assert_eq!(a, key("b", python, "2.21.5", &serde_json::json!({"name": "getent"})));
        assert_ne!(a, key("b", python, "2.21.5", &serde_json::json!({"name": "known_hosts"})));
        assert_ne!(a, key("b", python, "2.21.4", &serde_json::json!({"name": "getent"})));
        assert_ne!(a, key("c", python, "2.21.5", &serde_json::json!({"name": "getent"})));
    }

    #[test]
    fn a_file_others_can_write_is_not_private() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("entry.json");
        std::fs::write(&file, "{}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(private(&file, false));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(!private(&file, false));
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!private(tmp.path(), true));
    }
}
