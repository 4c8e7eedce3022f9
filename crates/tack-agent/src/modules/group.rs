//! `ansible.builtin.group` on Linux: makes a group exist (with a given GID) or not, through
//! the shadow tools (`groupadd`, `groupmod`, `groupdel`, or their `lgroup*` forms with
//! `local`). Changes only the one group named.

use serde_json::Value;

use super::argspec::{Kind, Opt, RequiredIf, Spec};
use super::common::fail;
use super::{Ctx, Invocation, ModuleResult, host};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("state", Kind::Str).default("present").choices(&["absent", "present"]),
            Opt::new("name", Kind::Str).required(),
            Opt::new("force", Kind::Bool).default(false),
            Opt::new("gid", Kind::Int),
            Opt::new("system", Kind::Bool).default(false),
            Opt::new("local", Kind::Bool).default(false),
            Opt::new("non_unique", Kind::Bool).default(false),
            Opt::new("gid_min", Kind::Int),
            Opt::new("gid_max", Kind::Int),
        ],
        required_if: vec![RequiredIf {
            key: "non_unique",
            value: Value::Bool(true),
            needs: &["gid"],
            any: false,
        }],
        ..Spec::default()
    }
}

/// `module.get_bin_path(name, required=True)`: `PATH`, then the sbin directories it lacks.
pub(super) fn bin_path(name: &str) -> Result<String, ModuleResult> {
    let path = super::environment::var("PATH").unwrap_or_default();
    let mut dirs: Vec<&str> = path.split(':').collect();
    for extra in ["/sbin", "/usr/sbin", "/usr/local/sbin"] {
        if !dirs.contains(&extra) && std::path::Path::new(extra).exists() {
            dirs.push(extra);
        }
    }
    for d in dirs.iter().filter(|d| !d.is_empty()) {
        let full = format!("{}/{name}", d.trim_end_matches('/'));
        if std::path::Path::new(&full).is_file() {
            return Ok(full);
        }
    }
    Err(fail(format!("Failed to find required executable \"{name}\" in paths: {}", dirs.join(":"))))
}

/// `run_command`: (rc, stdout, stderr).
pub(super) fn run_cmd(argv: &[String]) -> (i32, String, String) {
    match super::environment::command(&argv[0]).args(&argv[1..]).env("LC_ALL", "C").output() {
        Ok(o) => (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        Err(e) => (2, String::new(), e.to_string()),
    }
}

fn exists(name: &str, local: bool) -> Result<bool, ModuleResult> {
    if !local {
        return Ok(host::gid_of(name).is_some());
    }
    let text = std::fs::read("/etc/group").map_err(|_| {
        fail("'local: true' specified but unable to find local group file /etc/group to parse.")
    })?;
    let prefix = format!("{name}:");
    Ok(text.split(|b| *b == b'\n').any(|l| l.starts_with(prefix.as_bytes())))
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let local = p.bool("local");
    if p.bool("force") && local {
        return fail(
            "force is not a valid option for local, force=True and local=True are mutually exclusive",
        );
    }
    if local && p.is_set("gid_min") {
        return fail("'gid_min' can not be used with 'local'");
    }
    if local && p.is_set("gid_max") {
        return fail("'gid_max' can not be used with 'local'");
    }
    let name = p.str("name").unwrap_or_default().to_string();
    let state = p.str("state").unwrap_or("present").to_string();
    let gid = p.get("gid").as_i64();
    let tool = |base: &str| bin_path(&if local { format!("l{base}") } else { base.to_string() });
    let changed_only = || {
        let mut r = ModuleResult::new();
        r.insert("changed".into(), true.into());
        r
    };
    let check_gid_free = || -> Result<(), ModuleResult> {
        if let Some(g) = gid.filter(|g| *g != 0)
            && let Some(owner) = host::group_name(g as u32)
            && owner != name
        {
            return Err(fail(format!("GID '{g}' already exists with group '{owner}'")));
        }
        Ok(())
    };
    let present = match exists(&name, local) {
        Ok(e) => e,
        Err(r) => return r,
    };
    let mut outcome: Option<(i32, String, String)> = None;
    if state == "absent" {
        if present {
            if ctx.check_mode {
                return changed_only();
            }
            let mut cmd = match tool("groupdel") {
                Ok(t) => vec![t],
                Err(r) => return r,
            };
            if p.bool("force") {
                cmd.push("-f".into());
            }
            cmd.push(name.clone());
            outcome = Some(run_cmd(&cmd));
        }
    } else if !present {
        if ctx.check_mode {
            return changed_only();
        }
        if local && let Err(r) = check_gid_free() {
            return r;
        }
        let mut cmd = match tool("groupadd") {
            Ok(t) => vec![t],
            Err(r) => return r,
        };
        if let Some(g) = gid {
            cmd.extend(["-g".to_string(), g.to_string()]);
            if p.bool("non_unique") {
                cmd.push("-o".into());
            }
        }
        if p.bool("system") {
            cmd.push("-r".into());
        }
        for (opt, key) in [("gid_min", "GID_MIN"), ("gid_max", "GID_MAX")] {
            if let Some(v) = p.get(opt).as_i64() {
                cmd.extend(["-K".to_string(), format!("{key}={v}")]);
            }
        }
        cmd.push(name.clone());
        outcome = Some(run_cmd(&cmd));
    } else {
        let mut cmd = match tool("groupmod") {
            Ok(t) => vec![t],
            Err(r) => return r,
        };
        if local && let Err(r) = check_gid_free() {
            return r;
        }
        let current = host::gid_of(&name).map(i64::from);
        if let Some(g) = gid
            && current != Some(g)
        {
            cmd.extend(["-g".to_string(), g.to_string()]);
            if p.bool("non_unique") {
                cmd.push("-o".into());
            }
        }
        if cmd.len() > 1 {
            outcome = Some(if ctx.check_mode {
                (0, String::new(), String::new())
            } else {
                cmd.push(name.clone());
                run_cmd(&cmd)
            });
        }
    }
    if let Some((rc, _, err)) = &outcome
        && *rc != 0
    {
        let mut r = fail(err.clone());
        r.insert("name".into(), name.into());
        return r;
    }
    let mut result = ModuleResult::new();
    result.insert("name".into(), name.clone().into());
    result.insert("state".into(), state.into());
    result.insert("changed".into(), outcome.is_some().into());
    if let Some((_, out, err)) = &outcome {
        if !out.is_empty() {
            result.insert("stdout".into(), out.clone().into());
        }
        if !err.is_empty() {
            result.insert("stderr".into(), err.clone().into());
        }
    }
    if matches!(exists(&name, local), Ok(true))
        && let Some(g) = host::gid_of(&name)
    {
        result.insert("system".into(), p.bool("system").into());
        result.insert("gid".into(), g.into());
    }
    result
}
