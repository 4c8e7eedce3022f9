//! Text files as ansible's line-editing modules read and write them: universal-newline
//! reading, atomic replacement keeping the old file's mode and owner (a new file gets
//! 0666 less the umask, as `atomic_move` does), dated backups, and the attribute step
//! (`check_file_attrs`). Writes only the destination file and its backup.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use serde_json::{Map, Value};

use super::argspec::Params;
use super::common::{fail, timestamp};
use super::fsattr::{FileArgs, Outcome, set_fs_attributes};
use super::paths::{dirname, islink, join, realpath};

/// The module's `encoding` as a codec tack can read and write (`tack_py::codecs`: UTF-8,
/// ASCII, Latin-1 and the single-byte code pages), or the failure: Python's own for a name no
/// codec has, tack's refusal for one it does not implement.
pub(super) fn text_codec(p: &Params) -> Outcome<String> {
    let name = p.str("encoding").unwrap_or("utf-8").to_string();
    match tack_py::codecs::decode(&name, b"") {
        Ok(_) => Ok(name),
        Err(tack_py::codecs::DecodeError::Unsupported { .. }) => Err(fail(format!(
            "tack reads and writes text as UTF-8 and single-byte encodings only: encoding \
             '{name}' is not supported"
        ))),
        // Python's `open()` raises for a name no codec has; the module does not catch it.
        Err(e) => Err(super::common::raised(&e.to_string())),
    }
}

/// `bytes` read as text in `codec` (from [`text_codec`]); an undecodable byte raises, as
/// Python's text read does.
pub(super) fn decode(codec: &str, bytes: &[u8]) -> Outcome<String> {
    tack_py::codecs::decode(codec, bytes).map_err(|e| super::common::raised(&e.to_string()))
}

/// `text` as `codec` (from [`text_codec`]) writes it; an unencodable character raises.
pub(super) fn encode(codec: &str, text: &str) -> Outcome<Vec<u8>> {
    tack_py::codecs::encode(codec, text).map_err(|e| super::common::raised(&e.to_string()))
}

/// Python's text-mode read (`newline=None`): `\r\n` and `\r` become `\n`.
pub(super) fn read_text(path: &str) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// `str.splitlines(keepends=True)` as `readlines()` splits text-mode content.
pub(super) fn lines_of(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_string).collect()
}

fn umask() -> u32 {
    // SAFETY: umask has no preconditions; the original mask is restored at once.
    unsafe {
        let m = libc::umask(0);
        libc::umask(m);
        m
    }
}

/// Replaces `dest` (through symlinks) with `content` atomically. When the rename cannot be
/// done (a busy or bind-mounted file) and `unsafe_writes` allows it, the content is written
/// into the file in place, as ansible's `_unsafe_writes` does.
pub(super) fn write_atomic(dest: &str, content: &[u8], unsafe_writes: bool) -> std::io::Result<()> {
    let target = realpath(dest);
    let existing = std::fs::metadata(&target).ok();
    let dir = dirname(&target);
    let tmp =
        join(&dir, &format!(".tack-tmp-{}-{}", std::process::id(), super::tempname::random_part()));
    let result = (|| {
        let mut f =
            std::fs::OpenOptions::new().write(true).create_new(true).mode_private().open(&tmp)?;
        f.write_all(content)?;
        f.sync_all()?;
        drop(f);
        let mode = match &existing {
            Some(m) => m.mode() & 0o7777,
            None => 0o666 & !umask(),
        };
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
        if let Some(m) = &existing {
            let _ = std::os::unix::fs::chown(&tmp, Some(m.uid()), Some(m.gid()));
        }
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        let fallback = [libc::EPERM, libc::EXDEV, libc::EACCES, libc::ETXTBSY, libc::EBUSY];
        if unsafe_writes && e.raw_os_error().is_some_and(|c| fallback.contains(&c)) {
            return std::fs::write(&target, content);
        }
        return Err(e);
    }
    Ok(())
}

trait PrivateOpen {
    fn mode_private(&mut self) -> &mut Self;
}

impl PrivateOpen for std::fs::OpenOptions {
    fn mode_private(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.mode(0o600)
    }
}

/// `backup_local`: a copy named `DEST.PID.YYYY-MM-DD@HH:MM:SS~` keeping mode and times.
pub(super) fn backup_local(dest: &str, check: bool) -> Outcome<String> {
    if !super::paths::exists(dest) {
        return Ok(String::new());
    }
    let stamp = timestamp(std::time::SystemTime::now());
    let (date, time) = stamp.split_once(' ').unwrap_or((&stamp, ""));
    let backup = format!("{dest}.{}.{date}@{}~", std::process::id(), time.get(..8).unwrap_or(time));
    if !check {
        let copy = || -> std::io::Result<()> {
            std::fs::copy(dest, &backup)?;
            let st = std::fs::metadata(dest)?;
            std::fs::set_permissions(&backup, std::fs::Permissions::from_mode(st.mode() & 0o7777))?;
            let _ = std::os::unix::fs::chown(&backup, Some(st.uid()), Some(st.gid()));
            let f = std::fs::File::options().write(true).open(&backup)?;
            f.set_times(
                std::fs::FileTimes::new().set_accessed(st.accessed()?).set_modified(st.modified()?),
            )?;
            Ok(())
        };
        copy().map_err(|_| fail(format!("Could not make backup of '{dest}' to '{backup}'.")))?;
    }
    Ok(backup)
}

/// `check_file_attrs`: applies the file options and extends the message as ansible does.
pub(super) fn check_file_attrs(
    p: &Params,
    dest: &str,
    changed: bool,
    msg: &str,
    diff: &mut Map<String, Value>,
    check: bool,
) -> Outcome<(String, bool)> {
    let path = if p.bool("follow") && islink(dest) { realpath(dest) } else { dest.to_string() };
    let args = FileArgs {
        path,
        mode: p.get("mode").clone(),
        owner: p.str("owner").map(str::to_string),
        group: p.str("group").map(str::to_string),
        attributes: p.str("attributes").map(str::to_string),
    };
    let mut msg = msg.to_string();
    let mut changed = changed;
    if set_fs_attributes(&args, false, Some(diff), check)? {
        if changed {
            msg.push_str(" and ");
        }
        changed = true;
        msg.push_str("ownership, perms or SE linux context changed");
    }
    Ok((msg, changed))
}
