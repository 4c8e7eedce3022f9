//! ansible's `files.py` tests: Python's `os.path` predicates (`exists`, `file`, `directory`,
//! `link`, `link_exists`, `abs`, `same_file`, `mount` and their `is_` aliases) on the
//! controller's file system, relative paths from the working directory.
//!
//! Arguments are taken as `os.path` takes them: a string is a path, an integer (for the
//! `stat`-based predicates) an open file descriptor, anything else Python's `TypeError`.
//! These tests read file metadata only, never contents.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::{Entry, TestError, TestResult};
use crate::filters::args::{Bound, Sig};
use crate::filters::pyval::{self, class_name};

pub(super) const TESTS: &[Entry] = &[
    Entry::new("directory", Sig::new("isdir", &["s"], 1), isdir),
    Entry::new("is_dir", Sig::new("isdir", &["s"], 1), isdir),
    Entry::new("file", Sig::new("isfile", &["path"], 1), isfile),
    Entry::new("is_file", Sig::new("isfile", &["path"], 1), isfile),
    Entry::new("link", Sig::new("islink", &["path"], 1), islink),
    Entry::new("is_link", Sig::new("islink", &["path"], 1), islink),
    Entry::new("exists", Sig::new("exists", &["path"], 1), exists),
    Entry::new("link_exists", Sig::new("lexists", &["path"], 1), lexists),
    Entry::new("abs", Sig::new("isabs", &["s"], 1), isabs),
    Entry::new("is_abs", Sig::new("isabs", &["s"], 1), isabs),
    Entry::new("same_file", Sig::new("samefile", &["f1", "f2"], 2), samefile),
    Entry::new("is_same_file", Sig::new("samefile", &["f1", "f2"], 2), samefile),
    Entry::new("mount", Sig::new("ismount", &["path"], 1), ismount),
    Entry::new("is_mount", Sig::new("ismount", &["path"], 1), ismount),
];

/// What `os.stat`/`os.lstat` was given.
enum Target {
    Path(String),
    Fd(i128),
}

/// The argument of `os.stat` (which also takes a file descriptor), or Python's `TypeError`.
fn stat_target(value: &Value) -> Result<Target, TestError> {
    match value.kind() {
        ValueKind::String => Ok(Target::Path(value.as_str().unwrap_or_default().to_string())),
        ValueKind::Number | ValueKind::Bool
            if value.is_integer() || value.kind() == ValueKind::Bool =>
        {
            match pyval::num(value) {
                Some(pyval::Num::Int(fd)) => Ok(Target::Fd(fd)),
                _ => Err(stat_type_error(value)),
            }
        }
        _ => Err(stat_type_error(value)),
    }
}

fn stat_type_error(value: &Value) -> TestError {
    TestError::failed(format!(
        "stat: path should be string, bytes, os.PathLike or integer, not {}",
        class_name(value)
    ))
}

/// The argument of `os.lstat` (paths only), or Python's `TypeError`.
fn lstat_path(value: &Value) -> Result<String, TestError> {
    match value.as_str() {
        Some(s) => Ok(s.to_string()),
        None => Err(TestError::failed(format!(
            "lstat: path should be string, bytes or os.PathLike, not {}",
            class_name(value)
        ))),
    }
}

/// `os.stat(target)`, with the error Python would show for it.
fn stat(target: &Target) -> Result<Metadata, String> {
    match target {
        Target::Path(p) if p.contains('\0') => Err("embedded null byte".to_string()),
        Target::Path(p) => std::fs::metadata(p).map_err(|e| {
            format!(
                "{}: {}",
                tack_py::oserror::os_error_no_name(&e),
                tack_yaml::pyrepr::repr(&tack_yaml::Value::Str(p.clone()))
            )
        }),
        Target::Fd(fd) => {
            // The descriptor's own entry under /proc is what `fstat` reads.
            let found =
                (*fd >= 0).then(|| std::fs::metadata(format!("/proc/self/fd/{fd}")).ok()).flatten();
            found.ok_or_else(|| format!("[Errno 9] Bad file descriptor: {fd}"))
        }
    }
}

fn lstat(path: &str) -> Option<Metadata> {
    if path.contains('\0') {
        return None;
    }
    std::fs::symlink_metadata(path).ok()
}

fn exists(_: &State, args: &Bound) -> TestResult {
    Ok(stat(&stat_target(args.input())?).is_ok())
}

fn isfile(_: &State, args: &Bound) -> TestResult {
    Ok(stat(&stat_target(args.input())?).is_ok_and(|m| m.is_file()))
}

fn isdir(_: &State, args: &Bound) -> TestResult {
    Ok(stat(&stat_target(args.input())?).is_ok_and(|m| m.is_dir()))
}

fn islink(_: &State, args: &Bound) -> TestResult {
    Ok(lstat(&lstat_path(args.input())?).is_some_and(|m| m.file_type().is_symlink()))
}

fn lexists(_: &State, args: &Bound) -> TestResult {
    Ok(lstat(&lstat_path(args.input())?).is_some())
}

fn isabs(_: &State, args: &Bound) -> TestResult {
    match args.input().as_str() {
        Some(s) => Ok(s.starts_with('/')),
        None => Err(TestError::failed(format!(
            "expected str, bytes or os.PathLike object, not {}",
            class_name(args.input())
        ))),
    }
}

fn samefile(_: &State, args: &Bound) -> TestResult {
    let first = stat(&stat_target(args.input())?).map_err(TestError::failed)?;
    let other = args.get(1).cloned().unwrap_or_default();
    let second = stat(&stat_target(&other)?).map_err(TestError::failed)?;
    Ok(first.dev() == second.dev() && first.ino() == second.ino())
}

/// `os.path.ismount`: not a symlink, and on another device than its parent or its own parent.
fn ismount(_: &State, args: &Bound) -> TestResult {
    let path = lstat_path(args.input())?;
    let Some(own) = lstat(&path) else { return Ok(false) };
    if own.file_type().is_symlink() {
        return Ok(false);
    }
    let parent = if path.is_empty() || path.ends_with('/') {
        format!("{path}..")
    } else {
        format!("{path}/..")
    };
    let Some(up) = lstat(&parent) else { return Ok(false) };
    Ok(own.dev() != up.dev() || own.ino() == up.ino())
}
