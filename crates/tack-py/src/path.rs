//! Python's `posixpath` (`os.path` on the systems tack runs on): lexical normalisation, `~`
//! and `$VAR` expansion, `realpath`, and the small string functions (`dirname`, `splitext`,
//! `join`).
//!
//! Written by hand because Rust's `Path` methods and `fs::canonicalize` answer differently
//! where users notice: `Path::components` drops the leading `//` POSIX keeps, `canonicalize`
//! fails on a missing file where `realpath` resolves what exists and keeps the rest, and
//! `Path::parent` of `a//b` is `a/` where `dirname` gives `a`.
//!
//! Paths are handled as the bytes the system sees (a [`Path`]), so a name that is not UTF-8
//! resolves as it does in Python. The environment and working directory come from an
//! [`Environ`], so configuration can be resolved against a recorded environment.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Where `expandvars`, `expanduser` and `abspath` read the environment and working directory.
pub trait Environ {
    /// The variable's value; `None` when unset.
    fn var(&self, name: &OsStr) -> Option<OsString>;
    /// `os.getcwd()`.
    fn cwd(&self) -> PathBuf;
}

/// The running process's environment and working directory.
pub struct ProcessEnv;

impl Environ for ProcessEnv {
    fn var(&self, name: &OsStr) -> Option<OsString> {
        // `os.environ` holds no such names; asking the C library for them is not meaningful.
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
            return None;
        }
        std::env::var_os(name)
    }

    fn cwd(&self) -> PathBuf {
        getcwd()
    }
}

/// `os.getcwd()`; `/` when the working directory is gone (Python raises there).
pub fn getcwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

fn bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_bytes()
}

fn from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes))
}

/// `os.path.isabs`.
pub fn isabs(path: &Path) -> bool {
    bytes(path).starts_with(b"/")
}

/// `os.path.join(base, path)` of two parts: `path` when absolute, otherwise joined with one
/// `/` unless `base` is empty or already ends with one.
pub fn join(base: &Path, path: &Path) -> PathBuf {
    let (b, p) = (bytes(base), bytes(path));
    if p.starts_with(b"/") {
        return path.to_path_buf();
    }
    let mut out = b.to_vec();
    if !out.is_empty() && !out.ends_with(b"/") {
        out.push(b'/');
    }
    out.extend_from_slice(p);
    from_bytes(out)
}

/// `os.path.normpath`: `.`, empty parts and `..` after a real part folded without looking at
/// the file system; exactly two leading slashes are kept, as POSIX gives them a meaning.
pub fn normpath(path: &Path) -> PathBuf {
    let b = bytes(path);
    if b.is_empty() {
        return PathBuf::from(".");
    }
    let initial: &[u8] = if b.starts_with(b"//") && !b.starts_with(b"///") {
        b"//"
    } else if b.starts_with(b"/") {
        b"/"
    } else {
        b""
    };
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in b.split(|&c| c == b'/') {
        match part {
            b"" | b"." => {}
            b".."
                if (initial.is_empty() && parts.is_empty())
                    || parts.last() == Some(&&b".."[..]) =>
            {
                parts.push(part)
            }
            b".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let mut out = initial.to_vec();
    out.extend_from_slice(&parts.join(&b'/'));
    if out.is_empty() {
        out.push(b'.');
    }
    from_bytes(out)
}

/// `os.path.abspath` against the process's working directory.
pub fn abspath(path: &Path) -> PathBuf {
    abspath_in(path, &ProcessEnv)
}

/// `os.path.abspath` against `env`'s working directory: joined, then normalised.
pub fn abspath_in(path: &Path, env: &dyn Environ) -> PathBuf {
    if isabs(path) { normpath(path) } else { normpath(&join(&env.cwd(), path)) }
}

/// `os.path.dirname`: everything before the last `/`, with that part's trailing slashes
/// removed unless it is only slashes.
pub fn dirname(path: &Path) -> &Path {
    let b = bytes(path);
    let head = &b[..b.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)];
    let trimmed = if head.iter().all(|&c| c == b'/') {
        head
    } else {
        &head[..head.iter().rposition(|&c| c != b'/').map_or(0, |i| i + 1)]
    };
    Path::new(OsStr::from_bytes(trimmed))
}

/// `os.path.basename`: everything after the last `/`.
pub fn basename(path: &Path) -> &OsStr {
    let b = bytes(path);
    OsStr::from_bytes(&b[b.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..])
}

/// `os.path.splitext(path)`: the root and the last `.suffix` of the final part, unless that
/// part is only leading dots followed by the rest (`.bashrc` has no extension).
pub fn splitext(path: &str) -> (&str, &str) {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    match path[name_start..].rfind('.') {
        Some(dot) if path[name_start..name_start + dot].chars().any(|c| c != '.') => {
            path.split_at(name_start + dot)
        }
        _ => (path, ""),
    }
}

/// `os.path.expandvars`: `$NAME` (ASCII letters, digits, `_`) and `${...}` replaced by the
/// variable's value when it is set; left as written, and not scanned again, when it is not.
pub fn expandvars(path: &Path, env: &dyn Environ) -> PathBuf {
    let b = bytes(path);
    if !b.contains(&b'$') {
        return path.to_path_buf();
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let rest = &b[i + 1..];
        let matched = if rest.first() == Some(&b'{') {
            rest.iter().position(|&c| c == b'}').map(|close| (&rest[1..close], close + 1))
        } else {
            let n = rest.iter().take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_').count();
            (n > 0).then(|| (&rest[..n], n))
        };
        let Some((name, len)) = matched else {
            out.push(b'$');
            i += 1;
            continue;
        };
        match env.var(OsStr::from_bytes(name)) {
            Some(value) => out.extend_from_slice(value.as_bytes()),
            None => out.extend_from_slice(&b[i..=i + len]),
        }
        i += 1 + len;
    }
    from_bytes(out)
}

/// `os.path.expanduser`: a leading `~` becomes `$HOME` (the user database's entry for the
/// current user when unset), `~name` that user's home directory; an unknown user leaves the
/// path as written.
pub fn expanduser(path: &Path, env: &dyn Environ) -> PathBuf {
    let b = bytes(path);
    if !b.starts_with(b"~") {
        return path.to_path_buf();
    }
    let end = b[1..].iter().position(|&c| c == b'/').map_or(b.len(), |i| i + 1);
    let home = if end == 1 {
        env.var(OsStr::new("HOME")).or_else(current_user_home)
    } else {
        user_home(&b[1..end])
    };
    let Some(home) = home else { return path.to_path_buf() };
    let home = home.as_bytes();
    let trimmed = &home[..home.iter().rposition(|&c| c != b'/').map_or(0, |i| i + 1)];
    let mut out = trimmed.to_vec();
    out.extend_from_slice(&b[end..]);
    if out.is_empty() {
        out.push(b'/');
    }
    from_bytes(out)
}

fn current_user_home() -> Option<OsString> {
    let user = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten()?;
    Some(user.dir.into_os_string())
}

/// The home directory of a user named in `~name`. Python looks a name that is not UTF-8 up by
/// its raw bytes; such a name is taken as unknown here.
fn user_home(name: &[u8]) -> Option<OsString> {
    let name = std::str::from_utf8(name).ok()?;
    let user = nix::unistd::User::from_name(name).ok().flatten()?;
    Some(user.dir.into_os_string())
}

/// `os.path.realpath` (not strict): symbolic links resolved one part at a time, from the
/// working directory for a relative path; a part that does not exist (or a link loop) is kept
/// as written and the rest follows it lexically.
pub fn realpath(path: &Path) -> PathBuf {
    let b = bytes(path);
    // Parts still to resolve, last first. `None` marks that the link named just below it has
    // been resolved to the current `resolved`.
    let mut rest: Vec<Option<Vec<u8>>> =
        b.split(|&c| c == b'/').rev().map(|p| Some(p.to_vec())).collect();
    let mut resolved: Vec<u8> =
        if b.starts_with(b"/") { b"/".to_vec() } else { bytes(&getcwd()).to_vec() };
    let mut seen: std::collections::HashMap<Vec<u8>, Option<Vec<u8>>> = Default::default();
    while let Some(part) = rest.pop() {
        let Some(name) = part else {
            if let Some(Some(link)) = rest.pop() {
                seen.insert(link, Some(resolved.clone()));
            }
            continue;
        };
        if name.is_empty() || name == b"." {
            continue;
        }
        if name == b".." {
            let cut = resolved.iter().rposition(|&c| c == b'/').unwrap_or(0);
            resolved.truncate(cut.max(1));
            continue;
        }
        let mut candidate = resolved.clone();
        if candidate != b"/" {
            candidate.push(b'/');
        }
        candidate.extend_from_slice(&name);
        let candidate_path = from_bytes(candidate.clone());
        let is_link = std::fs::symlink_metadata(&candidate_path)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_link {
            resolved = candidate;
            continue;
        }
        if let Some(done) = seen.get(&candidate) {
            // A resolved link is reused; one still being resolved is a loop, kept as written.
            resolved = done.clone().unwrap_or(candidate);
            continue;
        }
        let Ok(target) = std::fs::read_link(&candidate_path) else {
            resolved = candidate;
            continue;
        };
        let target = target.into_os_string().into_vec();
        seen.insert(candidate.clone(), None);
        if target.starts_with(b"/") {
            resolved = b"/".to_vec();
        }
        rest.push(Some(candidate));
        rest.push(None);
        rest.extend(target.split(|&c| c == b'/').rev().map(|p| Some(p.to_vec())));
    }
    from_bytes(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    // Broader cases, recorded from CPython, are in `tests/corpus/path.json`.

    struct Fixed(HashMap<&'static str, &'static str>);

    impl Environ for Fixed {
        fn var(&self, name: &OsStr) -> Option<OsString> {
            self.0.get(name.to_str()?).map(OsString::from)
        }
        fn cwd(&self) -> PathBuf {
            PathBuf::from("/work/dir")
        }
    }

    fn s(p: PathBuf) -> String {
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn lexical_rules() {
        assert_eq!(s(normpath(Path::new("//a//b/./c/../d/"))), "//a/b/d");
        assert_eq!(s(normpath(Path::new("a/../../b"))), "../b");
        assert_eq!(s(normpath(Path::new("///x"))), "/x");
        assert_eq!(dirname(Path::new("a//b")), Path::new("a"));
        assert_eq!(dirname(Path::new("//a")), Path::new("//"));
        assert_eq!(splitext("/a/..x.json"), ("/a/..x", ".json"));
        assert_eq!(splitext("/a.d/.cfg"), ("/a.d/.cfg", ""));
        assert_eq!(s(join(Path::new(""), Path::new("b"))), "b");
        let env = Fixed(HashMap::new());
        assert_eq!(s(abspath_in(Path::new("../x"), &env)), "/work/x");
    }

    #[test]
    fn expansion_uses_the_given_environment() {
        let env = Fixed(HashMap::from([("HOME", "/home/me/"), ("P", "/srv")]));
        let ev = |p: &str| s(expandvars(Path::new(p), &env));
        assert_eq!(ev("$P/x${P}"), "/srv/x/srv");
        assert_eq!(ev("${A$P}"), "${A$P}");
        assert_eq!(ev("$UNSET/$"), "$UNSET/$");
        assert_eq!(s(expanduser(Path::new("~/x"), &env)), "/home/me/x");
        assert_eq!(s(expanduser(Path::new("~no-such-user-here/x"), &env)), "~no-such-user-here/x");
    }
}
