//! `ansible.builtin.stat`: facts about one path (never changes anything). MIME data comes
//! from the `file` command and attributes from `lsattr`, as in ansible, when they exist.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use serde_json::{Map, Value};

use super::argspec::{Kind, Opt, Spec};
use super::common::{error_summary, fail};
use super::fsattr::{attr_flags, attribute_names};
use super::{Ctx, Invocation, ModuleResult, digest, host, paths};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("path", Kind::Path).required().aliases(&["dest", "name"]),
            Opt::new("follow", Kind::Bool).default(false),
            Opt::new("get_checksum", Kind::Bool).default(true),
            Opt::new("get_mime", Kind::Bool).default(true).aliases(&[
                "mime",
                "mime_type",
                "mime-type",
            ]),
            Opt::new("get_attributes", Kind::Bool).default(true).aliases(&["attr", "attributes"]),
            Opt::new("get_selinux_context", Kind::Bool).default(false),
            Opt::new("checksum_algorithm", Kind::Str)
                .default("sha1")
                .choices(&["md5", "sha1", "sha224", "sha256", "sha384", "sha512"])
                .aliases(&["checksum", "checksum_algo"]),
        ],
        ..Spec::default()
    }
}

fn access(path: &str, mode: i32) -> bool {
    let Ok(c) = CString::new(Path::new(path).as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is a valid NUL-terminated path for the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

fn float_time(secs: i64, nsec: i64) -> Value {
    Value::from(secs as f64 + nsec as f64 / 1e9)
}

/// The keys ansible's `stat` and `find` both report for a file, from its metadata: its path,
/// mode and type, ownership numbers, size, inode, times, permission bits and blocks.
/// Where a result's keys go, one by one, in order.
pub(super) type Put<'p> = dyn FnMut(&str, Value) + 'p;

pub(super) fn common_keys(put: &mut Put<'_>, path: &str, st: &std::fs::Metadata) {
    common_keys_with(put, path, st, &mut |_| {});
}

/// [`common_keys`], with `after_times` adding its own keys right after `ctime` (where
/// `find`'s `statinfo` puts the owner's names).
pub(super) fn common_keys_with(
    put: &mut Put<'_>,
    path: &str,
    st: &std::fs::Metadata,
    after_times: &mut dyn FnMut(&mut Put<'_>),
) {
    let mode = st.mode();
    let ft = st.file_type();
    put("path", path.into());
    put("mode", format!("{:04o}", mode & 0o7777).into());
    put("isdir", ft.is_dir().into());
    put("ischr", ft.is_char_device().into());
    put("isblk", ft.is_block_device().into());
    put("isreg", ft.is_file().into());
    put("isfifo", ft.is_fifo().into());
    put("islnk", ft.is_symlink().into());
    put("issock", ft.is_socket().into());
    put("uid", st.uid().into());
    put("gid", st.gid().into());
    put("size", st.size().into());
    put("inode", st.ino().into());
    put("dev", st.dev().into());
    put("nlink", st.nlink().into());
    put("atime", float_time(st.atime(), st.atime_nsec()));
    put("mtime", float_time(st.mtime(), st.mtime_nsec()));
    put("ctime", float_time(st.ctime(), st.ctime_nsec()));
    after_times(put);
    for (k, bit) in [
        ("wusr", 0o200),
        ("rusr", 0o400),
        ("xusr", 0o100),
        ("wgrp", 0o020),
        ("rgrp", 0o040),
        ("xgrp", 0o010),
        ("woth", 0o002),
        ("roth", 0o004),
        ("xoth", 0o001),
        ("isuid", 0o4000),
        ("isgid", 0o2000),
    ] {
        put(k, (mode & bit != 0).into());
    }
    put("blocks", st.blocks().into());
    put("disk_usage_bytes", (st.blocks() * 512).into());
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    if p.bool("get_selinux_context") && Path::new("/sys/fs/selinux/enforce").exists() {
        return fail(
            "tack does not read SELinux contexts: option 'get_selinux_context' is not supported",
        );
    }
    let path = p.str("path").unwrap_or_default().to_string();
    let meta =
        if p.bool("follow") { std::fs::metadata(&path) } else { std::fs::symlink_metadata(&path) };
    let mut result = ModuleResult::new();
    result.insert("changed".into(), Value::Bool(false));
    let st = match meta {
        Ok(st) => st,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut out = Map::new();
            out.insert("exists".into(), Value::Bool(false));
            result.insert("stat".into(), Value::Object(out));
            return result;
        }
        Err(e) => {
            let msg = tack_py::oserror::strerror_code(e.raw_os_error().unwrap_or(0));
            let mut r = fail(&msg);
            r.insert(
                "exception".into(),
                error_summary(&msg, &tack_py::oserror::os_error_bytes(&e, str::as_bytes(&path))),
            );
            return r;
        }
    };
    let ft = st.file_type();
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    put("exists", true.into());
    common_keys(&mut put, &path, &st);
    put("block_size", st.blksize().into());
    put("device_type", st.rdev().into());
    put("readable", access(&path, libc::R_OK).into());
    put("writeable", access(&path, libc::W_OK).into());
    put("executable", access(&path, libc::X_OK).into());
    if ft.is_symlink() {
        put("lnk_source", paths::realpath(&path).into());
        put(
            "lnk_target",
            std::fs::read_link(&path)
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default()
                .into(),
        );
    }
    if let Some(name) = host::user_name(st.uid()) {
        put("pw_name", name.into());
    }
    if let Some(name) = host::group_name(st.gid()) {
        put("gr_name", name.into());
    }
    if ft.is_file() && o.get("readable") == Some(&Value::Bool(true)) && p.bool("get_checksum") {
        let algo = p.str("checksum_algorithm").unwrap_or("sha1");
        match digest::file_digest(&path, algo) {
            Some(Ok(sum)) => {
                o.insert("checksum".into(), sum.into());
            }
            Some(Err(e)) => {
                return fail(format!("Could not hash file '{path}' with algorithm '{algo}': {e}"));
            }
            None => {
                return fail(format!(
                    "Could not hash file '{path}' with algorithm '{algo}'. Available algorithms: md5, sha1, sha224, sha256, sha384, sha512"
                ));
            }
        }
    }
    if p.bool("get_mime") {
        let (mut mimetype, mut charset) = ("unknown".to_string(), "unknown".to_string());
        if let Ok(out) = super::environment::command("file")
            .args(["--mime-type", "--mime-encoding"])
            .arg(&path)
            .output()
            && out.status.success()
        {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if let Some((_, tail)) = text.rsplit_once(':')
                && let [m, c] = tail.split(';').collect::<Vec<_>>()[..]
                && let Some((_, cs)) = c.split_once('=')
            {
                mimetype = m.trim().to_string();
                charset = cs.split('=').next().unwrap_or(cs).trim().to_string();
            }
        }
        o.insert("mimetype".into(), mimetype.into());
        o.insert("charset".into(), charset.into());
    }
    if p.bool("get_attributes") {
        let (version, flags) = match attr_flags(&path, true) {
            Some((v, f)) => (v.map(Value::from).unwrap_or(Value::Null), Some(f)),
            None => (Value::Null, None),
        };
        o.insert("version".into(), version);
        o.insert(
            "attributes".into(),
            Value::Array(flags.as_deref().map(attribute_names).unwrap_or_default()),
        );
        o.insert("attr_flags".into(), flags.unwrap_or_default().into());
    }
    if p.bool("get_selinux_context") {
        // SELinux is disabled here (checked above): ansible's initial, empty context.
        o.insert("selinux_context".into(), Value::Array(vec![Value::Null; 3]));
    }
    result.insert("stat".into(), Value::Object(o));
    result
}
