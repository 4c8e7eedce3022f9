//! Path filters (`os.path` and `ntpath` through ansible's `core.py`): `basename`, `dirname`,
//! `expanduser`, `expandvars`, `realpath`, `relpath`, `splitext`, `path_join`, `normpath`,
//! `commonpath`, `win_basename`, `win_dirname`, `win_splitdrive`, `fileglob`.
//!
//! These are string operations with POSIX rules, except `realpath`, `relpath` (which read the
//! working directory and, for `realpath`, symbolic links) and `fileglob` (which lists
//! directories in the order the filesystem returns them, as Python's `glob` does). None writes.

use std::path::Path;

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::pyval::{self, class_repr, is_sequence, list_of, str_of, type_name};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("basename", Sig::new("basename", &["p"], 1), basename),
    Entry::new("dirname", Sig::new("dirname", &["p"], 1), dirname),
    Entry::new("expanduser", Sig::new("expanduser", &["path"], 1), expanduser),
    Entry::new("expandvars", Sig::new("expandvars", &["path"], 1), expandvars),
    Entry::new("realpath", Sig::new("realpath", &["filename", "strict"], 1), realpath),
    Entry::new("relpath", Sig::new("relpath", &["path", "start"], 1), relpath),
    Entry::new("splitext", Sig::new("splitext", &["p"], 1), splitext),
    Entry::new("path_join", Sig::new("path_join", &["paths"], 1), path_join),
    Entry::new("normpath", Sig::new("normpath", &["path"], 1), normpath),
    Entry::new("commonpath", Sig::new("commonpath", &["paths"], 1), commonpath),
    Entry::new("win_basename", Sig::new("basename", &["p"], 1), win_basename),
    Entry::new("win_dirname", Sig::new("dirname", &["p"], 1), win_dirname),
    Entry::new("win_splitdrive", Sig::new("splitdrive", &["p"], 1), win_splitdrive),
    Entry::new("fileglob", Sig::new("fileglob", &["pathname"], 1), fileglob),
];

/// The path argument, or Python's `TypeError` for a value that is not one.
fn path_arg(value: &Value) -> Result<String, FilterError> {
    value.as_str().map(str::to_string).ok_or_else(|| {
        FilterError::failed(format!(
            "expected str, bytes or os.PathLike object, not {}",
            type_name(value)
        ))
    })
}

// Every `os.path` rule is tack_py::path's; a filter only converts its argument and result.
fn text(path: impl AsRef<std::ffi::OsStr>) -> String {
    path.as_ref().to_string_lossy().into_owned()
}

fn basename_of(p: &str) -> String {
    text(tack_py::path::basename(Path::new(p)))
}

fn dirname_of(p: &str) -> String {
    text(tack_py::path::dirname(Path::new(p)))
}

fn expanduser_str(path: &str) -> String {
    text(tack_py::path::expanduser(Path::new(path), &tack_py::path::ProcessEnv))
}

fn normpath_str(path: &str) -> String {
    text(tack_py::path::normpath(Path::new(path)))
}

fn basename(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(basename_of(&path_arg(args.input())?)))
}

fn dirname(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(dirname_of(&path_arg(args.input())?)))
}

fn expanduser(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(expanduser_str(&path_arg(args.input())?)))
}

fn expandvars(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let path = path_arg(args.input())?;
    Ok(Value::from(text(tack_py::path::expandvars(Path::new(&path), &tack_py::path::ProcessEnv))))
}

fn cwd() -> Result<String, FilterError> {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| FilterError::failed(e.to_string()))
}

fn abspath(path: &str) -> Result<String, FilterError> {
    if path.starts_with('/') {
        return Ok(normpath_str(path));
    }
    Ok(normpath_str(&format!("{}/{path}", cwd()?)))
}

/// `os.path.realpath` (non-strict): symbolic links resolved as far as the path exists.
fn realpath_str(path: &str) -> Result<String, FilterError> {
    let start = if path.starts_with('/') { path.to_string() } else { format!("{}/{path}", cwd()?) };
    let mut resolved = String::new();
    let mut pending: Vec<String> = start.split('/').rev().map(str::to_string).collect();
    let mut hops = 0;
    while let Some(comp) = pending.pop() {
        if comp.is_empty() || comp == "." {
            continue;
        }
        if comp == ".." {
            if let Some(i) = resolved.rfind('/') {
                resolved.truncate(i);
            }
            continue;
        }
        let candidate = format!("{resolved}/{comp}");
        match std::fs::read_link(&candidate) {
            Ok(target) if hops < 40 => {
                hops += 1;
                let target = target.to_string_lossy().into_owned();
                if target.starts_with('/') {
                    resolved.clear();
                }
                pending.extend(target.split('/').rev().map(str::to_string));
            }
            _ => resolved = candidate,
        }
    }
    Ok(if resolved.is_empty() { "/".into() } else { resolved })
}

fn realpath(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let path = path_arg(args.input())?;
    if args.get(1).is_some_and(pyval::truthy) {
        let real = std::fs::canonicalize(Path::new(&path)).map_err(|e| {
            FilterError::failed(format!(
                "[Errno {}] {}: '{path}'",
                e.raw_os_error().unwrap_or(0),
                tack_py::oserror::strerror(&e)
            ))
        })?;
        return Ok(Value::from(real.to_string_lossy().into_owned()));
    }
    realpath_str(&path).map(Value::from)
}

fn relpath(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let path = path_arg(args.input())?;
    if path.is_empty() {
        return Err(FilterError::failed("no path specified"));
    }
    let start = match args.opt(1) {
        None => ".".to_string(),
        Some(s) => path_arg(s)?,
    };
    let start_abs = abspath(&start)?;
    let path_abs = abspath(&path)?;
    let start_list: Vec<&str> = start_abs.split('/').filter(|s| !s.is_empty()).collect();
    let path_list: Vec<&str> = path_abs.split('/').filter(|s| !s.is_empty()).collect();
    let common = start_list.iter().zip(&path_list).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; start_list.len() - common];
    parts.extend(&path_list[common..]);
    Ok(Value::from(if parts.is_empty() { ".".to_string() } else { parts.join("/") }))
}

/// `os.path.splitext` over the part after the last separator.
fn splitext_with(p: &str, seps: &[char]) -> (String, String) {
    let sep_index = p.rfind(seps).map(|i| i as isize).unwrap_or(-1);
    let Some(dot) = p.rfind('.') else { return (p.to_string(), String::new()) };
    if (dot as isize) > sep_index {
        let name_start = (sep_index + 1) as usize;
        if p[name_start..dot].chars().any(|c| c != '.') {
            return (p[..dot].to_string(), p[dot..].to_string());
        }
    }
    (p.to_string(), String::new())
}

fn splitext(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (root, ext) = splitext_with(&path_arg(args.input())?, &['/']);
    Ok(Value::from(vec![Value::from(root), Value::from(ext)]))
}

fn join_paths(parts: &[Value]) -> Result<String, FilterError> {
    let Some((first, rest)) = parts.split_first() else {
        return Err(FilterError::failed("join() missing 1 required positional argument: 'a'"));
    };
    let check = |v: &Value| -> Result<String, FilterError> {
        v.as_str().map(str::to_string).ok_or_else(|| {
            FilterError::failed(format!(
                "join() argument must be str, bytes, or os.PathLike object, not '{}'",
                type_name(v)
            ))
        })
    };
    let mut path = check(first)?;
    for part in rest {
        let b = check(part)?;
        if b.starts_with('/') {
            path = b;
        } else if path.is_empty() || path.ends_with('/') {
            path.push_str(&b);
        } else {
            path.push('/');
            path.push_str(&b);
        }
    }
    Ok(path)
}

fn path_join(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let paths = args.input();
    if let Some(s) = paths.as_str() {
        return Ok(Value::from(s));
    }
    if is_sequence(paths) {
        return join_paths(&list_of(paths).unwrap_or_default()).map(Value::from);
    }
    Err(FilterError::failed(format!(
        "|path_join expects string or sequence, got {} instead.",
        class_repr(paths)
    )))
}

fn normpath(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(normpath_str(&path_arg(args.input())?)))
}

fn commonpath(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let paths = args.input();
    if !is_sequence(paths) {
        return Err(FilterError::failed(format!(
            "|commonpath expects sequence, got {} instead.",
            class_repr(paths)
        )));
    }
    let items = list_of(paths).unwrap_or_default();
    if items.is_empty() {
        return Err(FilterError::failed("commonpath() arg is an empty sequence"));
    }
    let mut texts = Vec::new();
    for item in &items {
        texts.push(item.as_str().map(str::to_string).ok_or_else(|| {
            FilterError::failed(format!(
                "expected str, bytes or os.PathLike object, not {}",
                type_name(item)
            ))
        })?);
    }
    let absolute = texts[0].starts_with('/');
    if texts.iter().any(|t| t.starts_with('/') != absolute) {
        return Err(FilterError::failed("Can't mix absolute and relative paths"));
    }
    let split: Vec<Vec<&str>> = texts
        .iter()
        .map(|t| t.split('/').filter(|c| !c.is_empty() && *c != ".").collect())
        .collect();
    let (min, max) = (split.iter().min(), split.iter().max());
    let (Some(min), Some(max)) = (min, max) else { return Ok(Value::from("")) };
    let common = min.iter().zip(max).take_while(|(a, b)| a == b).count();
    let prefix = if absolute { "/" } else { "" };
    Ok(Value::from(format!("{prefix}{}", min[..common].join("/"))))
}

/// `ntpath.splitdrive`.
fn nt_splitdrive(p: &str) -> (String, String) {
    let norm: String = p.replace('/', "\\");
    if norm.starts_with("\\\\") && !norm.starts_with("\\\\\\") {
        // UNC: \\server\share
        let index = norm[2..].find('\\').map(|i| i + 2);
        let drive_end = match index {
            None => p.len(),
            Some(i) => norm[i + 1..].find('\\').map(|j| j + i + 1).unwrap_or(p.len()),
        };
        return (p[..drive_end].to_string(), p[drive_end..].to_string());
    }
    let bytes = p.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && p.is_char_boundary(2) {
        return (p[..2].to_string(), p[2..].to_string());
    }
    (String::new(), p.to_string())
}

fn win_basename(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (_, rest) = nt_splitdrive(&path_arg(args.input())?);
    Ok(Value::from(rest.rsplit(['/', '\\']).next().unwrap_or("").to_string()))
}

fn win_dirname(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (drive, rest) = nt_splitdrive(&path_arg(args.input())?);
    let i = rest.rfind(['/', '\\']).map(|i| i + 1).unwrap_or(0);
    let head = &rest[..i];
    let trimmed = head.trim_end_matches(['/', '\\']);
    let head = if trimmed.is_empty() { head } else { trimmed };
    Ok(Value::from(format!("{drive}{head}")))
}

fn win_splitdrive(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let (drive, rest) = nt_splitdrive(&path_arg(args.input())?);
    Ok(Value::from(vec![Value::from(drive), Value::from(rest)]))
}

fn has_magic(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

fn lexists(path: &str) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Python's `glob.glob` (not recursive): names in directory order, hidden names only for
/// patterns that start with a dot.
fn glob(pathname: &str) -> Vec<String> {
    let split = pathname.rfind('/').map(|i| i + 1).unwrap_or(0);
    let (dir_with_sep, base) = pathname.split_at(split);
    let dirname = {
        let trimmed = dir_with_sep.trim_end_matches('/');
        if trimmed.is_empty() { dir_with_sep.to_string() } else { trimmed.to_string() }
    };
    if !has_magic(pathname) {
        let exists = if base.is_empty() { Path::new(&dirname).is_dir() } else { lexists(pathname) };
        return if exists { vec![pathname.to_string()] } else { Vec::new() };
    }
    let dirs: Vec<String> = if dirname.is_empty() {
        vec![String::new()]
    } else if dirname != pathname && has_magic(&dirname) {
        glob(&dirname)
    } else {
        vec![dirname.clone()]
    };
    let mut out = Vec::new();
    for dir in dirs {
        let names: Vec<String> = if has_magic(base) {
            glob_in_dir(&dir, base)
        } else if base.is_empty() {
            if Path::new(&dir).is_dir() { vec![String::new()] } else { Vec::new() }
        } else if lexists(&join2(&dir, base)) {
            vec![base.to_string()]
        } else {
            Vec::new()
        };
        for name in names {
            out.push(if dir.is_empty() { name } else { join2(&dir, &name) });
        }
    }
    out
}

fn join2(a: &str, b: &str) -> String {
    if a.is_empty() || a.ends_with('/') { format!("{a}{b}") } else { format!("{a}/{b}") }
}

fn glob_in_dir(dir: &str, pattern: &str) -> Vec<String> {
    let Ok(matcher) = glob::Pattern::new(pattern) else { return Vec::new() };
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: false,
        require_literal_leading_dot: false,
    };
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|name| pattern.starts_with('.') || !name.starts_with('.'))
        .filter(|name| matcher.matches_with(name, options))
        .collect()
}

fn fileglob(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let pathname = args.input();
    if pathname.kind() != ValueKind::String {
        return Err(FilterError::failed(format!(
            "expected str, bytes or os.PathLike object, not {}",
            type_name(pathname)
        )));
    }
    let found = glob(&str_of(pathname));
    let files = found.into_iter().filter(|p| Path::new(p).is_file()).map(Value::from);
    Ok(Value::from(files.collect::<Vec<_>>()))
}
