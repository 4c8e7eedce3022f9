//! Directory copies of `copy` with `remote_src`: a whole tree when the destination is new,
//! otherwise ansible's `dircmp` merge (differing files, files only in the source, common
//! subdirectories), keeping symlinks as links. Writes only under the destination.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::argspec::Params;
use super::common::fail;
use super::fsattr::{Outcome, set_group, set_owner};
use super::paths::{exists, join};

fn names(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn io(e: std::io::Error) -> super::ModuleResult {
    fail(format!("Failed to copy directory: {e}"))
}

fn copy_file(src: &str, dst: &str) -> std::io::Result<()> {
    std::fs::copy(src, dst)?;
    let st = std::fs::metadata(src)?;
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(st.mode() & 0o7777))
}

fn copy2(src: &str, dst: &str) -> std::io::Result<()> {
    copy_file(src, dst)?;
    let st = std::fs::metadata(src)?;
    let f = std::fs::File::options().write(true).open(dst)?;
    f.set_times(std::fs::FileTimes::new().set_accessed(st.accessed()?).set_modified(st.modified()?))
}

/// `shutil.copytree(src, dst, symlinks=True)`.
fn copytree(src: &str, dst: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for name in names(src) {
        let (s, d) = (join(src, &name), join(dst, &name));
        let meta = std::fs::symlink_metadata(&s)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&s)?, &d)?;
        } else if meta.is_dir() {
            copytree(&s, &d)?;
        } else {
            copy2(&s, &d)?;
        }
    }
    let st = std::fs::metadata(src)?;
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(st.mode() & 0o7777))?;
    let f = std::fs::File::open(dst)?;
    f.set_times(std::fs::FileTimes::new().set_accessed(st.accessed()?).set_modified(st.modified()?))
}

fn chown_path(p: &Params, path: &str, check: bool) -> Outcome<bool> {
    let mut none = None;
    let c = set_owner(path, p.str("owner"), false, &mut none, check)?;
    set_group(path, p.str("group"), c, &mut none, check)
}

fn chown_recursive(p: &Params, root: &str, check: bool) -> Outcome<bool> {
    if p.str("owner").is_none() && p.str("group").is_none() {
        return Ok(false);
    }
    let mut changed = chown_path(p, root, check)?;
    let mut all = Vec::new();
    super::file::walk(root, &mut |path, _| all.push(path.to_string()));
    for path in all {
        changed |= chown_path(p, &path, check)?;
    }
    Ok(changed)
}

/// `filecmp.cmp(shallow=True)`.
fn same_file(a: &str, b: &str) -> bool {
    let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) else { return false };
    if x.is_file() != y.is_file() {
        return false;
    }
    if x.size() == y.size() && x.mtime() == y.mtime() && x.mtime_nsec() == y.mtime_nsec() {
        return true;
    }
    x.size() == y.size() && std::fs::read(a).ok() == std::fs::read(b).ok()
}

/// The parts of `filecmp.dircmp(src, dest)` ansible uses.
struct DirCmp {
    diff_files: Vec<String>,
    left_only: Vec<String>,
    common_dirs: Vec<String>,
}

fn dircmp(src: &str, dest: &str) -> DirCmp {
    let right = names(dest);
    let mut out = DirCmp { diff_files: Vec::new(), left_only: Vec::new(), common_dirs: Vec::new() };
    for name in names(src) {
        if !right.contains(&name) {
            out.left_only.push(name);
            continue;
        }
        let (a, b) = (join(src, &name), join(dest, &name));
        let (Ok(x), Ok(y)) = (std::fs::metadata(&a), std::fs::metadata(&b)) else { continue };
        if x.is_dir() && y.is_dir() {
            out.common_dirs.push(name);
        } else if x.is_file() && y.is_file() && !same_file(&a, &b) {
            out.diff_files.push(name);
        }
    }
    out
}

fn merge(src: &str, dest: &str, p: &Params, check: bool) -> Outcome<bool> {
    let cmp = dircmp(src, dest);
    let mut changed = !cmp.diff_files.is_empty() || !cmp.left_only.is_empty();
    if !check {
        for item in &cmp.diff_files {
            let (s, d) = (join(src, item), join(dest, item));
            copy_file(&s, &d).map_err(io)?;
            chown_path(p, &d, check)?;
        }
        for item in &cmp.left_only {
            let (s, d) = (join(src, item), join(dest, item));
            let meta = std::fs::symlink_metadata(&s).map_err(io)?;
            if meta.file_type().is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&s).map_err(io)?, &d).map_err(io)?;
            } else if meta.is_dir() {
                copytree(&s, &d).map_err(io)?;
                chown_recursive(p, &d, check)?;
            } else {
                copy_file(&s, &d).map_err(io)?;
                chown_path(p, &d, check)?;
            }
        }
    }
    for item in &cmp.common_dirs {
        changed |= merge(&join(src, item), &join(dest, item), p, check)?;
    }
    Ok(changed)
}

/// `copy_directory`.
pub(super) fn copy_directory(src: &str, dest: &str, p: &Params, check: bool) -> Outcome<bool> {
    if p.get("local_follow").as_bool() == Some(true) {
        return Err(fail(
            "tack's copy does not follow source symlinks in directory copies (local_follow=true)",
        ));
    }
    if !exists(dest) {
        if !check {
            copytree(src, dest).map_err(io)?;
            chown_recursive(p, dest, check)?;
        }
        return Ok(true);
    }
    let changed = merge(src, dest, p, check)?;
    Ok(chown_recursive(p, dest, check)? || changed)
}
