//! Python's `os.path` helpers the modules rely on (`realpath`, `join`, `dirname`,
//! `basename`, `abspath`), with Python's results for missing components. Read-only.

use std::path::Path;

/// `os.path.realpath` (non-strict): symlinks resolved as far as they exist.
pub(super) fn realpath(path: &str) -> String {
    let abs = abspath(path);
    let mut resolved = String::from("/");
    let mut pending: Vec<String> =
        abs.split('/').filter(|s| !s.is_empty()).rev().map(str::to_string).collect();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        if part == "." {
            continue;
        }
        if part == ".." {
            resolved = dirname(&resolved);
            continue;
        }
        let candidate = join(&resolved, &part);
        match std::fs::read_link(&candidate) {
            Ok(target) if hops < 40 => {
                hops += 1;
                let target = target.to_string_lossy().into_owned();
                if target.starts_with('/') {
                    resolved = "/".into();
                }
                pending
                    .extend(target.split('/').filter(|s| !s.is_empty()).rev().map(str::to_string));
            }
            _ => resolved = candidate,
        }
    }
    resolved
}

/// `os.path.abspath`.
pub(super) fn abspath(path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        let cwd = std::env::current_dir()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/".into());
        join(&cwd, path)
    };
    normpath(&joined)
}

/// `os.path.normpath` for absolute paths.
pub(super) fn normpath(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `os.path.join(a, b)`.
pub(super) fn join(a: &str, b: &str) -> String {
    if b.starts_with('/') || a.is_empty() {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

/// `os.path.dirname`.
pub(super) fn dirname(path: &str) -> String {
    match path.rfind('/') {
        Some(i) => {
            let head = &path[..=i];
            let trimmed = head.trim_end_matches('/');
            if trimmed.is_empty() { head.to_string() } else { trimmed.to_string() }
        }
        None => String::new(),
    }
}

/// `os.path.basename`.
pub(super) fn basename(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// `os.path.exists` (follows symlinks).
pub(super) fn exists(path: &str) -> bool {
    Path::new(path).exists()
}

/// `os.path.islink`.
pub(super) fn islink(path: &str) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// `os.path.isdir` (follows symlinks).
pub(super) fn isdir(path: &str) -> bool {
    Path::new(path).is_dir()
}
