//! `ansible.builtin.copy`, the module side: `src` is already on the host (the controller's
//! upload, or the host's own file with `remote_src`), and is put at `dest` with ansible's
//! checksums, `force`, `backup`, `validate`, directory creation and `directory_mode`, and
//! remote directory copies. Like ansible's module, a non-`remote_src` source is moved into
//! place (it is the controller's temporary upload). `content` is the controller's job.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use serde_json::Value;

use super::argspec::{Kind, Opt, Params, Spec, file_common};
use super::common::fail;
use super::fsattr::{FileArgs, Outcome, set_fs_attributes, set_group, set_mode, set_owner};
use super::paths::{basename, dirname, exists, isdir, islink, join, realpath};
use super::textfile::backup_local;
use super::{Ctx, Invocation, ModuleResult, digest, host};

pub(crate) fn spec() -> Spec {
    let mut options = vec![
        Opt::new("src", Kind::Path),
        Opt::new("_original_basename", Kind::Str),
        Opt::new("content", Kind::Str).no_log(),
        Opt::new("dest", Kind::Path).required(),
        Opt::new("backup", Kind::Bool).default(false),
        Opt::new("force", Kind::Bool).default(true),
        Opt::new("validate", Kind::Str),
        Opt::new("directory_mode", Kind::Raw),
        Opt::new("remote_src", Kind::Bool).default(false),
        Opt::new("local_follow", Kind::Bool),
        Opt::new("checksum", Kind::Str),
        Opt::new("follow", Kind::Bool).default(false),
    ];
    options.extend(file_common());
    Spec { options, ..Spec::default() }
}

fn access(path: &str, mode: i32) -> bool {
    let Ok(c) = std::ffi::CString::new(path) else { return false };
    // SAFETY: `c` is a valid NUL-terminated path for the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

fn with(mut r: ModuleResult, pairs: &[(&str, Value)]) -> ModuleResult {
    for (k, v) in pairs {
        r.insert(k.to_string(), v.clone());
    }
    r
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let mut p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let mut result = match execute(ctx, &mut p, inv.timeout) {
        Ok(r) | Err(r) => r,
    };
    host::add_path_info(&mut result);
    result
}

fn sum(path: &str, algo: &str) -> Option<String> {
    digest::file_digest(path, algo).and_then(Result::ok)
}

fn execute(ctx: Ctx, p: &mut Params, timeout: Option<u64>) -> Outcome<ModuleResult> {
    super::fsattr::check_selinux(p)?;
    if p.is_set("content") {
        return Err(fail(
            "tack's copy module takes `src` only: `content` is written to a file by the controller",
        ));
    }
    let check = ctx.check_mode;
    let src = p.str("src").map(str::to_string);
    let src_text = src.clone().unwrap_or_else(|| "None".into());
    let mut dest = p.str("dest").unwrap_or_default().to_string();
    if !dest.contains('/') {
        dest = format!("./{dest}");
    }
    let force = p.bool("force");
    let follow = p.bool("follow");
    let remote_src = p.bool("remote_src");
    let original = p.str("_original_basename").filter(|s| !s.is_empty()).map(str::to_string);
    if !exists(&src_text) {
        return Err(fail(format!("Source {src_text} not found")));
    }
    if !access(&src_text, libc::R_OK) {
        return Err(fail(format!("Source {src_text} not readable")));
    }
    if p.str("mode") == Some("preserve") {
        let m = std::fs::metadata(&src_text).map(|m| m.mode() & 0o7777).unwrap_or(0);
        p.values.insert("mode".into(), Value::from(format!("0{m:03o}")));
    }
    let mode = p.get("mode").clone();
    let src_is_file = std::fs::metadata(&src_text).is_ok_and(|m| m.is_file());
    let (mut checksum_src, mut md5_src) = (None, None);
    if src_is_file {
        checksum_src = sum(&src_text, "sha1");
        md5_src = sum(&src_text, "md5");
    } else if remote_src && !isdir(&src_text) {
        return Err(fail(format!("Cannot copy invalid source '{src_text}': not a file")));
    }
    if let Some(expected) = p.str("checksum").filter(|s| !s.is_empty())
        && checksum_src.as_deref() != Some(expected)
    {
        let r = fail("Copied file does not match the expected checksum. Transfer failed.");
        return Err(with(
            r,
            &[
                ("checksum", checksum_src.clone().map(Value::from).unwrap_or(Value::Null)),
                ("expected_checksum", expected.into()),
            ],
        ));
    }
    let mut changed = false;
    if dest.ends_with('/') {
        if let Some(b) = &original {
            dest = join(&dest, b);
        }
        let dir = dirname(&dest);
        if !exists(&dir) {
            let (pre, new_dirs) = split_pre_existing(&dir);
            if check {
                let mut r = ModuleResult::new();
                r.insert("msg".into(), format!("dest directory {dir} would be created").into());
                r.insert("changed".into(), true.into());
                r.insert("src".into(), src_text.clone().into());
                return Ok(r);
            }
            std::fs::create_dir_all(&dir)
                .map_err(|e| fail(format!("Could not create {dir}: {e}")))?;
            changed = true;
            let mut args = common_args(p, &dest, follow);
            args.mode = p.get("directory_mode").clone();
            let mut cur = pre;
            for d in new_dirs {
                cur = join(&cur, &d);
                let dir_args = FileArgs { path: cur.clone(), ..args.clone() };
                changed = set_fs_attributes(&dir_args, changed, None, check)?;
            }
            args.path = dest.clone();
        }
    }
    if isdir(&dest) {
        let base = original.clone().unwrap_or_else(|| basename(&src_text));
        dest = join(&dest, &base);
    }
    let mut checksum_dest = None;
    if exists(&dest) {
        if islink(&dest) && follow {
            dest = realpath(&dest);
        }
        if !force {
            let mut r = ModuleResult::new();
            r.insert("msg".into(), "file already exists".into());
            r.insert("src".into(), src_text.clone().into());
            r.insert("dest".into(), dest.clone().into());
            r.insert("changed".into(), false.into());
            return Ok(r);
        }
        if access(&dest, libc::R_OK) && std::fs::metadata(&dest).is_ok_and(|m| m.is_file()) {
            checksum_dest = sum(&dest, "sha1");
        }
    } else if !exists(&dirname(&dest)) {
        let parent = dirname(&dest);
        if let Err(e) = std::fs::metadata(&parent)
            && e.kind() == std::io::ErrorKind::PermissionDenied
        {
            return Err(fail(format!("Destination directory {parent} is not accessible")));
        }
        return Err(fail(format!("Destination directory {parent} does not exist")));
    }
    let parent = dirname(&dest);
    if !access(if parent.is_empty() { "." } else { &parent }, libc::W_OK)
        && !p.bool("unsafe_writes")
    {
        return Err(fail(format!("Destination {parent} not writable")));
    }
    let mut backup_file = None;
    if checksum_src != checksum_dest || islink(&dest) {
        if !check {
            if p.bool("backup") && exists(&dest) {
                backup_file = Some(backup_local(&dest, false)?);
            }
            if islink(&dest) {
                let _ = std::fs::remove_file(&dest);
                let _ = std::fs::File::create(&dest);
            }
            if let Some(validate) = p.str("validate").filter(|v| !v.is_empty()) {
                let mut none = None;
                set_mode(&src_text, &mode, false, &mut none, false)?;
                set_owner(&src_text, p.str("owner"), false, &mut none, false)?;
                set_group(&src_text, p.str("group"), false, &mut none, false)?;
                validate_src(validate, &src_text, timeout)?;
            }
            if src_is_file {
                place(&src_text, &dest, remote_src)
                    .map_err(|e| fail(format!("Failed to copy '{src_text}' to '{dest}': {e}")))?;
            }
        }
        changed = true;
    }
    let src_param = p.str("src").unwrap_or_default().to_string();
    let dest_param = p.str("dest").unwrap_or_default().to_string();
    let mut target = dest.clone();
    if checksum_src.is_none()
        && checksum_dest.is_none()
        && remote_src
        && isdir(&src_param)
        && (isdir(&dest_param) || !exists(&dest_param))
    {
        let (mut s, mut d) = (src_param.clone(), dest_param.clone());
        if !s.ends_with('/') {
            d = join(&d, &basename(&s));
            s = join(&s, "");
        }
        changed |= super::copytree::copy_directory(&s, &d, p, check)?;
        target = d;
    }
    let mut r = ModuleResult::new();
    r.insert("dest".into(), dest.clone().into());
    r.insert("src".into(), src_text.into());
    r.insert("md5sum".into(), md5_src.map(Value::from).unwrap_or(Value::Null));
    r.insert("checksum".into(), checksum_src.map(Value::from).unwrap_or(Value::Null));
    r.insert("changed".into(), changed.into());
    if let Some(b) = backup_file.filter(|b| !b.is_empty()) {
        r.insert("backup_file".into(), b.into());
    }
    let mut args = common_args(p, &dest, follow);
    if isdir(&target) && p.is_set("directory_mode") {
        args.mode = p.get("directory_mode").clone();
    }
    let changed = set_fs_attributes(&args, changed, None, check)?;
    r.insert("changed".into(), changed.into());
    Ok(r)
}

fn common_args(p: &Params, path: &str, follow: bool) -> FileArgs {
    let path = if follow && islink(path) { realpath(path) } else { path.to_string() };
    FileArgs {
        path,
        mode: p.get("mode").clone(),
        owner: p.str("owner").map(str::to_string),
        group: p.str("group").map(str::to_string),
        attributes: p.str("attributes").map(str::to_string),
    }
}

/// `split_pre_existing_dir`: the deepest existing ancestor and the directories to make.
fn split_pre_existing(dir: &str) -> (String, Vec<String>) {
    let (head, tail) = match dir.rfind('/') {
        Some(i) => (dir[..i].trim_end_matches('/').to_string(), dir[i + 1..].to_string()),
        None => (String::new(), dir.to_string()),
    };
    let head = if head.is_empty() && dir.starts_with('/') { "/".to_string() } else { head };
    if head.is_empty() {
        return (".".into(), vec![tail]);
    }
    if exists(&head) {
        return (head, vec![tail]);
    }
    let (pre, mut list) = split_pre_existing(&head);
    list.push(tail);
    (pre, list)
}

/// Runs `validate` on the file before it is put in place; a `timeout` (the task's, what is
/// left of it) stops it and fails the module with `timedout`, leaving `dest` as it was.
fn validate_src(validate: &str, src: &str, timeout: Option<u64>) -> Outcome<()> {
    if !validate.contains("%s") {
        return Err(fail(format!("validate must contain %s: {validate}")));
    }
    let line = validate.replace("%s", src);
    let argv = super::common::shlex_split(&line).unwrap_or_default();
    if argv.is_empty() {
        return Err(fail("failed to validate"));
    }
    let none = std::collections::BTreeMap::new();
    let env = super::environment::TaskEnv(&none);
    match super::command::spawn(&argv, None, None, &env, timeout) {
        Ok((0, _, _)) => Ok(()),
        Ok((rc, stdout, stderr)) => Err(with(
            fail("failed to validate"),
            &[("exit_status", rc.into()), ("stdout", stdout.into()), ("stderr", stderr.into())],
        )),
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            let mut r = ModuleResult::new();
            r.insert("failed".into(), Value::Bool(true));
            let mut period = serde_json::Map::new();
            period.insert("period".into(), Value::from(timeout.unwrap_or_default()));
            r.insert("timedout".into(), Value::Object(period));
            Err(r)
        }
        Err(e) => Err(fail(format!("failed to validate: {e}"))),
    }
}

fn umask() -> u32 {
    // SAFETY: umask has no preconditions; the original mask is restored at once.
    unsafe {
        let m = libc::umask(0);
        libc::umask(m);
        m
    }
}

/// `atomic_move` of the source into `dest`: an upload is renamed into place taking the old
/// file's mode and owner; a `remote_src` file is copied (with its own mode and times) first.
pub(super) fn place(src: &str, dest: &str, remote_src: bool) -> std::io::Result<()> {
    let existing = std::fs::metadata(dest).ok();
    let creating = existing.is_none();
    let moving = if remote_src {
        let tmp = join(&dirname(dest), &format!("tmp{}", super::tempname::random_part()));
        std::fs::copy(src, &tmp)?;
        let st = std::fs::metadata(src)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(st.mode() & 0o7777))?;
        let f = std::fs::File::options().write(true).open(&tmp)?;
        f.set_times(
            std::fs::FileTimes::new().set_accessed(st.accessed()?).set_modified(st.modified()?),
        )?;
        tmp
    } else {
        src.to_string()
    };
    if let (Some(st), false) = (&existing, remote_src) {
        let _ = std::os::unix::fs::chown(&moving, Some(st.uid()), Some(st.gid()));
        std::fs::set_permissions(&moving, std::fs::Permissions::from_mode(st.mode() & 0o7777))?;
    }
    if let Err(e) = std::fs::rename(&moving, dest) {
        let retry = [libc::EPERM, libc::EXDEV, libc::EACCES, libc::ETXTBSY, libc::EBUSY];
        if !e.raw_os_error().is_some_and(|c| retry.contains(&c)) {
            if remote_src {
                let _ = std::fs::remove_file(&moving);
            }
            return Err(e);
        }
        // Another filesystem (the upload's) or a busy target: copy beside the destination
        // and rename from there, as atomic_move does; the source is moved, so it goes.
        let tmp = join(&dirname(dest), &format!(".ansible_tmp{}", super::tempname::random_part()));
        let copied = std::fs::copy(&moving, &tmp).and_then(|_| std::fs::rename(&tmp, dest));
        let _ = std::fs::remove_file(&moving);
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    }
    if creating {
        std::fs::set_permissions(dest, std::fs::Permissions::from_mode(0o666 & !umask()))?;
    }
    Ok(())
}
