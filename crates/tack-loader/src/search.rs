//! Where ansible looks for a file a play or role names relatively: `DataLoader`'s
//! `path_dwim_relative` (files beside a role or playbook), `path_dwim_relative_stack` (a search
//! stack ending at the playbook's directory), `_is_role`, and `find_vars_files` (`name`,
//! `name.yml`, ... or a directory of vars files).
//!
//! Every function takes the loader's base directory explicitly, so the playbook layer, which
//! keeps one base directory per play, applies the same rules as [`crate::DataLoader`]. Paths
//! are only tested for existence here; nothing is read.
//!
//! `-vvvvv` shows each place `path_dwim_relative_stack` looks (`looking for "x" at "y"`),
//! as a note of the task running on this thread (`crate::notes`).

use std::path::{Path, PathBuf};

use tack_py::ansible::unfrackpath;
use tack_py::path::{dirname, join, splitext};

use crate::paths::path_dwim;

/// `RE_TASKS.search(path)` (`(?:^|/)+tasks/?$`): the path names a `tasks` directory. `$`
/// also matches before a final newline, as in Python.
fn names_tasks_dir(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = path.as_os_str().as_bytes();
    [Some(b), b.strip_suffix(b"\n")].into_iter().flatten().any(|s| {
        let s = s.strip_suffix(b"/").unwrap_or(s);
        s == b"tasks" || s.ends_with(b"/tasks")
    })
}

fn join3(a: &Path, b: &str, c: &str) -> PathBuf {
    join(&join(a, Path::new(b)), Path::new(c))
}

/// `_is_role`: an imperfect test that `path` is a role or a role's `tasks` directory, by the
/// `main` files it or its parent holds.
pub fn is_role(path: &Path) -> bool {
    const MAINS: [&str; 3] = ["main.yml", "main.yaml", "main"];
    let parent = dirname(path);
    let upath = unfrackpath(path, false, None);
    let untasked = MAINS.iter().any(|m| join(path, Path::new(m)).exists());
    let tasked = [upath.as_path(), parent].iter().any(|base| {
        ["tasks", "meta"].iter().any(|d| MAINS.iter().any(|m| join3(base, d, m).exists()))
    });
    (names_tasks_dir(path) && untasked) || tasked
}

/// `path_dwim_relative(path, dirname, source, is_role)`: `source` beside `path` (a role or
/// playbook directory), in its `dirname` subdirectory, in a role's `tasks`, or relative to the
/// loader's `basedir`; the first candidate that exists, else the last one.
pub fn path_dwim_relative(
    basedir: &Path,
    path: &Path,
    dirname_: &str,
    source: &str,
    mut role: bool,
) -> PathBuf {
    if source.starts_with('/') || source.starts_with('~') {
        return unfrackpath(Path::new(source), false, None);
    }
    let mut search = vec![join3(path, dirname_, source)];
    let mut base = unfrackpath(path, false, None);
    if !role {
        role = is_role(path);
    }
    if role && names_tasks_dir(path) {
        base = unfrackpath(dirname(path), false, None);
    }
    search.push(unfrackpath(&join3(&base, dirname_, source), false, None));
    if role && !source.ends_with(dirname_) {
        search.push(unfrackpath(&join3(&base, "tasks", source), false, None));
    }
    let under_dirname = join(Path::new(dirname_), Path::new(source));
    search.push(unfrackpath(&under_dirname, false, None));
    search.push(unfrackpath(&join(&base, Path::new(source)), false, None));
    search.push(path_dwim(basedir, &under_dirname.to_string_lossy()));
    search.push(path_dwim(basedir, source));
    let last = search.len() - 1;
    let found = search.iter().position(|c| c.exists()).unwrap_or(last);
    search.swap_remove(found)
}

/// Tells the task's verbose notes (`crate::notes`) each place of `search` looked at for
/// `source`: all of them, or up to `found`.
fn tell_searched(source: &str, search: &[PathBuf], found: Option<usize>) {
    if !crate::notes::observed() {
        return;
    }
    let looked = found.map_or(search.len(), |i| i + 1);
    for candidate in &search[..looked] {
        crate::notes::note(5, format!("looking for \"{source}\" at \"{}\"", candidate.display()));
    }
}

/// `path_dwim_relative_stack(paths, dirname, source)`: `source` in each path of the stack (and
/// the `tasks` directory of a role among them), then in the loader's `basedir`. `Err` lists
/// every place looked, in order, for the "could not find" message.
pub fn path_dwim_relative_stack(
    basedir: &Path,
    paths: &[PathBuf],
    dirname_: Option<&str>,
    source: &str,
) -> Result<PathBuf, Vec<PathBuf>> {
    if source.starts_with('~') || source.starts_with('/') {
        let found = unfrackpath(Path::new(source), false, None);
        return if found.exists() { Ok(found) } else { Err(Vec::new()) };
    }
    let source_root = source.split('/').next().unwrap_or("");
    // The user already wrote the subdirectory; it is not added again.
    let subdir = dirname_.filter(|d| *d != source_root);
    let mut search = Vec::new();
    for path in paths {
        let upath = unfrackpath(path, false, None);
        let pb_base = dirname(&upath).to_path_buf();
        if is_role(path) && pb_base.to_string_lossy().ends_with("/tasks") {
            if let Some(d) = dirname_ {
                search.push(join3(dirname(&pb_base), d, source));
            }
            search.push(join(&pb_base, Path::new(source)));
        }
        if let Some(d) = subdir {
            search.push(join3(&upath, d, source));
        }
        search.push(join(&upath, Path::new(source)));
    }
    if let Some(d) = subdir {
        search.push(join3(basedir, d, source));
    }
    search.push(join(basedir, Path::new(source)));
    let found = search.iter().position(|c| c.exists());
    tell_searched(source, &search, found);
    match found {
        Some(i) => Ok(search.swap_remove(i)),
        None => Err(search),
    }
}

/// `find_vars_files(path, name, extensions, allow_dir)`: `name` under `path` with the first
/// extension that exists (`""` is the bare name; an extension without a dot gets one). A
/// directory yields its files instead when `allow_dir` (and is passed over otherwise). The
/// paths returned are as joined, not normalised; existence is tested relative to `basedir`.
pub fn find_vars_files(
    basedir: &Path,
    path: &Path,
    name: &str,
    extensions: &[&str],
    allow_dir: bool,
) -> Vec<PathBuf> {
    let jpath = join(path, Path::new(name)).to_string_lossy().into_owned();
    for ext in extensions {
        let full = if ext.contains('.') {
            format!("{jpath}{ext}")
        } else if !ext.is_empty() {
            format!("{jpath}.{ext}")
        } else {
            jpath.clone()
        };
        let real = path_dwim(basedir, &full);
        if !real.exists() {
            continue;
        }
        if !real.is_dir() {
            return vec![PathBuf::from(full)];
        }
        if allow_dir {
            return dir_vars_files(basedir, Path::new(&full), extensions);
        }
    }
    Vec::new()
}

/// `_get_dir_vars_files`: the files below `dir` in sorted order, recursing into directories
/// without an extension, keeping files with no or a listed extension, skipping hidden names
/// and `~` backups.
fn dir_vars_files(basedir: &Path, dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let real = path_dwim(basedir, &dir.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(&real) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into()).collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let ext = splitext(&name).1;
        let full = join(dir, Path::new(&name));
        let real = path_dwim(basedir, &full.to_string_lossy());
        if real.is_dir() && ext.is_empty() {
            found.extend(dir_vars_files(basedir, &full, extensions));
        } else if (real.is_file() || real == Path::new("/dev/null"))
            && (ext.is_empty() || extensions.contains(&ext))
        {
            found.push(full);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn tasks_dirs_as_ansible_matches_them() {
        for (path, want) in [
            ("tasks", true),
            ("roles/r/tasks", true),
            ("roles/r/tasks/", true),
            ("roles/r/tasks//", false),
            ("roles/r/mytasks", false),
            ("roles/r/tasks\n", true),
            ("tasks/x", false),
        ] {
            assert_eq!(names_tasks_dir(Path::new(path)), want, "{path:?}");
        }
    }

    #[test]
    fn vars_files_first_candidate_wins_and_dirs_recurse_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let gv = dir.path();
        fs::write(gv.join("web.yml"), "a: 1").unwrap();
        fs::write(gv.join("web.json"), "{}").unwrap();
        fs::create_dir_all(gv.join("db/sub")).unwrap();
        fs::create_dir_all(gv.join("db/skip.d")).unwrap();
        for name in ["b.yml", "a", ".hidden.yml", "c.yml~", "d.txt", "sub/z.yaml", "skip.d/x.yml"] {
            fs::write(gv.join("db").join(name), "x: 1").unwrap();
        }
        let exts = ["", ".yml", ".yaml", ".json"];
        let find = |name: &str, allow_dir: bool| find_vars_files(gv, gv, name, &exts, allow_dir);
        assert_eq!(find("web", true), vec![gv.join("web.yml")]);
        assert_eq!(
            find("db", true),
            vec![gv.join("db/a"), gv.join("db/b.yml"), gv.join("db/sub/z.yaml")]
        );
        assert!(find("db", false).is_empty());
        assert!(find("none", true).is_empty());
    }

    #[test]
    fn relative_stack_lists_every_place_looked() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs::create_dir_all(base.join("vars")).unwrap();
        fs::write(base.join("vars/v.yml"), "").unwrap();
        assert_eq!(
            path_dwim_relative_stack(base, &[], Some("vars"), "v.yml"),
            Ok(base.join("vars/v.yml"))
        );
        assert_eq!(
            path_dwim_relative_stack(base, &[], Some("vars"), "vars/none.yml"),
            Err(vec![base.join("vars/none.yml")])
        );
    }
}
