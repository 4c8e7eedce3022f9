//! Python's `os.path` rules that ansible applies to the paths it is given (`abspath`,
//! `normpath`, `realpath`, `expanduser`, `expandvars`), so tack resolves a password file or a
//! vault file to the same path ansible names in its messages.
//!
//! Written by hand because `std::fs::canonicalize` fails on missing files and resolves every
//! symlink, while Python's functions are lexical or lenient; no crate reproduces them exactly.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// `os.path.normpath`: removes `.`, empty components and `..` after a real component,
/// lexically.
pub fn normpath(path: &Path) -> PathBuf {
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return PathBuf::from(".");
    }
    let absolute = bytes.starts_with(b"/");
    // POSIX keeps exactly two leading slashes; Python does too.
    let double = bytes.starts_with(b"//") && !bytes.starts_with(b"///");
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in bytes.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                if parts.last().is_some_and(|p| *p != b"..") {
                    parts.pop();
                } else if !absolute {
                    parts.push(part);
                }
            }
            _ => parts.push(part),
        }
    }
    let mut out = Vec::with_capacity(bytes.len());
    if absolute {
        out.extend_from_slice(if double { b"//" } else { b"/" });
    }
    out.extend_from_slice(&parts.join(&b'/'));
    if out.is_empty() {
        out.push(b'.');
    }
    PathBuf::from(OsString::from_vec(out))
}

/// `os.path.abspath`: joined to the working directory, then normalised.
pub fn abspath(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return normpath(path);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    normpath(&cwd.join(path))
}

/// `os.path.realpath` (non-strict): symlinks resolved as far as the path exists, the rest kept
/// lexically.
pub fn realpath(path: &Path) -> PathBuf {
    let abs = abspath(path);
    if let Ok(real) = std::fs::canonicalize(&abs) {
        return real;
    }
    // Resolve the longest existing prefix and keep the rest as written.
    let mut prefix = abs.clone();
    let mut rest = Vec::new();
    while let Some(name) = prefix.file_name().map(|n| n.to_owned()) {
        rest.push(name);
        prefix.pop();
        if let Ok(real) = std::fs::canonicalize(&prefix) {
            let mut out = real;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return out;
        }
    }
    abs
}

/// `os.path.expanduser`: a leading `~` or `~/` becomes `$HOME`.
fn expanduser(path: &[u8]) -> Vec<u8> {
    let tilde = path == b"~" || path.starts_with(b"~/");
    let Some(home) = std::env::var_os("HOME").filter(|_| tilde) else {
        return path.to_vec();
    };
    let mut out = home.as_bytes().to_vec();
    if out.ends_with(b"/") && path.len() > 1 {
        out.pop();
    }
    out.extend_from_slice(&path[1..]);
    out
}

/// `os.path.expandvars`: `$NAME` and `${NAME}` replaced when set, left as written when not.
fn expandvars(path: &[u8]) -> Vec<u8> {
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::with_capacity(path.len());
    let mut i = 0;
    while i < path.len() {
        if path[i] != b'$' {
            out.push(path[i]);
            i += 1;
            continue;
        }
        let (name, end) = if path.get(i + 1) == Some(&b'{') {
            match path[i + 2..].iter().position(|&b| b == b'}') {
                Some(close) => (&path[i + 2..i + 2 + close], i + 3 + close),
                None => (&path[i..i], i),
            }
        } else {
            let len = path[i + 1..].iter().take_while(|&&b| is_name(b)).count();
            (&path[i + 1..i + 1 + len], i + 1 + len)
        };
        let value = (!name.is_empty())
            .then(|| std::env::var_os(std::ffi::OsStr::from_bytes(name)))
            .flatten();
        match value {
            Some(value) => {
                out.extend_from_slice(value.as_bytes());
                i = end;
            }
            None => {
                out.push(b'$');
                i += 1;
            }
        }
    }
    out
}

/// ansible's `unfrackpath`: variables and `~` expanded, made absolute against the working
/// directory, symlinks resolved when `follow`, normalised.
pub fn unfrack(path: &Path, follow: bool) -> PathBuf {
    let expanded = expanduser(&expandvars(path.as_os_str().as_bytes()));
    let expanded = PathBuf::from(OsString::from_vec(expanded));
    if follow { normpath(&realpath(&expanded)) } else { abspath(&expanded) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normpath_matches_python() {
        let n = |p: &str| normpath(Path::new(p)).display().to_string();
        assert_eq!(n("/a/./b/../c/"), "/a/c");
        assert_eq!(n("a/../../b"), "../b");
        assert_eq!(n("/../x"), "/x");
        assert_eq!(n("//x//y"), "//x/y");
        assert_eq!(n("///x"), "/x");
        assert_eq!(n(""), ".");
        assert_eq!(n("a/.."), ".");
    }

    #[test]
    fn expandvars_leaves_unknown_names() {
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(expandvars(b"$HOME/x"), format!("{home}/x").into_bytes());
        assert_eq!(expandvars(b"${HOME}x"), format!("{home}x").into_bytes());
        assert_eq!(expandvars(b"$TACK_SURELY_UNSET_9/x"), b"$TACK_SURELY_UNSET_9/x");
        assert_eq!(expandvars(b"a$"), b"a$");
        assert_eq!(expandvars(b"${x"), b"${x");
    }
}
