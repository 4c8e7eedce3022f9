//! `ansible.builtin.file`: a path's state (file, directory, link, hard link, touched, absent)
//! and its owner, group, mode, attributes and times, with ansible's diff and check mode.
//! Acts on `path` only (and below it with `recurse`); never touches `src` beyond linking to it.

use std::os::unix::fs::MetadataExt;

use serde_json::{Map, Value};

use super::argspec::{Kind, Opt, Params, Spec, file_common};
use super::common::{fail, fail_with_cause, warn};
use super::fsattr::{
    FileArgs, Outcome, Stamp, check_selinux, parse_time, set_fs_attributes, update_times,
};
use super::paths::{basename, dirname, exists, isdir, islink, join, realpath};
use super::{Ctx, Invocation, ModuleResult, host};

pub(crate) fn spec() -> Spec {
    let mut options = vec![
        Opt::new("state", Kind::Str).choices(&[
            "absent",
            "directory",
            "file",
            "hard",
            "link",
            "touch",
        ]),
        Opt::new("path", Kind::Path).required().aliases(&["dest", "name"]),
        Opt::new("_original_basename", Kind::Str),
        Opt::new("recurse", Kind::Bool).default(false),
        Opt::new("force", Kind::Bool).default(false),
        Opt::new("follow", Kind::Bool).default(true),
        Opt::new("_diff_peek", Kind::Bool),
        Opt::new("src", Kind::Path),
        Opt::new("modification_time", Kind::Str),
        Opt::new("modification_time_format", Kind::Str).default("%Y%m%d%H%M.%S"),
        Opt::new("access_time", Kind::Str),
        Opt::new("access_time_format", Kind::Str).default("%Y%m%d%H%M.%S"),
    ];
    options.extend(file_common());
    Spec { options, ..Spec::default() }
}

/// `get_state`.
pub(super) fn get_state(path: &str) -> &'static str {
    match std::fs::symlink_metadata(path) {
        Err(_) => "absent",
        Ok(m) if m.file_type().is_symlink() => "link",
        Ok(m) if m.is_dir() => "directory",
        Ok(m) if m.nlink() > 1 => "hard",
        Ok(_) => "file",
    }
}

fn fail_path(path: &str, msg: &str) -> ModuleResult {
    let mut r = fail(msg);
    r.insert("path".into(), Value::from(path));
    r
}

/// `load_file_common_arguments`.
pub(super) fn file_args(p: &Params, path: &str) -> FileArgs {
    let path = if p.bool("follow") && islink(path) { realpath(path) } else { path.to_string() };
    FileArgs {
        path,
        mode: p.get("mode").clone(),
        owner: p.str("owner").map(str::to_string),
        group: p.str("group").map(str::to_string),
        attributes: p.str("attributes").map(str::to_string),
    }
}

fn obj(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// `initial_diff`.
fn initial_diff(path: &str, state: &str, prev: &str) -> Map<String, Value> {
    let mut before = obj(&[("path", path.into())]);
    let mut after = obj(&[("path", path.into())]);
    if prev != state {
        before.insert("state".into(), prev.into());
        after.insert("state".into(), state.into());
        if state == "absent" && prev == "directory" {
            let (mut dirs, mut files) = (Vec::new(), Vec::new());
            walk(path, &mut |p, is_dir| {
                if is_dir { dirs.push(Value::from(p)) } else { files.push(Value::from(p)) }
            });
            before.insert(
                "path_content".into(),
                Value::Object(obj(&[
                    ("directories", Value::Array(dirs)),
                    ("files", Value::Array(files)),
                ])),
            );
        }
    }
    obj(&[("before", Value::Object(before)), ("after", Value::Object(after))])
}

/// `os.walk` order (top-down, directory by directory, names as the directory lists them):
/// calls `f(path, is_dir)` for each entry (symlinks to directories count as directories but
/// are not entered).
pub(super) fn walk(root: &str, f: &mut dyn FnMut(&str, bool)) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let p = join(root, &name);
        if isdir(&p) { dirs.push((p, islink(&join(root, &name)))) } else { files.push(p) }
    }
    for (d, _) in &dirs {
        f(d, true);
    }
    for file in &files {
        f(file, false);
    }
    for (d, link) in dirs {
        if !link {
            walk(&d, f);
        }
    }
}

fn stamp(p: &Params, key: &str, state: &str, fmt_key: &str) -> Outcome<Stamp> {
    let value = match p.str(key) {
        Some(v) => v.to_string(),
        None if ["file", "hard", "directory", "link"].contains(&state) => "preserve".into(),
        None if state == "touch" => "now".into(),
        None => return Ok(Stamp::Preserve),
    };
    match value.as_str() {
        "preserve" => Ok(Stamp::Preserve),
        "now" => Ok(Stamp::Now),
        text => {
            let format = p.str(fmt_key).unwrap_or("%Y%m%d%H%M.%S");
            parse_time(text, format).map(Stamp::At).map_err(|e| {
                fail(format!(
                    "Error while obtaining timestamp for time {text} using format {format}: {e}"
                ))
            })
        }
    }
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let mut p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let mut result = match execute(ctx, &mut p) {
        Ok(r) | Err(r) => r,
    };
    if !ctx.diff {
        result.shift_remove("diff");
    }
    host::add_path_info(&mut result);
    result
}

fn execute(ctx: Ctx, p: &mut Params) -> Outcome<ModuleResult> {
    check_selinux(p)?;
    let mut path = p.str("path").unwrap_or_default().to_string();
    let state_given = p.str("state").map(str::to_string);
    if !matches!(state_given.as_deref(), Some("link" | "absent")) && isdir(&path) {
        let base = p
            .str("_original_basename")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| p.str("src").filter(|s| !s.is_empty()).map(basename));
        if let Some(base) = base {
            path = join(&path, &base);
            p.values.insert("path".into(), Value::from(path.clone()));
        }
    }
    let prev = get_state(&path);
    let state = match state_given {
        Some(s) => s,
        None if prev != "absent" => prev.to_string(),
        None if p.bool("recurse") => "directory".into(),
        None => "file".into(),
    };
    if p.bool("recurse") && state != "directory" {
        return Err(fail_path(&path, "recurse option requires state to be 'directory'"));
    }
    let src = p.str("src").filter(|s| !s.is_empty()).map(str::to_string);
    if src.is_some() && state != "link" && state != "hard" {
        return Err(fail_path(&path, "src option requires state to be 'link' or 'hard'"));
    }
    let mut warnings = ModuleResult::new();
    if ctx.check_mode && state != "absent" {
        if let Some(owner) = p.str("owner").filter(|s| !s.is_empty()) {
            let known = match owner.parse::<u32>() {
                Ok(uid) => host::user_name(uid).is_some(),
                Err(_) => host::uid_of(owner).is_some(),
            };
            if !known {
                let what = if owner.parse::<u32>().is_ok() {
                    format!("with uid {owner}")
                } else {
                    owner.to_string()
                };
                warn(
                    &mut warnings,
                    &format!(
                        "failed to look up user {what}. Create user up to this point in real play"
                    ),
                );
            }
        }
        if let Some(group) = p.str("group").filter(|s| !s.is_empty()) {
            let known = match group.parse::<u32>() {
                Ok(gid) => host::group_name(gid).is_some(),
                Err(_) => host::gid_of(group).is_some(),
            };
            if !known {
                let what = if group.parse::<u32>().is_ok() {
                    format!("with gid {group}")
                } else {
                    group.to_string()
                };
                warn(
                    &mut warnings,
                    &format!(
                        "failed to look up group {what}. Create group up to this point in real play"
                    ),
                );
            }
        }
    }
    let mtime = stamp(p, "modification_time", &state, "modification_time_format")?;
    let atime = stamp(p, "access_time", &state, "access_time_format")?;
    if p.is_set("_diff_peek") {
        let binary =
            std::fs::read(&path).map(|d| d.iter().take(8192).any(|b| *b == 0)).unwrap_or(false);
        return Ok(obj(&[
            ("path", path.into()),
            ("changed", false.into()),
            ("appears_binary", binary.into()),
        ]));
    }
    let check = ctx.check_mode;
    let force = p.bool("force");
    let follow = p.bool("follow");
    let mut result = match state.as_str() {
        "file" => ensure_file(p, &path, check, mtime, atime)?,
        "directory" => ensure_directory(p, &path, check, follow, mtime, atime)?,
        "link" => ensure_symlink(p, &path, src, check, follow, force, mtime, atime)?,
        "hard" => ensure_hardlink(p, &path, src, check, follow, force, mtime, atime)?,
        "touch" => touch(p, &path, check, mtime, atime)?,
        _ => ensure_absent(&path, check)?,
    };
    result.extend(warnings);
    Ok(result)
}

fn ensure_absent(path: &str, check: bool) -> Outcome<ModuleResult> {
    let prev = get_state(path);
    if prev == "absent" {
        return Ok(obj(&[
            ("path", path.into()),
            ("changed", false.into()),
            ("state", "absent".into()),
        ]));
    }
    let diff = initial_diff(path, "absent", prev);
    if !check {
        if prev == "directory" {
            std::fs::remove_dir_all(path).map_err(|e| {
                fail(format!(
                    "rmtree failed: {}",
                    tack_py::oserror::os_error(&e, std::path::Path::new(path))
                ))
            })?;
        } else if let Err(e) = std::fs::remove_file(path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            let mut r = ModuleResult::new();
            r.insert("path".into(), path.into());
            return Err(fail_with_cause(
                r,
                "Unlinking failed.",
                &tack_py::oserror::os_error(&e, std::path::Path::new(path)),
            ));
        }
    }
    Ok(obj(&[
        ("path", path.into()),
        ("changed", true.into()),
        ("diff", Value::Object(diff)),
        ("state", "absent".into()),
    ]))
}

fn touch(p: &Params, path: &str, check: bool, mtime: Stamp, atime: Stamp) -> Outcome<ModuleResult> {
    let prev = get_state(path);
    let mut changed = false;
    let mut result = obj(&[("dest", path.into())]);
    if prev == "absent" {
        if check {
            result.insert("changed".into(), true.into());
            return Ok(result);
        }
        if let Err(e) = std::fs::File::create(path) {
            let mut r = ModuleResult::new();
            r.insert("path".into(), path.into());
            return Err(fail_with_cause(
                r,
                "Error, could not touch target.",
                &tack_py::oserror::os_error_bytes(&e, str::as_bytes(path)),
            ));
        }
        changed = true;
    }
    let mut diff = initial_diff(path, "touch", prev);
    let args = file_args(p, path);
    let outcome = set_fs_attributes(&args, changed, Some(&mut diff), check)
        .and_then(|c| Ok(c | update_times(&args.path, mtime, atime, Some(&mut diff), check)?));
    match outcome {
        Ok(c) => changed = c,
        Err(f) => {
            if prev == "absent" {
                let _ = std::fs::remove_file(path);
            }
            return Err(f);
        }
    }
    result.insert("changed".into(), changed.into());
    result.insert("diff".into(), Value::Object(diff));
    Ok(result)
}

fn ensure_file(
    p: &Params,
    path: &str,
    check: bool,
    mtime: Stamp,
    atime: Stamp,
) -> Outcome<ModuleResult> {
    let mut path = path.to_string();
    let mut prev = get_state(&path);
    let mut args = file_args(p, &path);
    if prev != "file" && p.bool("follow") && prev == "link" {
        path = realpath(&path);
        prev = get_state(&path);
        args.path = path.clone();
    }
    if prev != "file" && prev != "hard" {
        let mut r = fail_path(&path, &format!("file ({path}) is {prev}, cannot continue"));
        r.insert("state".into(), prev.into());
        return Err(reorder(r, &["path", "state", "failed", "msg"]));
    }
    let mut diff = initial_diff(&path, "file", prev);
    let mut changed = set_fs_attributes(&args, false, Some(&mut diff), check)?;
    changed |= update_times(&args.path, mtime, atime, Some(&mut diff), check)?;
    Ok(obj(&[("path", path.into()), ("changed", changed.into()), ("diff", Value::Object(diff))]))
}

fn reorder(r: ModuleResult, order: &[&str]) -> ModuleResult {
    let mut out = ModuleResult::new();
    for k in order {
        if let Some(v) = r.get(*k) {
            out.insert(k.to_string(), v.clone());
        }
    }
    for (k, v) in r {
        out.entry(k).or_insert(v);
    }
    out
}

fn ensure_directory(
    p: &Params,
    path: &str,
    check: bool,
    follow: bool,
    mtime: Stamp,
    atime: Stamp,
) -> Outcome<ModuleResult> {
    let mut path = path.to_string();
    let mut prev = get_state(&path);
    let mut args = file_args(p, &path);
    if follow && prev == "link" {
        path = realpath(&path);
        args.path = path.clone();
        prev = get_state(&path);
    }
    let mut changed = false;
    let mut diff = initial_diff(&path, "directory", prev);
    if prev == "absent" {
        if check {
            return Ok(obj(&[
                ("path", path.into()),
                ("changed", true.into()),
                ("diff", Value::Object(diff)),
            ]));
        }
        let mut cur = String::new();
        for part in path.trim_matches('/').split('/') {
            cur = format!("{cur}/{part}");
            if !path.starts_with('/') {
                cur = cur.trim_start_matches('/').to_string();
            }
            if exists(&cur) {
                continue;
            }
            let step = (|| -> Outcome<bool> {
                match std::fs::create_dir(&cur) {
                    Ok(()) => changed = true,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && isdir(&cur) => {}
                    Err(e) => {
                        return Err(fail_path(
                            &path,
                            &format!(
                                "There was an issue creating {cur} as requested: {}",
                                tack_py::oserror::os_error(&e, std::path::Path::new(&cur))
                            ),
                        ));
                    }
                }
                let sub = FileArgs { path: cur.clone(), ..args.clone() };
                let c = set_fs_attributes(&sub, changed, Some(&mut diff), check)?;
                Ok(c | update_times(&args.path, mtime, atime, Some(&mut diff), check)?)
            })();
            changed = step?;
        }
        return Ok(obj(&[
            ("path", path.into()),
            ("changed", changed.into()),
            ("diff", Value::Object(diff)),
        ]));
    }
    if prev != "directory" {
        return Err(fail_path(&path, &format!("{path} already exists as a {prev}")));
    }
    changed = set_fs_attributes(&args, changed, Some(&mut diff), check)?;
    changed |= update_times(&args.path, mtime, atime, Some(&mut diff), check)?;
    if p.bool("recurse") {
        changed |= recurse(&path, follow, &args, check, mtime, atime)?;
    }
    Ok(obj(&[("path", path.into()), ("changed", changed.into()), ("diff", Value::Object(diff))]))
}

fn recurse(
    root: &str,
    follow: bool,
    args: &FileArgs,
    check: bool,
    mtime: Stamp,
    atime: Stamp,
) -> Outcome<bool> {
    let mut entries = Vec::new();
    walk(root, &mut |p, _| entries.push(p.to_string()));
    let mut changed = false;
    for entry in entries {
        let sub = FileArgs { path: entry.clone(), ..args.clone() };
        changed |= set_fs_attributes(&sub, changed, None, check)?;
        changed |= update_times(&entry, mtime, atime, None, check)?;
        if follow && islink(&entry) {
            let target = std::fs::read_link(&entry)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            let resolved = join(&dirname(&entry), &target);
            if exists(&resolved) {
                if isdir(&resolved) {
                    changed |= recurse(&resolved, follow, args, check, mtime, atime)?;
                }
                let sub = FileArgs { path: resolved.clone(), ..args.clone() };
                changed |= set_fs_attributes(&sub, changed, None, check)?;
                changed |= update_times(&resolved, mtime, atime, None, check)?;
            }
        }
    }
    Ok(changed)
}

fn tmp_sibling(path: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    join(&dirname(path), &format!(".{}.{now}.tmp", std::process::id()))
}

#[allow(clippy::too_many_arguments)]
fn ensure_symlink(
    p: &Params,
    path: &str,
    mut src: Option<String>,
    check: bool,
    follow: bool,
    force: bool,
    mtime: Stamp,
    atime: Stamp,
) -> Outcome<ModuleResult> {
    let prev = get_state(path);
    if src.is_none() && follow && exists(path) {
        src = std::fs::read_link(path).ok().map(|t| t.to_string_lossy().into_owned());
    }
    let relpath = if !islink(path) && isdir(path) { path.to_string() } else { dirname(path) };
    let absrc = src.as_ref().map(|s| join(&relpath, s));
    if !force
        && let (Some(s), Some(a)) = (&src, &absrc)
        && !exists(a)
    {
        let mut r = fail(format!(
            "src file does not exist, use 'force=yes' if you really want to create the link: {a}"
        ));
        r.insert("path".into(), path.into());
        r.insert("src".into(), s.clone().into());
        return Err(reorder(r, &["path", "src", "failed", "msg"]));
    }
    if prev == "directory" {
        if !force {
            return Err(fail_path(
                path,
                &format!("refusing to convert from {prev} to symlink for {path}"),
            ));
        }
        if std::fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(false) {
            return Err(fail_path(
                path,
                &format!("the directory {path} is not empty, refusing to convert it"),
            ));
        }
    } else if (prev == "file" || prev == "hard") && !force {
        return Err(fail_path(
            path,
            &format!("refusing to convert from {prev} to symlink for {path}"),
        ));
    }
    let mut diff = initial_diff(path, "link", prev);
    let mut changed = false;
    if prev == "link" {
        if let Some(s) = &src {
            let old = std::fs::read_link(path)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            if &old != s {
                if let Some(Value::Object(b)) = diff.get_mut("before") {
                    b.insert("src".into(), old.into());
                }
                if let Some(Value::Object(a)) = diff.get_mut("after") {
                    a.insert("src".into(), s.clone().into());
                }
                changed = true;
            }
        }
    } else {
        if src.is_none() {
            return Err(fail("src is required for creating new symlinks"));
        }
        changed = true;
    }
    let target = src.clone().unwrap_or_default();
    if changed && !check {
        if prev != "absent" {
            let tmp = tmp_sibling(path);
            let res = (|| {
                if prev == "directory" {
                    std::fs::remove_dir(path)?;
                }
                std::os::unix::fs::symlink(&target, &tmp)?;
                std::fs::rename(&tmp, path)
            })();
            if let Err(e) = res {
                let _ = std::fs::remove_file(&tmp);
                return Err(fail_path(
                    path,
                    &format!(
                        "Error while replacing: {}",
                        tack_py::oserror::os_error(&e, std::path::Path::new(path))
                    ),
                ));
            }
        } else if let Err(e) = std::os::unix::fs::symlink(&target, path) {
            return Err(fail_path(
                path,
                &format!("Error while linking: {}", link_error(&e, &target, path)),
            ));
        }
    }
    let src_value = src.map(Value::from).unwrap_or(Value::Null);
    if check && !exists(path) {
        return Ok(obj(&[
            ("dest", path.into()),
            ("src", src_value),
            ("changed", changed.into()),
            ("diff", Value::Object(diff)),
        ]));
    }
    let args = file_args(p, path);
    let mut warnings = ModuleResult::new();
    if follow && islink(path) && !exists(&args.path) {
        warn(
            &mut warnings,
            "Cannot set fs attributes on a non-existent symlink target. follow should be set to False to avoid this.",
        );
    } else {
        changed = set_fs_attributes(&args, changed, Some(&mut diff), check)?;
        changed |= update_times(&args.path, mtime, atime, Some(&mut diff), check)?;
    }
    let mut r = obj(&[
        ("dest", path.into()),
        ("src", src_value),
        ("changed", changed.into()),
        ("diff", Value::Object(diff)),
    ]);
    r.extend(warnings);
    Ok(r)
}

/// Python's message for a two-path OSError: `[Errno 17] File exists: 'a' -> 'b'`.
fn link_error(e: &std::io::Error, src: &str, dst: &str) -> String {
    let q = |s: &str| super::pyfmt::py_repr(&Value::from(s));
    format!(
        "[Errno {}] {}: b{} -> b{}",
        e.raw_os_error().unwrap_or(0),
        tack_py::oserror::strerror_code(e.raw_os_error().unwrap_or(0)),
        q(src),
        q(dst)
    )
}

#[allow(clippy::too_many_arguments)]
fn ensure_hardlink(
    p: &Params,
    path: &str,
    src: Option<String>,
    check: bool,
    follow: bool,
    force: bool,
    mtime: Stamp,
    atime: Stamp,
) -> Outcome<ModuleResult> {
    let prev = get_state(path);
    let args = file_args(p, path);
    if prev != "hard" && src.is_none() {
        return Err(fail("src is required for creating new hardlinks"));
    }
    let fail_src = |msg: &str| {
        let mut r = fail(msg);
        r.insert("dest".into(), path.into());
        r.insert("src".into(), src.clone().map(Value::from).unwrap_or(Value::Null));
        reorder(r, &["dest", "src", "failed", "msg"])
    };
    if let Some(s) = &src
        && !exists(s)
    {
        return Err(fail_src("src does not exist"));
    }
    let ino = |x: &str| std::fs::metadata(x).map(|m| m.ino()).ok();
    let s = src.clone().unwrap_or_default();
    let mut diff = initial_diff(path, "hard", prev);
    let mut changed = false;
    match prev {
        "absent" => changed = true,
        "link" => {
            let old = std::fs::read_link(path)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            if old != s {
                if let Some(Value::Object(b)) = diff.get_mut("before") {
                    b.insert("src".into(), old.into());
                }
                if let Some(Value::Object(a)) = diff.get_mut("after") {
                    a.insert("src".into(), s.clone().into());
                }
                changed = true;
            }
        }
        "hard" => {
            if src.is_some() && ino(path) != ino(&s) {
                changed = true;
                if !force {
                    return Err(fail_src("Cannot link, different hard link exists at destination"));
                }
            }
        }
        "file" => {
            changed = true;
            if !force {
                return Err(fail_src(&format!("Cannot link, {prev} exists at destination")));
            }
        }
        _ => {
            changed = true;
            if exists(path) {
                if ino(path) == ino(&s) {
                    return Ok(obj(&[("path", path.into()), ("changed", false.into())]));
                } else if !force {
                    return Err(fail_src("Cannot link: different hard link exists at destination"));
                }
            }
        }
    }
    if changed && !check {
        if prev != "absent" {
            let tmp = tmp_sibling(path);
            let res = (|| {
                if prev == "directory" && exists(path) {
                    // ansible unlinks here, which fails on a directory: that error is its message.
                    std::fs::remove_file(path)?;
                }
                std::fs::hard_link(&s, &tmp)?;
                std::fs::rename(&tmp, path)
            })();
            if let Err(e) = res {
                let _ = std::fs::remove_file(&tmp);
                return Err(fail_path(
                    path,
                    &format!(
                        "Error while replacing: {}",
                        tack_py::oserror::os_error(&e, std::path::Path::new(path))
                    ),
                ));
            }
        } else {
            let from = if follow && islink(&s) {
                std::fs::read_link(&s)
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or(s.clone())
            } else {
                s.clone()
            };
            if let Err(e) = std::fs::hard_link(&from, path) {
                return Err(fail_path(
                    path,
                    &format!("Error while linking: {}", link_error(&e, &from, path)),
                ));
            }
        }
    }
    let src_value = src.map(Value::from).unwrap_or(Value::Null);
    if check && !exists(path) {
        return Ok(obj(&[
            ("dest", path.into()),
            ("src", src_value),
            ("changed", changed.into()),
            ("diff", Value::Object(diff)),
        ]));
    }
    changed = set_fs_attributes(&args, changed, Some(&mut diff), check)?;
    changed |= update_times(&args.path, mtime, atime, Some(&mut diff), check)?;
    Ok(obj(&[
        ("dest", path.into()),
        ("src", src_value),
        ("changed", changed.into()),
        ("diff", Value::Object(diff)),
    ]))
}
