//! Pieces every module's result shares: failures, ansible's warning and error summaries,
//! timestamps as Python prints them, `shlex.split`. Owns formatting only.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::ModuleResult;

/// `fail_json(msg=...)` with no other keys.
pub(super) fn fail(msg: impl Into<String>) -> ModuleResult {
    let mut r = Map::new();
    r.insert("failed".into(), Value::Bool(true));
    r.insert("msg".into(), Value::from(msg.into()));
    r
}

/// A module that raised `message` (an exception it did not catch): ansible's module loader
/// reports it without a `msg`, and the controller words it ("Module failed: ...").
pub(super) fn raised(message: &str) -> ModuleResult {
    let mut r = ModuleResult::new();
    r.insert("failed".into(), Value::Bool(true));
    r.insert(
        "exception".into(),
        json!({"event": {"msg": message, "__ansible_type": "Event"}, "__ansible_type": "ErrorSummary"}),
    );
    r
}

/// Marks `result` failed with `msg`, keeping its other keys (as `fail_json(**r)`).
pub(super) fn failed(mut result: ModuleResult, msg: impl Into<String>) -> ModuleResult {
    result.insert("failed".into(), Value::Bool(true));
    result.insert("msg".into(), Value::from(msg.into()));
    result
}

/// The `exception` value ansible attaches when a failure was caused by an OS error.
pub(super) fn error_summary(msg: &str, cause: &str) -> Value {
    json!({"event": {"msg": msg, "chain": {"msg_reason": "<<< caused by >>>",
        "traceback_reason": "The above exception was the direct cause of the following error:",
        "event": {"msg": cause, "__ansible_type": "Event"}, "follow": true,
        "__ansible_type": "EventChain"}, "__ansible_type": "Event"}, "__ansible_type": "ErrorSummary"})
}

/// `fail_json(msg, exception=err, **extra)`.
pub(super) fn fail_with_cause(mut result: ModuleResult, msg: &str, cause: &str) -> ModuleResult {
    result.insert("failed".into(), Value::Bool(true));
    result.insert("msg".into(), Value::from(msg));
    result.insert("exception".into(), error_summary(msg, cause));
    result
}

/// Adds a `module.warn(msg)` to the result's `warnings`.
pub(super) fn warn(result: &mut ModuleResult, msg: &str) {
    let entry = json!({"event": {"msg": msg, "__ansible_type": "Event"}, "__ansible_type": "WarningSummary"});
    match result.get_mut("warnings") {
        Some(Value::Array(list)) => list.push(entry),
        _ => {
            result.insert("warnings".into(), Value::Array(vec![entry]));
        }
    }
}

/// `at` broken down in local time, or in UTC, and its microseconds.
fn broken_down(at: SystemTime, utc: bool) -> (libc::tm, u32) {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    // On musl, libc marks `time_t` deprecated ahead of its change to 64 bits; the seconds
    // since 1970 fit either width.
    #[allow(deprecated)]
    let secs = since.as_secs() as libc::time_t;
    // SAFETY: a zeroed tm is a valid out-parameter for localtime_r and gmtime_r.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals.
    unsafe {
        if utc {
            libc::gmtime_r(&secs, &mut tm);
        } else {
            libc::localtime_r(&secs, &mut tm);
        }
    }
    (tm, since.subsec_micros())
}

fn calendar(tm: &libc::tm, micros: u32, separator: char) -> String {
    format!(
        "{:04}-{:02}-{:02}{separator}{:02}:{:02}:{:02}.{:06}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        micros
    )
}

/// `str(datetime.datetime.now())` in local time.
pub fn timestamp(at: SystemTime) -> String {
    let (tm, micros) = broken_down(at, false);
    calendar(&tm, micros, ' ')
}

/// `datetime.now(timezone.utc).isoformat()`, as ansible's JSON shows an aware datetime.
pub fn utc_isoformat(at: SystemTime) -> String {
    let (tm, micros) = broken_down(at, true);
    format!("{}+00:00", calendar(&tm, micros, 'T'))
}

/// `str(timedelta)` for a run's duration.
pub(super) fn delta(d: Duration) -> String {
    let secs = d.as_secs();
    format!("{}:{:02}:{:02}.{:06}", secs / 3600, (secs / 60) % 60, secs % 60, d.subsec_micros())
}

/// Python's `shlex.split` (POSIX mode, comments off). `None` for an unclosed quote or a
/// trailing escape, where Python raises.
pub(super) fn shlex_split(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                cur.push(chars.next()?);
                in_word = true;
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('\\' | '"' | '$' | '`' | '\n') => cur.push(c),
                            c => {
                                cur.push('\\');
                                cur.push(c);
                            }
                        },
                        c => cur.push(c),
                    }
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Some(out)
}

/// `run_command`'s ending: the finished command as (rc, stdout, stderr), or the failure
/// ansible reports when it could not be started (`rc` the OS error, `cmd` the arguments).
pub(super) fn command_output(
    cmd: &mut std::process::Command,
    argv: &[String],
) -> Result<(i32, String, String), ModuleResult> {
    match cmd.output() {
        Ok(o) => Ok((
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )),
        Err(err) => {
            let mut f = ModuleResult::new();
            f.insert("rc".into(), Value::from(err.raw_os_error().unwrap_or(257)));
            f.insert("stdout".into(), Value::from(""));
            f.insert("stderr".into(), Value::from(""));
            f.insert("cmd".into(), Value::from(super::command::clean_args(argv)));
            let program = argv.first().map_or("", String::as_str);
            Err(fail_with_cause(
                f,
                "Error executing command.",
                &tack_py::oserror::os_error_bytes(&err, program.as_bytes()),
            ))
        }
    }
}

/// `get_best_parsable_locale`: the first of ansible's preferred locales `locale -a` lists,
/// else `C`.
pub(super) fn best_parsable_locale() -> String {
    let path = super::environment::var("PATH").unwrap_or_default();
    let mut dirs: Vec<&str> = path.split(':').filter(|d| !d.is_empty()).collect();
    for extra in ["/sbin", "/usr/sbin", "/usr/local/sbin"] {
        if !dirs.contains(&extra) {
            dirs.push(extra);
        }
    }
    let Some(locale) =
        dirs.iter().map(|d| format!("{}/locale", d.trim_end_matches('/'))).find(|p| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    else {
        return "C".into();
    };
    let listed = match super::environment::command(&locale).arg("-a").output() {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => {
            String::from_utf8_lossy(&o.stdout).into_owned()
        }
        _ => return "C".into(),
    };
    let available: Vec<&str> = listed.trim().lines().collect();
    ["C.utf8", "C.UTF-8", "en_US.utf8", "en_US.UTF-8", "C", "POSIX"]
        .into_iter()
        .find(|p| available.contains(p))
        .unwrap_or("C")
        .to_string()
}
