//! Path spelling as ansible resolves it: `~` and `$VAR` expansion, lexical normalisation
//! (Python's `os.path.normpath`), and relative paths taken from a base directory
//! (`unfrackpath`, `path_dwim`, `basedir`).
//!
//! These never touch file contents; `realpath` is the only function that asks the file system
//! to resolve anything.

use std::env;
use std::path::{Path, PathBuf};

/// `os.path.normpath` on POSIX: collapses repeated separators, `.` and `..` lexically (symlinks
/// are not consulted), keeping exactly two leading slashes as POSIX allows.
pub fn normpath(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let initial = if path.starts_with("//") && !path.starts_with("///") {
        "//"
    } else if path.starts_with('/') {
        "/"
    } else {
        ""
    };
    let mut parts: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        match comp {
            "" | "." => {}
            ".." if initial.is_empty() && parts.last().is_none_or(|p| *p == "..") => {
                parts.push("..")
            }
            ".." => {
                parts.pop();
            }
            comp => parts.push(comp),
        }
    }
    let joined = format!("{initial}{}", parts.join("/"));
    if joined.is_empty() { ".".into() } else { joined }
}

/// `os.path.expandvars`: `$NAME` and `${NAME}` replaced when the variable is set, left as
/// written otherwise.
pub fn expandvars(path: &str) -> String {
    if !path.contains('$') {
        return path.to_string();
    }
    let mut out = String::new();
    let mut rest = path;
    while let Some(idx) = rest.find('$') {
        out.push_str(&rest[..idx]);
        let after = &rest[idx + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end =
                after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], end)
        };
        match env::var(name) {
            Ok(value) if !name.is_empty() => {
                out.push_str(&value);
                rest = &after[consumed..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `os.path.expanduser`: a leading `~` becomes `$HOME`, `~user` that user's home directory (from
/// the password database); anything else, or an unknown user, is left as written.
pub fn expanduser(path: &str) -> String {
    let Some(rest) = path.strip_prefix('~') else { return path.to_string() };
    let (user, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let home = if user.is_empty() {
        env::var("HOME").ok().or_else(|| home_of_uid_from_passwd(current_uid()))
    } else {
        home_of_user_from_passwd(user)
    };
    match home {
        Some(home) => {
            let home = home.trim_end_matches('/');
            let home = if home.is_empty() { "/" } else { home };
            if tail.is_empty() {
                home.to_string()
            } else if home == "/" {
                tail.to_string()
            } else {
                format!("{home}{tail}")
            }
        }
        None => path.to_string(),
    }
}

fn current_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

fn passwd_entries() -> Vec<Vec<String>> {
    std::fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(':').map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f.len() >= 6)
        .collect()
}

fn home_of_user_from_passwd(user: &str) -> Option<String> {
    passwd_entries().into_iter().find(|f| f[0] == user).map(|f| f[5].clone())
}

fn home_of_uid_from_passwd(uid: Option<u32>) -> Option<String> {
    let uid = uid?.to_string();
    passwd_entries().into_iter().find(|f| f[2] == uid).map(|f| f[5].clone())
}

/// The current directory as Python's `os.getcwd()` reports it (`$PWD` is not consulted).
pub fn cwd() -> PathBuf {
    env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

/// ansible's `unfrackpath`: expands `$VAR` and `~`, makes the path absolute against `basedir`
/// (the current directory when `None`; a file's directory when it names a file), resolves
/// symlinks when `follow`, and normalises.
pub fn unfrackpath(path: &str, basedir: Option<&Path>, follow: bool) -> PathBuf {
    let base = match basedir {
        None => cwd(),
        Some(b) if b.is_file() => b.parent().map(Path::to_path_buf).unwrap_or_default(),
        Some(b) => b.to_path_buf(),
    };
    let expanded = expanduser(&expandvars(path));
    let joined = if expanded.starts_with('/') {
        expanded
    } else {
        format!("{}/{}", base.display(), expanded)
    };
    let joined = if follow { realpath(Path::new(&joined)) } else { PathBuf::from(joined) };
    PathBuf::from(normpath(&joined.to_string_lossy()))
}

/// `os.path.realpath`: symlinks resolved as far as the path exists, the rest kept lexically.
pub fn realpath(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => realpath(parent).join(name),
        _ => PathBuf::from(normpath(&path.to_string_lossy())),
    }
}

/// ansible's `unquote`: drops one pair of matching surrounding quotes.
pub fn unquote(data: &str) -> &str {
    let b = data.as_bytes();
    let quoted = b.len() > 1
        && b[0] == b[b.len() - 1]
        && (b[0] == b'"' || b[0] == b'\'')
        && b[b.len() - 2] != b'\\';
    if quoted { &data[1..data.len() - 1] } else { data }
}

/// `DataLoader.path_dwim`: a path as the user meant it, relative paths taken from `basedir`.
pub fn path_dwim(basedir: &Path, given: &str) -> PathBuf {
    let given = unquote(given);
    let path = if given.starts_with('/') || given.starts_with('~') {
        given.to_string()
    } else {
        format!("{}/{}", basedir.display(), given)
    };
    unfrackpath(&path, None, false)
}

/// ansible's `basedir(source)`: the directory an inventory or playbook path stands for (the
/// path itself when it is a directory, its parent when it is a file, the current directory for
/// an empty source), made absolute without resolving symlinks; `None` when the path does not
/// exist.
pub fn basedir(source: &str) -> Option<PathBuf> {
    let path = Path::new(source);
    let dir = if path.is_dir() {
        path.to_path_buf()
    } else if source.is_empty() || source == "." {
        cwd()
    } else if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        return None;
    };
    Some(abspath(&dir))
}

/// `os.path.abspath`: joined to the current directory and normalised, symlinks untouched.
pub fn abspath(path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    if text.starts_with('/') {
        PathBuf::from(normpath(&text))
    } else {
        PathBuf::from(normpath(&format!("{}/{}", cwd().display(), text)))
    }
}

/// `os.path.dirname`: everything before the last `/`, trailing slashes of that part removed
/// unless it is all slashes.
pub fn dirname(path: &str) -> &str {
    match path.rfind('/') {
        None => "",
        Some(idx) => {
            let head = &path[..=idx];
            let trimmed = head.trim_end_matches('/');
            if trimmed.is_empty() { head } else { trimmed }
        }
    }
}

/// `os.path.splitext(path)[1]`: the last `.suffix` of the file name, unless the name only
/// starts with dots.
pub fn extension(path: &str) -> &str {
    let name = &path[path.rfind('/').map_or(0, |i| i + 1)..];
    let leading = name.len() - name.trim_start_matches('.').len();
    match name.rfind('.') {
        Some(idx) if idx >= leading && idx > 0 => &name[idx..],
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normpath_like_python() {
        assert_eq!(normpath("/a//b/./c/../d/"), "/a/b/d");
        assert_eq!(normpath("a/../../b"), "../b");
        assert_eq!(normpath("/../x"), "/x");
        assert_eq!(normpath("//x"), "//x");
        assert_eq!(normpath("///x"), "/x");
        assert_eq!(normpath(""), ".");
        assert_eq!(normpath("./"), ".");
    }

    #[test]
    fn splitext_and_dirname_like_python() {
        assert_eq!(extension("/a/b.yml"), ".yml");
        assert_eq!(extension("/a.d/b"), "");
        assert_eq!(extension(".hidden"), "");
        assert_eq!(extension("..x.json"), ".json");
        assert_eq!(extension("x."), ".");
        assert_eq!(dirname("hosts"), "");
        assert_eq!(dirname("inv/hosts"), "inv");
        assert_eq!(dirname("/hosts"), "/");
        assert_eq!(dirname("a//b"), "a");
    }

    #[test]
    fn unquote_pairs_only() {
        assert_eq!(unquote("'a b'"), "a b");
        assert_eq!(unquote("\"a\""), "a");
        assert_eq!(unquote("'a\""), "'a\"");
        assert_eq!(unquote("'a\\'"), "'a\\'");
        assert_eq!(unquote("'"), "'");
    }

    #[test]
    fn relative_paths_join_the_base() {
        assert_eq!(path_dwim(Path::new("/base/dir"), "../x/y.yml"), PathBuf::from("/base/x/y.yml"));
        assert_eq!(path_dwim(Path::new("/base"), "/abs"), PathBuf::from("/abs"));
    }
}
