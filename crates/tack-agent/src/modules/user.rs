//! `ansible.builtin.user` on Linux through the shadow tools (`useradd`, `usermod`, `userdel`,
//! `chage`): a user's existence, UID, primary and supplementary groups, comment, home (made
//! from the skeleton when missing), shell, password hash and lock, account expiry and password
//! ageing. Changes only the named user and its home directory. Not done by tack, and refused
//! by name: `local` (libuser), `generate_ssh_key`, and SELinux users on an SELinux host.

use std::ffi::{CStr, CString};
use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use super::argspec::{Elem, Kind, Opt, RequiredIf, Spec};
use super::{Ctx, Invocation, ModuleResult, host, paths};

pub(crate) fn spec() -> Spec {
    let int = |n| Opt::new(n, Kind::Int);
    let s = |n| Opt::new(n, Kind::Str);
    let b = |n| Opt::new(n, Kind::Bool);
    Spec {
        options: vec![
            s("state").default("present").choices(&["absent", "present"]),
            s("name").required().aliases(&["user"]),
            int("uid"),
            b("non_unique").default(false),
            s("group"),
            Opt::new("groups", Kind::List(Some(Elem::Str))),
            s("comment"),
            Opt::new("home", Kind::Path),
            Opt::new("shell", Kind::Path),
            s("password").no_log(),
            s("login_class"),
            int("password_expire_max"),
            int("password_expire_min"),
            int("password_expire_warn"),
            b("hidden"),
            s("seuser"),
            b("force").default(false),
            b("remove").default(false),
            b("create_home").default(true).aliases(&["createhome"]),
            s("skeleton"),
            b("system").default(false),
            b("move_home").default(false),
            b("append").default(false),
            b("generate_ssh_key"),
            int("ssh_key_bits").default(0),
            s("ssh_key_type").default("rsa"),
            Opt::new("ssh_key_file", Kind::Path),
            s("ssh_key_comment")
                .default(format!("ansible-generated on {}", super::hostname::gethostname())),
            s("ssh_key_passphrase").no_log(),
            s("update_password").default("always").choices(&["always", "on_create"]),
            Opt::new("expires", Kind::Float),
            b("password_lock"),
            b("local"),
            s("profile"),
            s("authorization"),
            s("role"),
            s("umask"),
            int("password_expire_account_disable"),
            int("uid_min"),
            int("uid_max"),
        ],
        required_if: vec![RequiredIf {
            key: "append",
            value: Value::Bool(true),
            needs: &["groups"],
            any: false,
        }],
        ..Spec::default()
    }
}

/// A `passwd` entry: name, password field, uid, gid, comment, home, shell.
#[derive(Debug, Clone)]
pub(super) struct Pw {
    pub passwd: String,
    pub uid: u32,
    pub gid: u32,
    pub gecos: String,
    pub dir: String,
    pub shell: String,
}

fn cstr(p: *const libc::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null pointers from the C library's entries are NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

pub(super) fn getpw(name: &str) -> Option<Pw> {
    let c = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: a zeroed passwd is a valid out-parameter for getpwnam_r.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer is to live, correctly sized storage owned by this frame.
    let rc =
        unsafe { libc::getpwnam_r(c.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    Some(Pw {
        passwd: cstr(pwd.pw_passwd),
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
        gecos: cstr(pwd.pw_gecos),
        dir: cstr(pwd.pw_dir),
        shell: cstr(pwd.pw_shell),
    })
}

/// The shadow entry's (password, expiry day, min, max, warn), as `getspnam` gives them.
pub(super) fn shadow(name: &str) -> Option<(String, i64, i64, i64, i64)> {
    let c = CString::new(name).ok()?;
    // SAFETY: `c` is a valid NUL-terminated name; the result is read at once, before any
    // other shadow call could overwrite the static entry.
    let sp = unsafe { libc::getspnam(c.as_ptr()) };
    if sp.is_null() {
        return None;
    }
    // SAFETY: non-null, points to the C library's static entry.
    let sp = unsafe { &*sp };
    Some((
        cstr(sp.sp_pwdp),
        sp.sp_expire as i64,
        sp.sp_min as i64,
        sp.sp_max as i64,
        sp.sp_warn as i64,
    ))
}

/// Every group: (name, gid, members), in the group database's order.
fn all_groups() -> Vec<(String, u32, Vec<String>)> {
    let mut out = Vec::new();
    // SAFETY: setgrent/getgrent/endgrent iterate the database; each entry is copied before
    // the next call reuses its storage. Modules run one at a time per process.
    unsafe {
        libc::setgrent();
        loop {
            let g = libc::getgrent();
            if g.is_null() {
                break;
            }
            let g = &*g;
            let mut members = Vec::new();
            let mut m = g.gr_mem;
            while !m.is_null() && !(*m).is_null() {
                members.push(cstr(*m));
                m = m.add(1);
            }
            out.push((cstr(g.gr_name), g.gr_gid, members));
        }
        libc::endgrent();
    }
    out
}

/// `group_info`: (name, gid) of a group given by number or name.
pub(super) fn group_info(group: &str) -> Option<(String, u32)> {
    if let Ok(gid) = group.parse::<u32>()
        && let Some(name) = host::group_name(gid)
    {
        return Some((name, gid));
    }
    host::gid_of(group).map(|gid| (group.to_string(), gid))
}

pub(super) fn membership(name: &str, exclude_primary: bool) -> Vec<String> {
    let primary = getpw(name).map(|p| p.gid);
    all_groups()
        .into_iter()
        .filter(|(_, gid, members)| {
            members.iter().any(|m| m == name) && (!exclude_primary || Some(*gid) != primary)
        })
        .map(|(n, _, _)| n)
        .collect()
}

/// `time.strftime('%Y-%m-%d', time.gmtime(secs))`.
fn ymd(days: i64) -> (i64, i64, i64) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

pub(super) fn date_text(days: i64) -> String {
    let (y, m, d) = ymd(days);
    format!("{y:04}-{m:02}-{d:02}")
}

pub(super) fn password_looks_plain(pw: &str) -> bool {
    if ["*", "!", "*************"].contains(&pw) {
        return false;
    }
    let mut invalid = pw.contains([':', '*', '!']) || !pw.contains('$');
    if pw.contains('$') {
        let fields: Vec<&str> = pw.split('$').collect();
        if fields.len() >= 3 {
            let last = fields[fields.len() - 1];
            let n = last.chars().count();
            invalid |= last.chars().any(|c| !(c.is_ascii_alphanumeric() || "./=".contains(c)));
            invalid |= matches!((fields[1], n), ("1", n) if n != 22);
            invalid |= matches!((fields[1], n), ("5" | "y", n) if n != 43);
            invalid |= matches!((fields[1], n), ("6", n) if n != 86);
        } else {
            invalid = true;
        }
    }
    invalid
}

/// `create_homedir`: the skeleton copied (or an empty directory), mode from login.defs.
pub(super) fn create_homedir(path: &str, skeleton: Option<&str>) -> Result<(), String> {
    if paths::exists(path) {
        return Ok(());
    }
    let skel = skeleton.unwrap_or("/etc/skel");
    if paths::exists(skel) && skel != "/dev/null" {
        copy_tree(skel, path).map_err(|e| e.to_string())?;
    } else {
        std::fs::create_dir_all(path)
            .map_err(|e| tack_py::oserror::os_error(&e, std::path::Path::new(path)))?;
    }
    if let Ok(defs) = std::fs::read_to_string("/etc/login.defs") {
        let mut mode = 0o755;
        for line in defs.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let value = |w: &[&str]| {
                (w.len() == 2 && w[1].chars().all(|c| c.is_ascii_digit()))
                    .then(|| u32::from_str_radix(w[1], 8).ok())
                    .flatten()
            };
            if line.starts_with("HOME_MODE")
                && words[0] == "HOME_MODE"
                && let Some(m) = value(&words)
            {
                mode = m;
                break;
            }
            if line.starts_with("UMASK")
                && words[0] == "UMASK"
                && let Some(u) = value(&words)
            {
                mode = 0o777 & !u;
            }
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `shutil.copytree(src, dst, symlinks=True)`.
fn copy_tree(src: &str, dst: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let from = entry.path();
        let to = std::path::Path::new(dst).join(entry.file_name());
        let ft = entry.file_type()?;
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        } else if ft.is_dir() {
            copy_tree(&from.to_string_lossy(), &to.to_string_lossy())?;
        } else {
            std::fs::copy(&from, &to)?;
        }
    }
    let perms = std::fs::metadata(src)?.permissions();
    std::fs::set_permissions(dst, perms)
}

/// `chown_homedir`: the home and everything in it (links excepted) owned by the user.
pub(super) fn chown_homedir(uid: u32, gid: u32, path: &str) -> Result<(), String> {
    let own = |p: &std::path::Path| {
        std::os::unix::fs::lchown(p, Some(uid), Some(gid)).map_err(|e| e.to_string())
    };
    own(std::path::Path::new(path))?;
    let mut stack = vec![std::path::PathBuf::from(path)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let ft = e.file_type().map_err(|e| e.to_string())?;
            if ft.is_dir() {
                own(&e.path())?;
                stack.push(e.path());
            } else if !ft.is_symlink() {
                own(&e.path())?;
            }
        }
    }
    Ok(())
}

pub(super) type Cmd = (i32, String, String);

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    super::user_ops::run(ctx, &p)
}
