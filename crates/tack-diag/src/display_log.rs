//! ansible's `log_path`: every message the run displays is also appended to a file, one
//! record per message, as ansible's `Display` hands each to Python's `logging`:
//! `2026-12-05 09:10:11,123 p=PID u=USER n=ansible LEVEL| message` (the message without
//! its colours and leading newlines; a multi-line message stays one record, and one that
//! ends in a newline leaves a blank line after it, as ansible's do).
//!
//! This module owns the file and the record's shape only. What counts as a message, and its
//! level, is the caller's: the callbacks log their lines at `INFO` (a screen-only line, such
//! as the blank line after the recap, is not logged), warnings log at `WARNING`, `[ERROR]`
//! blocks at `ERROR`, deprecations at `INFO`, as ansible's `display`, `warning`, `error` and
//! `deprecated` do.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// A record's level, as Python's `logging` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warning => "WARNING",
            Level::Error => "ERROR",
        }
    }
}

struct Log {
    file: File,
    /// The record's prefix after the time: `p=PID u=USER n=ansible `.
    who: String,
}

static LOG: Mutex<Option<Log>> = Mutex::new(None);

/// Starts logging to `path` as ansible does at start-up, when `log_path` is set, each record
/// naming `user` (the caller's `getpass.getuser()`). `deny` is `log_filter`: logger names
/// whose records are dropped (every display record is the `ansible` logger's). What ansible prints instead of logging (the path is a directory, or
/// neither it nor its directory is writable) is returned, for the caller to print on stderr
/// as it is; the run goes on without a log then.
pub fn open(path: &Path, deny: &[String], user: &str) -> Result<(), String> {
    let exists = path.exists();
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let writable = (exists && access_w(path)) || access_w(parent);
    if !writable {
        return Err(format!(
            "[WARNING]: log file at '{}' is not writeable and we cannot create it, aborting\n\n",
            path.display()
        ));
    }
    if path.is_dir() {
        return Err(format!(
            "[WARNING]: DEFAULT_LOG_PATH can not be a directory '{}', aborting\n",
            path.display()
        ));
    }
    // Python's `logging.Filter(name)` passes the logger called `name` and its children; an
    // empty name passes every logger.
    let denied = deny.iter().any(|name| name.is_empty() || name == "ansible");
    let file = OpenOptions::new().append(true).create(true).open(path).map_err(|e| {
        format!("[WARNING]: log file at '{}' could not be opened: {e}\n", path.display())
    })?;
    if denied {
        return Ok(());
    }
    let who = format!("p={} u={user} n=ansible ", std::process::id());
    *LOG.lock().unwrap_or_else(PoisonError::into_inner) = Some(Log { file, who });
    Ok(())
}

/// Whether a log is open (so callers may skip building what they would log).
pub fn active() -> bool {
    LOG.lock().unwrap_or_else(PoisonError::into_inner).is_some()
}

/// Appends one record for `message`, when a log is open.
pub fn record(level: Level, message: &str) {
    let mut log = LOG.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(log) = log.as_mut() else { return };
    let plain = strip_colours(message);
    // Only leading newlines go (ansible's `lstrip('\n')`); a block's own trailing newline
    // stays, before the one every record ends with.
    let text = plain.trim_start_matches('\n');
    let line = format!("{} {}{}| {text}\n", asctime(SystemTime::now()), log.who, level.name());
    // A log that cannot be written is not worth failing the run over; ansible's logging
    // reports such errors on stderr and carries on.
    if let Err(e) = log.file.write_all(line.as_bytes()) {
        let _ = writeln!(std::io::stderr(), "--- Logging error ---\n{e}");
    }
}

/// `log_verbosity` above the run's `-v` count: the `-v` level up to which a verbose line the
/// screen does not show is logged anyway (0: none). Set once the count is known.
static LOGGED_VERBOSITY: AtomicU8 = AtomicU8::new(0);

/// Takes the run's `-v` count (`shown`) and the `log_verbosity` setting: ansible's `Display`
/// logs a verbose line a second time, log only, when `log_verbosity` is above both the run's
/// count and the line's level (`Display.verbose`), whether the screen showed it or not.
pub fn set_verbosity(shown: u8, configured: Option<i64>) {
    let wanted = configured.map_or(0, |v| u8::try_from(v.clamp(0, 255)).unwrap_or(u8::MAX));
    LOGGED_VERBOSITY.store(if wanted > shown { wanted } else { 0 }, Ordering::Relaxed);
}

/// The `-v` count up to which verbose lines must be made: the run's own, or the log's when
/// it is higher and a log is open (the lines it logs must exist to be logged).
pub fn noted_verbosity(shown: u8) -> u8 {
    let logged = LOGGED_VERBOSITY.load(Ordering::Relaxed);
    if logged > shown && active() { logged } else { shown }
}

/// A verbose line of `-v` level `level` (shown from `level` `-v`s): logged once more, log
/// only, when `log_verbosity` reaches it. The caller shows and logs it as any line when the
/// run's own count reaches it, and calls this either way, as ansible's `Display.verbose`
/// does both.
pub fn verbose(level: u8, message: &str) {
    let logged = LOGGED_VERBOSITY.load(Ordering::Relaxed);
    // Level 0 is a line every run shows: not a verbose one.
    if level != 0 && level <= logged {
        record(Level::Info, message);
    }
}

/// `Display.verbose` for a caller that prints the line itself: logs `message` (of `-v` level
/// `level`) as a shown line when the run's count `shown` reaches it, once more when
/// `log_verbosity` does, and says whether to print it.
pub fn verbose_shown(level: u8, shown: u8, message: &str) -> bool {
    let show = shown >= level;
    if show {
        record(Level::Info, message);
    }
    verbose(level, message);
    show
}

/// Stops logging (for a process that runs several independent jobs, and tests).
pub fn close() {
    *LOG.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

fn access_w(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// `logging`'s `asctime`: local time as `%Y-%m-%d %H:%M:%S,mmm`.
fn asctime(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    // On musl, libc marks `time_t` deprecated ahead of its change to 64 bits; the seconds
    // since 1970 fit either width.
    #[allow(deprecated)]
    let secs = since.as_secs() as libc::time_t;
    // SAFETY: a zeroed tm is a valid out-parameter for localtime_r.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals.
    unsafe {
        libc::localtime_r(&secs, &mut tm);
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02},{:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        since.subsec_millis()
    )
}

/// The text without the SGR colour sequences (`ESC [ ... m`) a palette painted in: ansible
/// logs the message before colouring it.
fn strip_colours(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if after[end..].starts_with('m') => rest = &after[end + 1..],
            _ => {
                out.push_str("\u{1b}[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_not_logged() {
        assert_eq!(strip_colours("\u{1b}[0;32mok: [h]\u{1b}[0m"), "ok: [h]");
        assert_eq!(strip_colours("plain"), "plain");
        assert_eq!(strip_colours("a\u{1b}[xb"), "a\u{1b}[xb");
    }

    #[test]
    fn the_time_is_python_logging_s() {
        let text = asctime(UNIX_EPOCH + std::time::Duration::from_millis(1_234));
        // `YYYY-MM-DD HH:MM:SS,mmm`, whatever the local zone.
        assert_eq!(text.len(), 23, "{text}");
        assert!(text.ends_with(",234"), "{text}");
    }

    #[test]
    fn records_are_appended_in_ansible_s_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        open(&path, &[], "someone").unwrap();
        record(Level::Info, "\nTASK [x] ****");
        record(Level::Warning, "[WARNING]: careful\n");
        close();
        let text = std::fs::read_to_string(&path).unwrap();
        // Other tests of this crate may log while the file is open: only these two are
        // looked for.
        let task = text.lines().find(|l| l.contains("TASK [x]")).unwrap();
        let warning = text.lines().find(|l| l.contains("careful")).unwrap();
        let pid = std::process::id();
        assert!(task.contains(&format!(" p={pid} u=someone ")), "{text}");
        assert!(task.ends_with(" n=ansible INFO| TASK [x] ****"), "{text}");
        assert!(warning.ends_with(" n=ansible WARNING| [WARNING]: careful"), "{text}");
        assert!(text.contains("careful\n\n"), "{text}");
        // A directory is refused in ansible's words.
        assert_eq!(
            open(dir.path(), &[], "someone").unwrap_err(),
            format!(
                "[WARNING]: DEFAULT_LOG_PATH can not be a directory '{}', aborting\n",
                dir.path().display()
            )
        );
    }
}
