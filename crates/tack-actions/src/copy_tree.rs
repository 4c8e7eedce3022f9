//! `copy` of a controller directory, as ansible's copy action does it: the tree is walked on
//! the controller ([`walk`]), then every file goes through the single file's steps (stat,
//! then `file` for equal bytes or a staged `copy`), every directory no file implied gets a
//! `file state=directory`, and every symbolic link kept a `file state=link`.
//!
//! A source written with a trailing slash copies what the directory holds; without one, the
//! directory itself. `local_follow` (on by default) copies what a link names, keeping a link
//! only where following it would loop. The walk lists entries in the order the file system
//! gives them, as Python's `os.walk` does, so the sub-tasks come in ansible's order.
//!
//! Owns the walk and the per-entry sub-tasks; the search for the source and the refusal of a
//! host-named one are `copy`'s.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};
use sha1::Digest;
use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::staging::Staged;
use crate::copy_diff;
use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// What the walk found, each with the path it gets under `dest`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Walk {
    /// (the controller file to read, its path under dest)
    pub files: Vec<(PathBuf, String)>,
    /// (the controller directory, its path under dest)
    pub directories: Vec<(PathBuf, String)>,
    /// (the link's target as written, its path under dest)
    pub symlinks: Vec<(String, String)>,
}

fn join_rel(base: &str, name: &str) -> String {
    if base.is_empty() { name.to_string() } else { format!("{base}/{name}") }
}

fn dev_ino(m: &std::fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

fn read_link(path: &Path) -> std::io::Result<String> {
    Ok(std::fs::read_link(path)?.to_string_lossy().into_owned())
}

/// `_walk_dirs`: `top` is the directory found on the controller; with `contents` (the
/// source was written with a trailing slash) the paths under dest start below it, else
/// with its own name.
pub(super) fn walk(top: &Path, contents: bool, local_follow: bool) -> std::io::Result<Walk> {
    let mut out = Walk::default();
    let top_stat = std::fs::metadata(top)?;
    let base = if contents {
        String::new()
    } else {
        top.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    };
    let parents = HashSet::from([dev_ino(&top_stat)]);
    visit(top, &base, &parents, local_follow, &mut out)?;
    Ok(out)
}

/// One directory of the walk, then the directories below it, depth first (`os.walk`'s
/// top-down order); a followed link to a directory is walked where it is met.
fn visit(
    dir: &Path,
    rel: &str,
    parents: &HashSet<(u64, u64)>,
    follow: bool,
    out: &mut Walk,
) -> std::io::Result<()> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // `os.walk` counts a link to a directory among the directories.
        if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            dirs.push((path, name));
        } else {
            files.push((path, name));
        }
    }
    for (path, name) in files {
        let to = join_rel(rel, &name);
        let is_link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            out.files.push((path, to));
            continue;
        }
        let real = std::fs::canonicalize(&path).ok().filter(|r| r.is_file());
        match real.filter(|_| follow) {
            Some(real) => out.files.push((real, to)),
            None => out.symlinks.push((read_link(&path)?, to)),
        }
    }
    let mut descend = Vec::new();
    for (path, name) in dirs {
        let to = join_rel(rel, &name);
        let is_link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            out.directories.push((path.clone(), to.clone()));
            descend.push((path, to));
            continue;
        }
        if !follow {
            out.symlinks.push((read_link(&path)?, to));
            continue;
        }
        let real = std::fs::canonicalize(&path)?;
        let target = dev_ino(&std::fs::metadata(&real)?);
        if parents.contains(&target) {
            // A link to a directory the copy already holds stays a link.
            out.symlinks.push((read_link(&path)?, to));
            continue;
        }
        // The directories between the link and the part of the tree already known: a link
        // to one of them would loop.
        let mut new_parents = HashSet::new();
        let mut up = path.parent();
        while let Some(p) = up.filter(|p| !p.as_os_str().is_empty()) {
            let Ok(m) = std::fs::metadata(p) else { break };
            if parents.contains(&dev_ino(&m)) {
                break;
            }
            new_parents.insert(dev_ino(&m));
            up = p.parent();
        }
        if new_parents.contains(&target) {
            out.symlinks.push((read_link(&path)?, to));
            continue;
        }
        out.directories.push((real.clone(), to.clone()));
        let mut inner = parents.clone();
        inner.extend(new_parents);
        visit(&real, &to, &inner, follow, out)?;
    }
    for (path, to) in descend {
        visit(&path, &to, parents, follow, out)?;
    }
    Ok(())
}

/// ansible's `REAL_FILE_ARGS`: what of the task's arguments a `file` sub-task takes.
const FILE_ARGS: &[&str] = &[
    "mode",
    "owner",
    "group",
    "seuser",
    "serole",
    "selevel",
    "setype",
    "attributes",
    "attr",
    "unsafe_writes",
    "state",
    "path",
    "_original_basename",
    "recurse",
    "force",
    "_diff_peek",
    "src",
];

fn file_args(input: &ActionInput<'_>) -> Map<String, Json> {
    let mut args = json::map_to_json(input.args);
    args.retain(|k, _| FILE_ARGS.contains(&k.as_str()));
    args
}

fn truthy(m: &Mapping, k: &str) -> bool {
    m.get(k).is_some_and(|v| v.value.is_truthy())
}

fn text(m: &Mapping, k: &str) -> Option<String> {
    m.get(k).map(|v| tack_yaml::pyrepr::str(&v.value))
}

/// A sub-task whose failure ends the task: the module's result as the task's.
struct Failed(ActionOutput);

fn module(input: &ActionInput<'_>, name: &str, args: Map<String, Json>) -> Result<Mapping, Failed> {
    super::copy::run_module(name, args, input)
        .map_err(|e| Failed(super::shell_run::action_fail(input, &e)))
}

/// `_execute_remote_stat`: the stat's answer, or ansible's error for a stat that failed.
fn remote_stat(
    input: &ActionInput<'_>,
    path: &str,
    follow: bool,
    checksum: bool,
) -> Result<Mapping, Failed> {
    let mut args = Map::new();
    args.insert("path".into(), Json::String(path.into()));
    args.insert("follow".into(), Json::Bool(follow));
    args.insert("get_checksum".into(), Json::Bool(checksum));
    args.insert("checksum_algorithm".into(), Json::String("sha1".into()));
    let result = module(input, "stat", args)?;
    if truthy(&result, "failed") {
        let msg = ["module_stderr", "module_stdout", "msg"]
            .iter()
            .filter_map(|k| text(&result, k))
            .find(|m| !m.is_empty())
            .unwrap_or_default();
        let message = format!("Failed to get information on remote file ({path}): {msg}");
        return Err(Failed(super::copy::raised_through(input, &message)));
    }
    Ok(result.get("stat").and_then(Node::as_map).cloned().unwrap_or_default())
}

/// The task's output for a sub-task that failed: its result, and ansible's error line.
fn module_failed(input: &ActionInput<'_>, result: Mapping) -> ActionOutput {
    let msg = text(&result, "msg").unwrap_or_default();
    let mut out = ActionOutput::new(result);
    out.error = Some(Diagnostic::at(
        format!("Task failed: Module failed: {msg}"),
        input.task_origin.clone(),
    ));
    out
}

/// The copy of a directory found at `source` (ending with `/` when the task's `src` did),
/// to `dest` on the host.
pub(super) fn run(input: &ActionInput<'_>, source: &Path, written: &str) -> ActionOutput {
    let contents = written.ends_with('/');
    let local_follow = input.args.get("local_follow").is_none_or(crate::input::loose_bool);
    let walked = match walk(source, contents, local_follow) {
        Ok(w) => w,
        Err(e) => {
            return super::shell_run::action_fail(
                input,
                &format!("could not read the directory {}: {e}", source.display()),
            );
        }
    };
    let mut shown_src = source.to_string_lossy().into_owned();
    if contents && !shown_src.ends_with('/') {
        shown_src.push('/');
    }
    let Some(dest) = input.text("dest") else {
        return super::shell_run::action_fail(input, "dest is required");
    };
    let mut dest = super::shell_run::remote_expand_user(input, &dest);
    if !dest.ends_with('/') {
        dest.push('/');
    }
    match copy_all(input, &walked, &dest) {
        Ok((Some(mut result), _)) if walked.files.len() == 1 => {
            // One file: the last sub-task's result is the task's (the file module's `path`
            // standing in for `dest`).
            if result.get("dest").is_none()
                && let Some(path) = result.get("path").cloned()
            {
                result.insert(s("dest"), path);
            }
            ActionOutput::new(result)
        }
        Ok((_, changed)) => {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(changed));
            data.insert(s("dest"), s(&dest));
            data.insert(s("src"), s(&shown_src));
            ActionOutput::new(data)
        }
        Err(Failed(out)) => out,
    }
}

/// Every sub-task, in ansible's order: files, then directories no file implied, then links.
/// `Ok((last module result, changed))`; the last result is `None` when no module ran.
fn copy_all(
    input: &ActionInput<'_>,
    walked: &Walk,
    dest: &str,
) -> Result<(Option<Mapping>, bool), Failed> {
    let mut changed = false;
    let mut last: Option<Mapping> = None;
    let mut executed = false;
    let mut implied = HashSet::new();
    // Links in the destination are not followed once there is a tree to copy.
    let follow = walked.directories.is_empty()
        && input.args.get("follow").is_some_and(crate::input::loose_bool);
    for (path, rel) in &walked.files {
        let Some(result) = copy_file(input, path, rel, dest, follow)? else {
            last = None;
            continue;
        };
        if truthy(&result, "failed") {
            return Err(Failed(module_failed(input, result)));
        }
        let mut parent = Path::new(rel).parent();
        while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
            implied.insert(p.to_string_lossy().into_owned());
            parent = p.parent();
        }
        executed = true;
        changed |= truthy(&result, "changed");
        last = Some(result);
    }
    for (_, rel) in &walked.directories {
        if implied.contains(rel) {
            continue;
        }
        let mut args = file_args(input);
        args.insert("path".into(), Json::String(format!("{dest}{rel}")));
        args.insert("state".into(), Json::String("directory".into()));
        let mode = input.args.get("directory_mode").map(json::to_json).unwrap_or(Json::Null);
        args.insert("mode".into(), mode);
        args.insert("recurse".into(), Json::Bool(false));
        args.remove("src");
        let result = module(input, "file", args)?;
        if truthy(&result, "failed") {
            return Err(Failed(module_failed(input, result)));
        }
        executed = true;
        changed |= truthy(&result, "changed");
        last = Some(result);
    }
    for (target, rel) in &walked.symlinks {
        let mut args = file_args(input);
        args.insert("path".into(), Json::String(format!("{dest}{rel}")));
        args.insert("src".into(), Json::String(target.clone()));
        args.insert("state".into(), Json::String("link".into()));
        args.insert("force".into(), Json::Bool(true));
        if !walked.directories.is_empty() {
            args.insert("follow".into(), Json::Bool(false));
        }
        if args.get("mode").and_then(Json::as_str) == Some("preserve") {
            args.remove("mode");
        }
        let result = module(input, "file", args)?;
        executed = true;
        if truthy(&result, "failed") {
            return Err(Failed(module_failed(input, result)));
        }
        changed |= truthy(&result, "changed");
        last = Some(result);
    }
    Ok((last.filter(|_| executed), changed))
}

/// `_copy_file` for one file of the tree: `None` when `force: false` leaves an existing
/// destination alone.
fn copy_file(
    input: &ActionInput<'_>,
    path: &Path,
    rel: &str,
    dest: &str,
    follow: bool,
) -> Result<Option<Mapping>, Failed> {
    let force = input.args.get("force").is_none_or(crate::input::loose_bool);
    let decrypt = input.args.get("decrypt").is_none_or(crate::input::loose_bool);
    if let Some(refusal) = super::staging::too_big(input.conn, path) {
        let msg = format!("could not stage the file: {refusal}");
        return Err(Failed(super::shell_run::action_fail(input, &msg)));
    }
    let unreadable = |e: std::io::Error| {
        let msg = format!("could not find src={}, {e}", path.display());
        super::shell_run::action_fail(input, &msg)
    };
    let bytes = super::copy::real_file(input, path, decrypt, unreadable).map_err(Failed)?;
    let local_mode = (input.text("mode").as_deref() == Some("preserve"))
        .then(|| std::fs::metadata(path).map(|m| format!("0{:03o}", m.mode() & 0o7777)).ok())
        .flatten();
    let dest_file = format!("{dest}{rel}");
    let mut status = remote_stat(input, &dest_file, follow, force)?;
    if truthy(&status, "exists") && truthy(&status, "isdir") {
        // ansible looks again at the same path: a directory where the file goes stays one.
        status = remote_stat(input, &dest_file, follow, force)?;
    }
    if truthy(&status, "exists") && !force {
        return Ok(None);
    }
    let checksum: String = sha1::Sha1::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let mut result = Mapping::new();
    let mut diffs = Vec::new();
    let module_result = if text(&status, "checksum").as_deref() != Some(checksum.as_str()) {
        if input.diff && !input.args.get("raw").is_some_and(crate::input::loose_bool) {
            let name = path.to_string_lossy();
            let source = copy_diff::Source::File(path);
            let diff = copy_diff::diff_data(input, &dest_file, &bytes, source, &name);
            diffs.push(json::from_json(&diff));
        }
        if input.check_mode {
            result.insert(s("diff"), Node::bare(Value::Seq(diffs)));
            result.insert(s("changed"), b(true));
            return Ok(Some(result));
        }
        let ext = Path::new(&dest_file).extension().map(|e| format!(".{}", e.to_string_lossy()));
        let name = format!(".source{}", ext.unwrap_or_default());
        let staged = Staged::put(input.conn, &bytes, &name, false).map_err(|e| {
            if crate::output::link_lost(&e) {
                return Failed(crate::output::link_errored(&e, input.task_origin.clone()));
            }
            let msg = format!("could not stage the file: {e}");
            Failed(super::shell_run::action_fail(input, &msg))
        })?;
        let mut args = json::map_to_json(input.args);
        for key in ["content", "decrypt", "local_follow", "remote_src"] {
            args.remove(key);
        }
        args.insert("src".into(), Json::String(staged.path().to_string()));
        args.insert("dest".into(), Json::String(dest.to_string()));
        args.insert("_original_basename".into(), Json::String(rel.to_string()));
        args.insert("follow".into(), Json::Bool(follow));
        if args.get("checksum").is_none_or(|c| c.as_str().is_none_or(str::is_empty)) {
            args.insert("checksum".into(), Json::String(checksum.clone()));
        }
        if let Some(mode) = &local_mode {
            args.insert("mode".into(), Json::String(mode.clone()));
        }
        let out = module(input, "copy", args);
        // The staged bytes go as soon as the module has them in place.
        drop(staged);
        out?
    } else {
        let mut target = dest.to_string();
        if follow {
            let nofollow = remote_stat(input, &dest_file, false, true)?;
            if truthy(&nofollow, "islnk")
                && let Some(source) = text(&nofollow, "lnk_source")
            {
                target = source;
            }
        }
        let mut args = file_args(input);
        args.insert("dest".into(), Json::String(target));
        args.insert("_original_basename".into(), Json::String(rel.to_string()));
        args.insert("recurse".into(), Json::Bool(false));
        args.insert("state".into(), Json::String("file".into()));
        args.remove("src");
        if let Some(mode) = &local_mode {
            args.insert("mode".into(), Json::String(mode.clone()));
        }
        module(input, "file", args)?
    };
    result.insert(s("diff"), Node::bare(Value::Seq(diffs)));
    for (k, v) in module_result.iter() {
        result.insert(k.clone(), v.clone());
    }
    if text(&result, "checksum").is_none_or(|c| c.is_empty()) {
        result.insert(s("checksum"), s(&checksum));
    }
    Ok(Some(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_names_what_goes_where() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("tree");
        std::fs::create_dir_all(top.join("sub")).unwrap();
        std::fs::write(top.join("a"), "a").unwrap();
        std::fs::write(top.join("sub/b"), "b").unwrap();
        std::os::unix::fs::symlink("a", top.join("l")).unwrap();
        std::os::unix::fs::symlink("..", top.join("sub/up")).unwrap();
        let sorted = |mut w: Walk| {
            w.files.sort();
            w.directories.sort();
            w.symlinks.sort();
            w
        };
        let kept = sorted(walk(&top, false, false).unwrap());
        assert_eq!(
            kept.files,
            vec![(top.join("a"), "tree/a".into()), (top.join("sub/b"), "tree/sub/b".into())]
        );
        assert_eq!(kept.directories, vec![(top.join("sub"), "tree/sub".into())]);
        assert_eq!(
            kept.symlinks,
            vec![("..".into(), "tree/sub/up".into()), ("a".into(), "tree/l".into())]
        );
        // Followed: the file link becomes its file; the link back up would loop, so stays.
        let followed = sorted(walk(&top, true, true).unwrap());
        let real = std::fs::canonicalize(&top).unwrap();
        assert!(followed.files.contains(&(real.join("a"), "l".into())), "{followed:?}");
        assert_eq!(followed.symlinks, vec![("..".into(), "sub/up".into())]);
    }
}
