//! The host's user and group database, and the path facts ansible adds to results
//! (`add_path_info`). Owns lookups only; nothing here changes the host.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::{Map, Value};

fn buffer() -> Vec<libc::c_char> {
    vec![0; 16384]
}

/// A user's name, or `None` when the uid has no entry.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = buffer();
    // SAFETY: a zeroed passwd is a valid out-parameter for getpwuid_r.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer is to live, correctly sized storage owned by this frame.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points into `buf`, NUL-terminated.
    Some(unsafe { CStr::from_ptr(pwd.pw_name) }.to_string_lossy().into_owned())
}

/// A user's home directory, or `None` when the uid has no entry.
pub fn user_home(uid: u32) -> Option<std::path::PathBuf> {
    let mut buf = buffer();
    // SAFETY: a zeroed passwd is a valid out-parameter for getpwuid_r.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer is to live, correctly sized storage owned by this frame.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: on success pw_dir points into `buf`, NUL-terminated.
    let dir = unsafe { CStr::from_ptr(pwd.pw_dir) };
    Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())))
}

/// A group's name, or `None` when the gid has no entry.
pub(super) fn group_name(gid: u32) -> Option<String> {
    let mut buf = buffer();
    // SAFETY: a zeroed group is a valid out-parameter for getgrgid_r.
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer is to live, correctly sized storage owned by this frame.
    let rc = unsafe { libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: on success gr_name points into `buf`, NUL-terminated.
    Some(unsafe { CStr::from_ptr(grp.gr_name) }.to_string_lossy().into_owned())
}

/// (uid, home) of a user name.
fn passwd_by_name(name: &str) -> Option<(u32, String)> {
    let cname = CString::new(name).ok()?;
    let mut buf = buffer();
    // SAFETY: a zeroed passwd is a valid out-parameter for getpwnam_r.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer is to live, correctly sized storage owned by this frame.
    let rc = unsafe {
        libc::getpwnam_r(cname.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out)
    };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: on success pw_dir points into `buf`, NUL-terminated.
    let home = unsafe { CStr::from_ptr(pwd.pw_dir) }.to_string_lossy().into_owned();
    Some((pwd.pw_uid, home))
}

/// The uid of a user name.
pub(super) fn uid_of(name: &str) -> Option<u32> {
    passwd_by_name(name).map(|(uid, _)| uid)
}

/// The gid of a group name.
pub(super) fn gid_of(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    let mut buf = buffer();
    // SAFETY: a zeroed group is a valid out-parameter for getgrnam_r.
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer is to live, correctly sized storage owned by this frame.
    let rc = unsafe {
        libc::getgrnam_r(cname.as_ptr(), &mut grp, buf.as_mut_ptr(), buf.len(), &mut out)
    };
    if rc != 0 || out.is_null() {
        return None;
    }
    Some(grp.gr_gid)
}

/// `AnsibleModule.add_path_info`: for a result naming `path` (or `dest`) that exists, its
/// owner, group, mode, state and size.
pub(super) fn add_path_info(result: &mut Map<String, Value>) {
    let path = match result.get("path").or_else(|| result.get("dest")) {
        Some(Value::String(p)) => p.clone(),
        _ => return,
    };
    let path = Path::new(&path);
    let (Ok(st), Ok(lst)) = (std::fs::metadata(path), std::fs::symlink_metadata(path)) else {
        return;
    };
    result.insert("uid".into(), Value::from(st.uid()));
    result.insert("gid".into(), Value::from(st.gid()));
    result.insert(
        "owner".into(),
        Value::from(user_name(st.uid()).unwrap_or_else(|| st.uid().to_string())),
    );
    result.insert(
        "group".into(),
        Value::from(group_name(st.gid()).unwrap_or_else(|| st.gid().to_string())),
    );
    result.insert("mode".into(), Value::from(format!("0{:03o}", lst.mode() & 0o7777)));
    let state = if lst.file_type().is_symlink() {
        "link"
    } else if st.is_dir() {
        "directory"
    } else if st.nlink() > 1 {
        "hard"
    } else {
        "file"
    };
    result.insert("state".into(), Value::from(state));
    result.insert("size".into(), Value::from(lst.size()));
}
