//! The steps of `ansible.builtin.user` (see `user.rs` for what it owns): the `useradd`,
//! `usermod`, `userdel` and `chage` command lines ansible builds, and the result it reports.

use serde_json::Value;

use super::argspec::Params;
use super::common::{fail, warn};
use super::group::{bin_path, run_cmd};
use super::user::{
    Cmd, Pw, chown_homedir, create_homedir, date_text, getpw, group_info, membership,
    password_looks_plain, shadow,
};
use super::{Ctx, ModuleResult, paths};

const PLACEHOLDER_HOMES: &[&str] = &["/nonexistent", "/dev/null", "/var/empty"];

struct User<'a> {
    p: &'a Params,
    check: bool,
    name: String,
    groups: Option<String>,
    /// `expires` as days since the epoch (`None` unset; negative: no expiry).
    expires: Option<(f64, i64)>,
}

fn exec(check: bool, cmd: &[String]) -> Cmd {
    if check { (0, String::new(), String::new()) } else { run_cmd(cmd) }
}

impl User<'_> {
    fn s(&self, k: &str) -> Option<&str> {
        self.p.str(k)
    }

    /// `user_info`: the passwd entry, its password taken from shadow when hidden there.
    fn info(&self) -> Option<Pw> {
        let mut pw = getpw(&self.name)?;
        if pw.passwd.chars().count() <= 1 {
            pw.passwd = shadow(&self.name).map(|s| s.0).unwrap_or_default();
        }
        Some(pw)
    }

    /// `get_groups_set`: the requested groups (names when `names_only`), each checked to exist.
    fn groups_set(
        &self,
        remove_existing: bool,
        names_only: bool,
    ) -> Result<Vec<String>, ModuleResult> {
        let info = self.info();
        let mut out: Vec<String> = Vec::new();
        for g in self.groups.as_deref().unwrap_or_default().split(',').filter(|x| !x.is_empty()) {
            let g = g.trim().to_string();
            let Some((gname, gid)) = group_info(&g) else {
                return Err(fail(format!("Group {g} does not exist")));
            };
            if remove_existing && info.as_ref().is_some_and(|i| i.gid == gid) {
                continue;
            }
            let v = if names_only { gname } else { g };
            if !out.contains(&v) {
                out.push(v);
            }
        }
        Ok(out)
    }

    fn create(&self) -> Result<Cmd, ModuleResult> {
        let p = self.p;
        let mut cmd = vec![bin_path("useradd")?];
        if let Some(uid) = p.get("uid").as_i64() {
            cmd.extend(["-u".into(), uid.to_string()]);
            if p.bool("non_unique") {
                cmd.push("-o".into());
            }
        }
        if let Some(g) = self.s("group") {
            if group_info(g).is_none() {
                return Err(fail(format!("Group {g} does not exist")));
            }
            cmd.extend(["-g".into(), g.to_string()]);
        } else if group_info(&self.name).is_some() {
            cmd.push("-N".into());
        }
        if self.groups.as_deref().is_some_and(|g| !g.is_empty()) {
            cmd.extend(["-G".into(), self.groups_set(true, false)?.join(",")]);
        }
        if let Some(c) = self.s("comment") {
            cmd.extend(["-c".into(), c.to_string()]);
        }
        let create_home = p.bool("create_home");
        if let Some(home) = self.s("home") {
            if create_home && !paths::isdir(&paths::dirname(home)) {
                create_homedir(home, self.s("skeleton")).map_err(fail)?;
            }
            cmd.extend(["-d".into(), home.to_string()]);
        }
        if let Some(sh) = self.s("shell") {
            cmd.extend(["-s".into(), sh.to_string()]);
        }
        if let Some((secs, days)) = self.expires {
            cmd.push("-e".into());
            cmd.push(if secs < 0.0 { String::new() } else { date_text(days) });
        }
        if let Some(i) = p.get("password_expire_account_disable").as_i64() {
            cmd.extend(["-f".into(), i.to_string()]);
        }
        if let Some(pw) = self.s("password") {
            cmd.push("-p".into());
            cmd.push(if p.get("password_lock").as_bool() == Some(true) {
                format!("!{pw}")
            } else {
                pw.to_string()
            });
        }
        if create_home {
            cmd.push("-m".into());
            if let Some(k) = self.s("skeleton") {
                cmd.extend(["-k".into(), k.to_string()]);
            }
            if let Some(u) = self.s("umask") {
                cmd.extend(["-K".into(), format!("UMASK={u}")]);
            }
        } else {
            cmd.push("-M".into());
        }
        if p.bool("system") {
            cmd.push("-r".into());
        }
        for (opt, key) in [("uid_min", "UID_MIN"), ("uid_max", "UID_MAX")] {
            if let Some(v) = p.get(opt).as_i64() {
                cmd.extend(["-K".into(), format!("{key}={v}")]);
            }
        }
        cmd.push(self.name.clone());
        Ok(exec(self.check, &cmd))
    }

    fn modify(&self) -> Result<Option<Cmd>, ModuleResult> {
        let p = self.p;
        let usermod = bin_path("usermod")?;
        let mut cmd = vec![usermod.clone()];
        let Some(info) = self.info() else { return Ok(None) };
        let (_, out, err) = run_cmd(&[usermod, "--help".into()]);
        let has_append =
            format!("{out}{err}").lines().any(|l| l.trim().starts_with("-a, --append"));
        if let Some(uid) = p.get("uid").as_i64()
            && i64::from(info.uid) != uid
        {
            cmd.extend(["-u".into(), uid.to_string()]);
            if p.bool("non_unique") {
                cmd.push("-o".into());
            }
        }
        if let Some(g) = self.s("group") {
            let Some((_, gid)) = group_info(g) else {
                return Err(fail(format!("Group {g} does not exist")));
            };
            if info.gid != gid {
                cmd.extend(["-g".into(), gid.to_string()]);
            }
        }
        if let Some(wanted) = &self.groups {
            let current = membership(&self.name, false);
            let append = p.bool("append");
            let mut need = false;
            let mut groups = Vec::new();
            let mut diff: Vec<String> = Vec::new();
            if wanted.is_empty() {
                need = !current.is_empty() && !append;
            } else {
                groups = self.groups_set(false, true)?;
                diff = current.iter().filter(|c| !groups.contains(c)).cloned().collect();
                diff.extend(groups.iter().filter(|g| !current.contains(g)).cloned());
                if !diff.is_empty() {
                    if append {
                        if groups.iter().any(|g| diff.contains(g)) {
                            if has_append {
                                cmd.push("-a".into());
                            }
                            need = true;
                        }
                    } else {
                        need = true;
                    }
                }
            }
            if need {
                if append && !has_append {
                    cmd.extend(["-A".into(), diff.join(",")]);
                } else {
                    cmd.extend(["-G".into(), groups.join(",")]);
                }
            }
        }
        if let Some(c) = self.s("comment")
            && info.gecos != c
        {
            cmd.extend(["-c".into(), c.to_string()]);
        }
        if let Some(h) = self.s("home")
            && info.dir != h
        {
            cmd.extend(["-d".into(), h.to_string()]);
            if p.bool("move_home") {
                cmd.push("-m".into());
            }
        }
        if let Some(sh) = self.s("shell")
            && info.shell != sh
        {
            cmd.extend(["-s".into(), sh.to_string()]);
        }
        if let Some((secs, days)) = self.expires {
            let current = shadow(&self.name).map(|s| s.1).filter(|e| *e != 0).unwrap_or(0);
            if secs < 0.0 {
                if current >= 0 {
                    cmd.extend(["-e".into(), String::new()]);
                }
            } else if current < 0 || date_text(current) != date_text(days) {
                cmd.extend(["-e".into(), date_text(days)]);
            }
        }
        if let Some(i) = p.get("password_expire_account_disable").as_i64() {
            cmd.extend(["-f".into(), i.to_string()]);
        }
        let lock = p.get("password_lock").as_bool();
        if lock == Some(true) && !info.passwd.starts_with('!') {
            cmd.push("-L".into());
        } else if lock == Some(false) && info.passwd.starts_with('!') {
            cmd.push("-U".into());
        }
        if let Some(pw) = self.s("password")
            && self.s("update_password") == Some("always")
            && info.passwd.trim_start_matches('!') != pw.trim_start_matches('!')
        {
            cmd.retain(|c| c != "-U" && c != "-L");
            cmd.push("-p".into());
            cmd.push(if lock == Some(true) { format!("!{pw}") } else { pw.to_string() });
        }
        if cmd.len() == 1 {
            return Ok(None);
        }
        cmd.push(self.name.clone());
        Ok(Some(exec(self.check, &cmd)))
    }

    fn remove(&self) -> Result<Cmd, ModuleResult> {
        let mut cmd = vec![bin_path("userdel")?];
        if self.p.bool("force") {
            cmd.push("-f".into());
        }
        if self.p.bool("remove") {
            cmd.push("-r".into());
        }
        cmd.push(self.name.clone());
        Ok(exec(self.check, &cmd))
    }

    /// `set_password_expire`: `chage` for the ageing values that differ.
    fn password_expire(&self) -> Result<Option<Cmd>, ModuleResult> {
        let Some((_, _, min, max, warn)) = shadow(&self.name) else { return Ok(None) };
        let mut cmd = vec![];
        for (opt, flag, have) in [
            ("password_expire_min", "-m", min),
            ("password_expire_max", "-M", max),
            ("password_expire_warn", "-W", warn),
        ] {
            if let Some(v) = self.p.get(opt).as_i64()
                && v != have
            {
                cmd.extend([flag.to_string(), v.to_string()]);
            }
        }
        if cmd.is_empty() {
            return Ok(None);
        }
        cmd.insert(0, bin_path("chage")?);
        cmd.push(self.name.clone());
        Ok(Some(exec(self.check, &cmd)))
    }
}

fn cmd_failed(name: &str, (rc, _, err): &Cmd) -> ModuleResult {
    let mut r = fail(err.clone());
    r.insert("name".into(), name.into());
    r.insert("rc".into(), (*rc).into());
    r
}

pub(super) fn run(ctx: Ctx, p: &Params) -> ModuleResult {
    if p.bool("local") {
        return fail(
            "tack manages users with the shadow tools only: option 'local' is not supported",
        );
    }
    if p.bool("generate_ssh_key") {
        return fail("tack does not generate SSH keys: option 'generate_ssh_key' is not supported");
    }
    let mut warnings = Vec::new();
    if p.str("password").is_some_and(|pw| !pw.is_empty() && password_looks_plain(pw)) {
        warnings.push("The input password appears not to have been hashed. The 'password' argument must be encrypted for this module to work properly.".to_string());
    }
    if let Some(se) = p.str("seuser") {
        if std::path::Path::new("/sys/fs/selinux/enforce").exists() {
            return fail("tack does not set SELinux users: option 'seuser' is not supported");
        }
        warnings.push(format!("'seuser' is set to '{se}' but SELinux is not enabled on this system. The 'seuser' parameter will be ignored."));
    }
    let finish = |mut r: ModuleResult| {
        for w in &warnings {
            warn(&mut r, w);
        }
        r
    };
    let groups = p
        .get("groups")
        .as_array()
        .map(|g| g.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(","));
    let expires = p.get("expires").as_f64().map(|e| (e, (e.floor() as i64).div_euclid(86400)));
    let u = User {
        p,
        check: ctx.check_mode,
        name: p.str("name").unwrap_or_default().to_string(),
        groups,
        expires,
    };
    let state = p.str("state").unwrap_or("present").to_string();
    let mut result = ModuleResult::new();
    result.insert("name".into(), u.name.clone().into());
    result.insert("state".into(), state.clone().into());
    let changed_only = || {
        let mut r = ModuleResult::new();
        r.insert("changed".into(), true.into());
        r
    };
    let exists = getpw(&u.name).is_some();
    let mut outcome: Option<Cmd> = None;
    if state == "absent" {
        if exists {
            if u.check {
                return finish(changed_only());
            }
            let c = match u.remove() {
                Ok(c) => c,
                Err(r) => return finish(r),
            };
            if c.0 != 0 {
                return finish(cmd_failed(&u.name, &c));
            }
            outcome = Some(c);
            result.insert("force".into(), p.bool("force").into());
            result.insert("remove".into(), p.bool("remove").into());
        }
    } else {
        if !exists {
            if u.check {
                return finish(changed_only());
            }
            let home = p.str("home");
            let needs_parents =
                home.is_some_and(|h| p.bool("create_home") && !paths::isdir(&paths::dirname(h)));
            let c = match u.create() {
                Ok(c) => c,
                Err(r) => return finish(r),
            };
            if needs_parents
                && let (Some(info), Some(h)) = (u.info(), home)
                && let Err(e) = chown_homedir(info.uid, info.gid, h)
            {
                return finish(fail(e));
            }
            outcome = Some(c);
            result.insert("system".into(), p.bool("system").into());
            result.insert("create_home".into(), p.bool("create_home").into());
        } else {
            outcome = match u.modify() {
                Ok(c) => c,
                Err(r) => return finish(r),
            };
            result.insert("append".into(), p.bool("append").into());
            result.insert("move_home".into(), p.bool("move_home").into());
        }
        if let Some(c) = &outcome
            && c.0 != 0
        {
            return finish(cmd_failed(&u.name, c));
        }
        if p.str("password").is_some() {
            result.insert("password".into(), "NOT_LOGGING_PASSWORD".into());
        }
    }
    result.insert("changed".into(), outcome.is_some().into());
    if let Some((_, out, err)) = &outcome {
        if !out.is_empty() {
            result.insert("stdout".into(), out.clone().into());
        }
        if !err.is_empty() {
            result.insert("stderr".into(), err.clone().into());
        }
    }
    if state == "present"
        && let Some(info) = u.info()
    {
        result.insert("uid".into(), info.uid.into());
        result.insert("group".into(), info.gid.into());
        result.insert("comment".into(), info.gecos.clone().into());
        result.insert("home".into(), info.dir.clone().into());
        result.insert("shell".into(), info.shell.clone().into());
        result.insert("groups".into(), membership(&u.name, true).join(",").into());
        let home = p.str("home").map(str::to_string).unwrap_or(info.dir.clone());
        if !paths::exists(&home)
            && !PLACEHOLDER_HOMES.contains(&home.as_str())
            && p.bool("create_home")
        {
            if !u.check {
                if let Err(e) = create_homedir(&home, p.str("skeleton")) {
                    return finish(fail(e));
                }
                if let Err(e) = chown_homedir(info.uid, info.gid, &home) {
                    return finish(fail(e));
                }
            }
            result.insert("changed".into(), true.into());
        }
        match u.password_expire() {
            Ok(Some(c)) if c.0 != 0 => return finish(cmd_failed(&u.name, &c)),
            Ok(Some(_)) => {
                result.insert("changed".into(), true.into());
            }
            Ok(None) => {}
            Err(r) => return finish(r),
        }
    }
    finish(result)
}
