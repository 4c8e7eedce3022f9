//! ansible's path rules for files named in playbooks: `unfrackpath` (absolute, `~` and `$VAR`
//! expanded, normalised), `path_dwim` (relative to a base directory) and the search orders of
//! `path_dwim_relative` / `path_dwim_relative_stack`, which decide where `import_tasks: x.yml`
//! or `vars_files: v.yml` is found inside roles and playbooks.

use std::path::{Component, Path, PathBuf};

/// Lexically normalises `path` (`.` and `..` resolved without touching the filesystem), as
/// Python's `os.path.normpath`.
pub fn normpath(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

/// `~` expansion against `$HOME`.
pub fn expanduser(s: &str) -> String {
    if (s == "~" || s.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        return format!("{}{}", home.to_string_lossy(), &s[1..]);
    }
    s.to_string()
}

/// `$VAR` and `${VAR}` expansion (unknown variables left as written), as `os.path.expandvars`.
pub fn expandvars(s: &str) -> String {
    if !s.contains('$') {
        return s.to_string();
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        match (name.is_empty(), std::env::var(name)) {
            (false, Ok(value)) => out.push_str(&value),
            _ => out.push_str(&rest[pos..pos + 1 + consumed]),
        }
        rest = &rest[pos + 1 + consumed..];
    }
    out.push_str(rest);
    out
}

/// `unfrackpath(path, follow)`: absolute (relative to `basedir`, or the working directory),
/// `~`/`$VAR` expanded, normalised, symlinks resolved when `follow`.
pub fn unfrackpath(path: &str, follow: bool, basedir: Option<&Path>) -> PathBuf {
    let expanded = expanduser(&expandvars(path));
    let mut p = PathBuf::from(expanded);
    if !p.is_absolute() {
        let base = match basedir {
            Some(b) => b.to_path_buf(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        };
        p = base.join(p);
    }
    if follow && let Ok(real) = std::fs::canonicalize(&p) {
        return real;
    }
    normpath(&p)
}

/// Removes one pair of surrounding quotes.
fn unquote(s: &str) -> &str {
    tack_py::ansible::unquote(s)
}

/// `path_dwim(given)` relative to `basedir`.
pub fn path_dwim(basedir: &Path, given: &str) -> PathBuf {
    let given = unquote(given);
    if given.starts_with('/') || given.starts_with('~') {
        unfrackpath(given, false, None)
    } else {
        unfrackpath(&basedir.join(given).to_string_lossy(), false, None)
    }
}

fn ends_with_tasks_dir(path: &Path) -> bool {
    let s = path.to_string_lossy();
    let s = s.trim_end_matches('/');
    s == "tasks" || s.ends_with("/tasks")
}

/// ansible's `_is_role`: an imperfect check that `path` is (inside) a role.
pub fn is_role(path: &Path) -> bool {
    let upath = unfrackpath(&path.to_string_lossy(), false, None);
    let parent = path.parent().unwrap_or(Path::new(""));
    let mains = ["main.yml", "main.yaml", "main"];
    let untasked = mains.iter().any(|m| path.join(m).exists());
    let tasked = ["tasks", "meta"].iter().any(|d| {
        mains.iter().any(|m| upath.join(d).join(m).exists() || parent.join(d).join(m).exists())
    });
    (ends_with_tasks_dir(path) && untasked) || tasked
}

/// `path_dwim_relative(path, dirname, source)`: the first existing candidate, or the last
/// candidate when none exists.
pub fn path_dwim_relative(
    loader_basedir: &Path,
    path: &Path,
    dirname: &str,
    source: &str,
    mut role: bool,
) -> PathBuf {
    let mut search = Vec::new();
    if source.starts_with('/') || source.starts_with('~') {
        search.push(unfrackpath(source, false, None));
    } else {
        search.push(path.join(dirname).join(source));
        let mut basedir = unfrackpath(&path.to_string_lossy(), false, None);
        if !role {
            role = is_role(path);
        }
        if role && ends_with_tasks_dir(path) {
            basedir = unfrackpath(
                &path.parent().unwrap_or(Path::new("/")).to_string_lossy(),
                false,
                None,
            );
        }
        search.push(unfrackpath(
            &basedir.join(dirname).join(source).to_string_lossy(),
            false,
            None,
        ));
        if role && !source.ends_with(dirname) {
            search.push(unfrackpath(
                &basedir.join("tasks").join(source).to_string_lossy(),
                false,
                None,
            ));
        }
        search.push(unfrackpath(&Path::new(dirname).join(source).to_string_lossy(), false, None));
        search.push(unfrackpath(&basedir.join(source).to_string_lossy(), false, None));
        search.push(path_dwim(loader_basedir, &Path::new(dirname).join(source).to_string_lossy()));
        search.push(path_dwim(loader_basedir, source));
    }
    let last = search.last().cloned().unwrap_or_default();
    search.into_iter().find(|c| c.exists()).unwrap_or(last)
}

/// `path_dwim_relative_stack(paths, dirname, source)`: the first existing candidate over a
/// search stack, the loader's base directory last; `Err` lists every place looked.
pub fn path_dwim_relative_stack(
    loader_basedir: &Path,
    paths: &[PathBuf],
    dirname: Option<&str>,
    source: &str,
) -> Result<PathBuf, Vec<PathBuf>> {
    let source_root = source.split('/').next().unwrap_or("");
    let mut search = Vec::new();
    if source.starts_with('~') || source.starts_with('/') {
        let p = unfrackpath(source, false, None);
        if p.exists() {
            return Ok(p);
        }
        return Err(vec![]);
    }
    for path in paths {
        let upath = unfrackpath(&path.to_string_lossy(), false, None);
        let pb_base = upath.parent().unwrap_or(Path::new("/")).to_path_buf();
        if is_role(path) && pb_base.to_string_lossy().ends_with("/tasks") {
            if let Some(d) = dirname {
                search.push(pb_base.parent().unwrap_or(Path::new("/")).join(d).join(source));
            }
            search.push(pb_base.join(source));
        }
        if let Some(d) = dirname.filter(|d| *d != source_root) {
            search.push(upath.join(d).join(source));
        }
        search.push(upath.join(source));
    }
    if let Some(d) = dirname.filter(|d| *d != source_root) {
        search.push(loader_basedir.join(d).join(source));
    }
    search.push(loader_basedir.join(source));
    match search.iter().find(|c| c.exists()) {
        Some(found) => Ok(found.clone()),
        None => Err(search),
    }
}

/// `os.path.dirname` of a path string.
pub fn dirname(path: &str) -> PathBuf {
    Path::new(path).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// ansible's `find_vars_files(path, name, extensions, allow_dir)`: `name` with the first
/// extension that exists; a directory of that name yields its files (recursively, sorted,
/// hidden and `~` backups skipped) when `allow_dir`.
pub fn find_vars_files(
    path: &Path,
    name: &str,
    extensions: &[&str],
    allow_dir: bool,
) -> Vec<PathBuf> {
    let jpath = path.join(name);
    for ext in extensions {
        let full = if ext.contains('.') {
            PathBuf::from(format!("{}{ext}", jpath.display()))
        } else if !ext.is_empty() {
            PathBuf::from(format!("{}.{ext}", jpath.display()))
        } else {
            jpath.clone()
        };
        if !full.exists() {
            continue;
        }
        if full.is_dir() {
            if allow_dir {
                return dir_vars_files(&full, extensions);
            }
            continue;
        }
        return vec![full];
    }
    Vec::new()
}

fn dir_vars_files(path: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(path) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let full = path.join(&name);
        let ext = Path::new(&name)
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        if full.is_dir() && ext.is_empty() {
            found.extend(dir_vars_files(&full, extensions));
        } else if full.is_file() && (ext.is_empty() || extensions.contains(&ext.as_str())) {
            found.push(full);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normpath_resolves_dots() {
        assert_eq!(normpath(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(normpath(Path::new("a/../..")), PathBuf::from(".."));
    }

    #[test]
    fn expandvars_keeps_unknown() {
        // SAFETY-free: uses a variable the test sets only in this process.
        assert_eq!(expandvars("$TACK_SURELY_UNSET_X/y"), "$TACK_SURELY_UNSET_X/y");
    }
}
