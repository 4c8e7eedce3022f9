//! ansible's `set_fs_attributes_if_different` and its parts: owner, group, mode (octal or
//! symbolic), `chattr` attributes, and file times, each reported in the diff as ansible does.
//! Changes only the one path it is given (never follows into directories).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::common::fail;
use super::{ModuleResult, host};

/// The file options of `load_file_common_arguments`.
#[derive(Debug, Clone, Default)]
pub(super) struct FileArgs {
    pub path: String,
    pub mode: Value,
    pub owner: Option<String>,
    pub group: Option<String>,
    pub attributes: Option<String>,
}

/// Failures carry ansible's whole failure result.
pub(super) type Outcome<T> = Result<T, ModuleResult>;

fn fail_at(path: &str, msg: &str) -> ModuleResult {
    let mut r = Map::new();
    r.insert("path".into(), Value::from(path));
    r.extend(fail(msg));
    r
}

fn record(diff: &mut Option<&mut Map<String, Value>>, key: &str, before: Value, after: Value) {
    let Some(d) = diff.as_deref_mut() else { return };
    for (which, value) in [("before", before), ("after", after)] {
        let entry = d.entry(which.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(side) = entry {
            side.insert(key.into(), value);
        }
    }
}

fn cpath(path: &str) -> Option<CString> {
    CString::new(Path::new(path).as_os_str().as_bytes()).ok()
}

fn lchown(path: &str, uid: u32, gid: u32) -> std::io::Result<()> {
    let c = cpath(path).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let rc = unsafe { libc::lchown(c.as_ptr(), uid, gid) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

fn absent_in_check(check: bool, path: &str) -> bool {
    check && !Path::new(path).exists()
}

pub(super) fn set_owner(
    path: &str,
    owner: Option<&str>,
    changed: bool,
    diff: &mut Option<&mut Map<String, Value>>,
    check: bool,
) -> Outcome<bool> {
    let Some(owner) = owner else { return Ok(changed) };
    if absent_in_check(check, path) {
        return Ok(true);
    }
    let st = std::fs::symlink_metadata(path).map_err(|_| fail_at(path, "chown failed"))?;
    let uid = match owner.trim().parse::<u32>() {
        Ok(uid) => uid,
        Err(_) => host::uid_of(owner).ok_or_else(|| {
            fail_at(path, &format!("chown failed: failed to look up user {owner}"))
        })?,
    };
    if st.uid() == uid {
        return Ok(changed);
    }
    record(diff, "owner", Value::from(st.uid()), Value::from(uid));
    if check {
        return Ok(true);
    }
    lchown(path, uid, u32::MAX).map_err(|e| {
        let mut r = fail_at(path, "chown failed");
        r.insert(
            "exception".into(),
            super::common::error_summary(
                "chown failed",
                &tack_py::oserror::os_error_bytes(&e, str::as_bytes(path)),
            ),
        );
        r
    })?;
    Ok(true)
}

pub(super) fn set_group(
    path: &str,
    group: Option<&str>,
    changed: bool,
    diff: &mut Option<&mut Map<String, Value>>,
    check: bool,
) -> Outcome<bool> {
    let Some(group) = group else { return Ok(changed) };
    if absent_in_check(check, path) {
        return Ok(true);
    }
    let st = std::fs::symlink_metadata(path).map_err(|_| fail_at(path, "chgrp failed"))?;
    let gid = match group.trim().parse::<u32>() {
        Ok(gid) => gid,
        Err(_) => host::gid_of(group).ok_or_else(|| {
            fail_at(path, &format!("chgrp failed: failed to look up group {group}"))
        })?,
    };
    if st.gid() == gid {
        return Ok(changed);
    }
    record(diff, "group", Value::from(st.gid()), Value::from(gid));
    if check {
        return Ok(true);
    }
    lchown(path, u32::MAX, gid).map_err(|_| fail_at(path, "chgrp failed"))?;
    Ok(true)
}

fn current_umask() -> u32 {
    // Read, not swapped: umask(2) can only be read by setting it, and for that instant a file
    // another thread creates (hosts run modules side by side under `forks`) would get the
    // mask 0. Linux states the mask in /proc since 4.7.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let stated = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok());
    stated.unwrap_or_else(|| {
        // SAFETY: umask has no preconditions; the original mask is restored at once. Only
        // where /proc is missing, and with the instant's risk above.
        unsafe {
            let m = libc::umask(0);
            libc::umask(m);
            m
        }
    })
}

/// `_symbolic_mode_to_octal`: chmod's symbolic syntax applied to the file's current mode.
pub(super) fn symbolic_mode(st_mode: u32, is_dir: bool, symbolic: &str) -> Result<u32, String> {
    let mut mode = st_mode & 0o7777;
    for clause in symbolic.split(',') {
        let ops: Vec<(usize, char)> =
            clause.char_indices().filter(|(_, c)| "+=-".contains(*c)).collect();
        let users_end = ops.first().map(|(i, _)| *i).unwrap_or(clause.len());
        let users_raw = &clause[..users_end];
        let use_umask = users_raw.is_empty();
        let users = if users_raw == "a" || users_raw.is_empty() { "ugo" } else { users_raw };
        if !users.chars().all(|c| "ugo".contains(c)) || users.is_empty() {
            return Err(format!("bad symbolic permission for mode: {clause}"));
        }
        for (n, (at, op)) in ops.iter().enumerate() {
            let end = ops.get(n + 1).map(|(i, _)| *i).unwrap_or(clause.len());
            let perms = &clause[at + 1..end];
            if !perms.chars().all(|c| "rwxXstugo".contains(c)) {
                return Err(format!("bad symbolic permission for mode: {clause}"));
            }
            for user in users.chars() {
                let apply = perm_bits(mode, is_dir, user, perms, use_umask);
                mode = match op {
                    '=' => {
                        let mask = match user {
                            'u' => 0o4700,
                            'g' => 0o2070,
                            _ => 0o1007,
                        };
                        (mode & (mask ^ 0o7777)) | apply
                    }
                    '+' => mode | apply,
                    _ => mode - (mode & apply),
                };
            }
        }
        if ops.is_empty() {
            // ansible's split leaves no operator: nothing to apply for this clause.
            continue;
        }
    }
    Ok(mode)
}

fn perm_bits(prev: u32, is_dir: bool, user: char, perms: &str, use_umask: bool) -> u32 {
    let rev = current_umask() ^ 0o7777;
    let shift = match user {
        'u' => 6,
        'g' => 3,
        _ => 0,
    };
    let rwx = |bit: u32| {
        let b = bit << shift;
        if use_umask { rev & b } else { b }
    };
    let apply_x = is_dir || prev & 0o111 != 0;
    let copy = |from: u32| {
        let bits = (prev >> from) & 0o7;
        bits << shift
    };
    perms.chars().fold(0, |acc, p| {
        acc | match p {
            'r' => rwx(4),
            'w' => rwx(2),
            'x' => rwx(1),
            'X' if apply_x => 1 << shift,
            's' if user == 'u' => 0o4000,
            's' if user == 'g' => 0o2000,
            't' if user == 'o' => 0o1000,
            'u' => copy(6),
            'g' => copy(3),
            'o' => copy(0),
            _ => 0,
        }
    })
}

/// Python's `int(s, 8)`.
fn parse_octal(s: &str) -> Option<u32> {
    let t = s.trim();
    let t = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")).unwrap_or(t);
    let t = t.replace('_', "");
    if t.is_empty() {
        return None;
    }
    u32::from_str_radix(&t, 8).ok()
}

pub(super) fn set_mode(
    path: &str,
    mode: &Value,
    changed: bool,
    diff: &mut Option<&mut Map<String, Value>>,
    check: bool,
) -> Outcome<bool> {
    if mode.is_null() {
        return Ok(changed);
    }
    if absent_in_check(check, path) {
        return Ok(true);
    }
    let st = std::fs::symlink_metadata(path).map_err(|_| fail_at(path, "chmod failed"))?;
    let wanted = match mode {
        Value::Number(n) if n.is_u64() => n.as_u64().unwrap_or(0) as u32,
        Value::Bool(b) => u32::from(*b),
        Value::String(s) => match parse_octal(s) {
            Some(m) => m,
            None => {
                let m = symbolic_mode(st.mode(), st.is_dir(), s).map_err(|e| {
                    let mut r = fail_at(path, "mode must be in octal or symbolic form");
                    r.insert("details".into(), Value::from(e));
                    r
                })?;
                if m != m & 0o7777 {
                    let mut r =
                        fail_at(path, "Invalid mode supplied, only permission info is allowed");
                    r.insert("details".into(), Value::from(m));
                    return Err(r);
                }
                m
            }
        },
        other => {
            let mut r = fail_at(path, "mode must be in octal or symbolic form");
            r.insert(
                "details".into(),
                Value::from(format!("'{}' object has no attribute 'split'", py_type(other))),
            );
            return Err(r);
        }
    };
    let prev = st.mode() & 0o7777;
    if prev == wanted {
        return Ok(changed);
    }
    record(
        diff,
        "mode",
        Value::from(format!("0{prev:03o}")),
        Value::from(format!("0{wanted:03o}")),
    );
    if check {
        return Ok(true);
    }
    if st.file_type().is_symlink() {
        // Linux cannot change a symlink's own mode; ansible leaves it (and its target) be.
        return Ok(changed);
    }
    use std::os::unix::fs::PermissionsExt;
    if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted)) {
        let mut r = fail_at(path, "chmod failed");
        r.insert(
            "details".into(),
            Value::from(tack_py::oserror::os_error(&e, std::path::Path::new(path))),
        );
        return Err(r);
    }
    let now = std::fs::symlink_metadata(path).map(|m| m.mode() & 0o7777).unwrap_or(prev);
    Ok(changed || now != prev)
}

fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
        _ => "NoneType",
    }
}

/// `lsattr -d`: the flags letters, or `None` when lsattr is missing or fails.
pub(super) fn attr_flags(path: &str, with_version: bool) -> Option<(Option<String>, String)> {
    let out = super::environment::command("lsattr")
        .arg(if with_version { "-vd" } else { "-d" })
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut words = text.split_whitespace();
    let version = if with_version { words.next().map(str::to_string) } else { None };
    Some((version, words.next()?.replace('-', "")))
}

const FILE_ATTRIBUTES: &[(char, &str)] = &[
    ('A', "noatime"),
    ('a', "append"),
    ('c', "compressed"),
    ('C', "nocow"),
    ('d', "nodump"),
    ('D', "dirsync"),
    ('e', "extents"),
    ('E', "encrypted"),
    ('h', "blocksize"),
    ('i', "immutable"),
    ('I', "indexed"),
    ('j', "journalled"),
    ('N', "inline"),
    ('s', "zero"),
    ('S', "synchronous"),
    ('t', "notail"),
    ('T', "blockroot"),
    ('u', "undelete"),
    ('X', "compressedraw"),
    ('Z', "compresseddirty"),
];

/// `format_attributes`: attribute names of flag letters.
pub(super) fn attribute_names(flags: &str) -> Vec<Value> {
    flags
        .chars()
        .filter_map(|c| FILE_ATTRIBUTES.iter().find(|(f, _)| *f == c).map(|(_, n)| Value::from(*n)))
        .collect()
}

pub(super) fn set_attributes(
    path: &str,
    attributes: Option<&str>,
    changed: bool,
    diff: &mut Option<&mut Map<String, Value>>,
    check: bool,
) -> Outcome<bool> {
    let Some(attributes) = attributes else { return Ok(changed) };
    if absent_in_check(check, path) {
        return Ok(true);
    }
    let existing = attr_flags(path, false).map(|(_, f)| f);
    let (op, attrs) = match attributes.chars().next() {
        Some(c @ ('-' | '+')) => (c, &attributes[1..]),
        _ => ('=', attributes),
    };
    if attrs.is_empty() || (existing.as_deref().unwrap_or("") == attrs && op != '-') {
        return Ok(changed);
    }
    record(
        diff,
        "attributes",
        existing.map(Value::from).unwrap_or(Value::Null),
        Value::from(format!("{op}{attrs}")),
    );
    if check {
        return Ok(true);
    }
    let out = super::environment::command("chattr").arg(format!("{op}{attrs}")).arg(path).output();
    match out {
        Ok(o) if o.status.success() && o.stderr.is_empty() => Ok(true),
        Ok(o) => {
            let mut r = fail_at(path, "chattr failed");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            r.insert(
                "details".into(),
                Value::from(format!("Error while setting attributes: {text}")),
            );
            Err(r)
        }
        Err(e) => {
            let mut r = fail_at(path, "chattr failed");
            r.insert("details".into(), Value::from(e.to_string()));
            Err(r)
        }
    }
}

/// Refuses SELinux context options on a host where SELinux is enabled (tack cannot set them);
/// where it is disabled ansible ignores them too.
pub(super) fn check_selinux(params: &super::argspec::Params) -> Outcome<()> {
    let enabled = Path::new("/sys/fs/selinux/enforce").exists();
    for name in ["seuser", "serole", "setype", "selevel"] {
        if enabled && params.is_set(name) {
            return Err(fail(format!(
                "tack does not set SELinux contexts: option '{name}' is not supported"
            )));
        }
    }
    Ok(())
}

pub(super) fn set_fs_attributes(
    args: &FileArgs,
    changed: bool,
    mut diff: Option<&mut Map<String, Value>>,
    check: bool,
) -> Outcome<bool> {
    let mut changed = set_owner(&args.path, args.owner.as_deref(), changed, &mut diff, check)?;
    changed = set_group(&args.path, args.group.as_deref(), changed, &mut diff, check)?;
    changed = set_mode(&args.path, &args.mode, changed, &mut diff, check)?;
    set_attributes(&args.path, args.attributes.as_deref(), changed, &mut diff, check)
}

/// A file time requested by `modification_time`/`access_time`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stamp {
    Preserve,
    Now,
    At(f64),
}

fn float_time(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

fn now() -> f64 {
    float_time(SystemTime::now())
}

/// `update_timestamp_for_file`.
pub(super) fn update_times(
    path: &str,
    mtime: Stamp,
    atime: Stamp,
    diff: Option<&mut Map<String, Value>>,
    check: bool,
) -> Outcome<bool> {
    if mtime == Stamp::Preserve && atime == Stamp::Preserve {
        return Ok(false);
    }
    let err = |e: std::io::Error| {
        fail_at(
            path,
            &format!(
                "Error while updating modification or access time: {}",
                tack_py::oserror::os_error(&e, std::path::Path::new(path))
            ),
        )
    };
    let st = std::fs::metadata(path).map_err(err)?;
    let prev_m = st.mtime() as f64 + st.mtime_nsec() as f64 / 1e9;
    let prev_a = st.atime() as f64 + st.atime_nsec() as f64 / 1e9;
    let both_now = mtime == Stamp::Now && atime == Stamp::Now;
    let pick = |s: Stamp, prev: f64| match s {
        Stamp::Preserve => prev,
        Stamp::Now => now(),
        Stamp::At(t) => t,
    };
    let (m, a) = (pick(mtime, prev_m), pick(atime, prev_a));
    if !both_now && m == prev_m && a == prev_a {
        return Ok(false);
    }
    if !check {
        set_times(path, a, m).map_err(err)?;
    }
    if let Some(d) = diff {
        let mut d = Some(d);
        if m != prev_m {
            record(&mut d, "mtime", Value::from(prev_m), Value::from(m));
        }
        if a != prev_a {
            record(&mut d, "atime", Value::from(prev_a), Value::from(a));
        }
    }
    Ok(true)
}

fn set_times(path: &str, atime: f64, mtime: f64) -> std::io::Result<()> {
    let c = cpath(path).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let ts = |t: f64| libc::timespec {
        // `as _`: musl's libc marks the `time_t` alias deprecated (its width is to change).
        tv_sec: t.floor() as _,
        tv_nsec: ((t - t.floor()) * 1e9) as libc::c_long,
    };
    let times = [ts(atime), ts(mtime)];
    // SAFETY: `c` is NUL-terminated and `times` holds the two timespecs utimensat reads.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) };
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// `time.mktime(time.strptime(text, format))` for the directives tack knows (`%Y %m %d %H
/// %M %S %y %%`); `Err` is the reason ansible's message shows.
pub(super) fn parse_time(text: &str, format: &str) -> Result<f64, String> {
    let bad = || format!("time data {} does not match format {}", py_q(text), py_q(format));
    let (mut year, mut mon, mut day, mut hour, mut min, mut sec) =
        (1900i64, 1i64, 1i64, 0i64, 0i64, 0i64);
    let t: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut f = format.chars();
    while let Some(c) = f.next() {
        if c != '%' {
            if t.get(i) != Some(&c) {
                return Err(bad());
            }
            i += 1;
            continue;
        }
        let d = f.next().ok_or_else(bad)?;
        let width = match d {
            'Y' => 4,
            'm' | 'd' | 'H' | 'M' | 'S' | 'y' => 2,
            '%' => {
                if t.get(i) != Some(&'%') {
                    return Err(bad());
                }
                i += 1;
                continue;
            }
            other => return Err(format!("tack does not support the time directive %{other}")),
        };
        let start = i;
        while i < t.len() && i - start < width && t[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
        let n: i64 = t[start..i].iter().collect::<String>().parse().map_err(|_| bad())?;
        match d {
            'Y' => year = n,
            'y' => year = if n < 69 { 2000 + n } else { 1900 + n },
            'm' => mon = n,
            'd' => day = n,
            'H' => hour = n,
            'M' => min = n,
            _ => sec = n,
        }
    }
    if i != t.len() {
        return Err(format!("unconverted data remains: {}", t[i..].iter().collect::<String>()));
    }
    if !(1..=12).contains(&mon) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 61 {
        return Err(bad());
    }
    // SAFETY: a zeroed tm is valid input once its fields are set below.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = (year - 1900) as i32;
    tm.tm_mon = (mon - 1) as i32;
    tm.tm_mday = day as i32;
    tm.tm_hour = hour as i32;
    tm.tm_min = min as i32;
    tm.tm_sec = sec as i32;
    tm.tm_isdst = -1;
    // SAFETY: `tm` is a live, fully initialised struct.
    let t = unsafe { libc::mktime(&mut tm) };
    Ok(t as f64)
}

fn py_q(s: &str) -> String {
    super::pyfmt::py_repr(&Value::from(s))
}
