//! `ansible.builtin.systemd` (`systemd_service`): everything asked of `systemctl` — `show`
//! for the unit's status, `is-enabled`/`enable`/`disable`, `mask`/`unmask`,
//! `start`/`stop`/`restart`/`reload`, `daemon-reload`/`daemon-reexec` — in ansible's order and
//! with its messages, including what it says on a host where systemd is not running (an
//! empty `show`, "Service is in unknown state"). Touches nothing but through `systemctl`.

use serde_json::{Map, Value};

use super::argspec::{Kind, Opt, Params, Spec};
use super::common::{fail, warn};
use super::{Ctx, Invocation, ModuleResult};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("name", Kind::Str).aliases(&["service", "unit"]),
            Opt::new("state", Kind::Str).choices(&["reloaded", "restarted", "started", "stopped"]),
            Opt::new("enabled", Kind::Bool),
            Opt::new("force", Kind::Bool),
            Opt::new("masked", Kind::Bool),
            Opt::new("daemon_reload", Kind::Bool).default(false).aliases(&["daemon-reload"]),
            Opt::new("daemon_reexec", Kind::Bool).default(false).aliases(&["daemon-reexec"]),
            Opt::new("scope", Kind::Str).default("system").choices(&["system", "user", "global"]),
            Opt::new("no_block", Kind::Bool).default(false),
        ],
        required_one_of: &[&["state", "enabled", "masked", "daemon_reload", "daemon_reexec"]],
        ..Spec::default()
    }
}

type Outcome<T> = Result<T, ModuleResult>;

/// `run_command(cmd)`: split as shlex splits, no shell.
fn run_command(cmd: &str) -> (i64, String, String) {
    let Some(argv) = super::common::shlex_split(cmd).filter(|a| !a.is_empty()) else {
        return (2, String::new(), String::new());
    };
    let mut command = super::environment::command(&argv[0]);
    command.args(&argv[1..]).stdin(std::process::Stdio::null());
    // As ansible's module sets it for itself, so that `--user` finds the user's bus.
    if super::environment::var("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: geteuid has no preconditions.
        command.env("XDG_RUNTIME_DIR", format!("/run/user/{}", unsafe { libc::geteuid() }));
    }
    match command.output() {
        Ok(o) => (
            i64::from(o.status.code().unwrap_or(-1)),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        Err(e) => (i64::from(e.raw_os_error().unwrap_or(2)), String::new(), e.to_string()),
    }
}

fn parse_show(out: &str) -> Map<String, Value> {
    let mut parsed = Map::new();
    let mut multi: Vec<&str> = Vec::new();
    let mut key: Option<String> = None;
    for line in out.split('\n') {
        match &key {
            None => {
                if let Some((k, v)) = line.split_once('=') {
                    if k.starts_with("Exec")
                        && v.trim_start().starts_with('{')
                        && !v.trim_end().ends_with('}')
                    {
                        multi.push(v);
                        key = Some(k.to_string());
                        continue;
                    }
                    parsed.insert(k.to_string(), Value::from(v.trim()));
                }
            }
            Some(k) => {
                multi.push(line);
                if line.trim_end().ends_with('}') {
                    parsed.insert(k.clone(), Value::from(multi.join("\n").trim()));
                    multi.clear();
                    key = None;
                }
            }
        }
    }
    parsed
}

fn request_was_ignored(out: &str) -> bool {
    !out.contains('=') && (out.contains("ignoring request") || out.contains("ignoring command"))
}

fn sysv_is_enabled(name: &str) -> bool {
    let Ok(dirs) = std::fs::read_dir("/etc") else { return false };
    dirs.flatten().any(|d| {
        let dn = d.file_name().to_string_lossy().into_owned();
        dn.len() == 5
            && dn.starts_with("rc")
            && dn.ends_with(".d")
            && std::fs::read_dir(d.path()).is_ok_and(|es| {
                es.flatten().any(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.len() == 3 + name.len()
                        && n.starts_with('S')
                        && n.is_char_boundary(3)
                        && &n[3..] == name
                })
            })
    })
}

/// `is_chroot`: `/` is not the root of PID 1.
fn is_chroot() -> bool {
    use std::os::unix::fs::MetadataExt;
    if super::environment::var("debian_chroot").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    match (std::fs::metadata("/"), std::fs::metadata("/proc/1/root/.")) {
        (Ok(me), Ok(init)) => me.ino() != init.ino() || me.dev() != init.dev(),
        (Ok(me), Err(_)) => me.ino() != 2,
        _ => false,
    }
}

fn missing(found: bool, unit: &str) -> Outcome<()> {
    if found {
        Ok(())
    } else {
        Err(fail(format!("Could not find the requested service {unit}: host")))
    }
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    match execute(ctx, &p) {
        Ok(r) | Err(r) => r,
    }
}

fn execute(ctx: Ctx, p: &Params) -> Outcome<ModuleResult> {
    let unit = p.str("name").map(str::to_string);
    for key in ["state", "enabled", "masked"] {
        if p.is_set(key) && unit.is_none() {
            return Err(fail(format!("missing parameter(s) required by '{key}': name")));
        }
    }
    if let Some(u) = &unit {
        for glob in ["*", "?", "["] {
            if u.contains(glob) {
                return Err(fail(format!(
                    "This module does not currently support using glob patterns, found '{glob}' in service name: {u}"
                )));
            }
        }
    }
    let mut systemctl = super::group::bin_path("systemctl")?;
    let scope = p.str("scope").unwrap_or("system");
    if scope != "system" {
        systemctl.push_str(&format!(" --{scope}"));
    }
    if p.bool("no_block") {
        systemctl.push_str(" --no-block");
    }
    if p.bool("force") {
        systemctl.push_str(" --force");
    }
    let check = ctx.check_mode;
    let mut result = ModuleResult::new();
    result.insert("name".into(), unit.clone().map(Value::from).unwrap_or(Value::Null));
    result.insert("changed".into(), false.into());
    result.insert("status".into(), Value::Object(Map::new()));
    let offline = super::environment::var("SYSTEMD_OFFLINE").is_some_and(|v| v == "1");
    for (key, verb) in [("daemon_reload", "daemon-reload"), ("daemon_reexec", "daemon-reexec")] {
        if p.bool(key) && !check {
            let (rc, _, err) = run_command(&format!("{systemctl} {verb}"));
            if rc != 0 {
                if is_chroot() || offline {
                    warn(
                        &mut result,
                        &format!(
                            "{verb} failed, but target is a chroot or systemd is offline. Continuing. Error was: {rc} / {err}"
                        ),
                    );
                } else {
                    return Err(fail(format!("failure {rc} during {verb}: {err}")));
                }
            }
        }
    }
    let Some(unit) = unit else {
        return Ok(result);
    };
    let script = if unit.starts_with('/') { unit.clone() } else { format!("/etc/init.d/{unit}") };
    let is_initd = std::path::Path::new(&script).exists();
    let mut is_systemd = false;
    let mut status = Map::new();
    let (rc, out, err) = run_command(&format!("{systemctl} show '{unit}'"));
    if rc == 0 && !(request_was_ignored(&out) || request_was_ignored(&err)) {
        if !out.is_empty() {
            status = parse_show(&out);
            let load = status.get("LoadState").and_then(Value::as_str);
            is_systemd = load.is_some_and(|l| l != "not-found");
            let masked = load == Some("masked");
            if is_systemd
                && !masked
                && let Some(e) = status.get("LoadError")
            {
                let e = e.as_str().unwrap_or_default();
                return Err(fail(format!("Error loading unit file '{unit}': {e}")));
            }
        }
    } else if !err.is_empty() && rc == 1 && err.contains("Failed to parse bus message") {
        status = parse_show(&out);
        let (base, sep, _) = match unit.split_once('@') {
            Some((b, _)) => (b, "@", ()),
            None => (unit.as_str(), "", ()),
        };
        let search = format!("{base}{sep}");
        let (_, listed, _) = run_command(&format!("{systemctl} list-unit-files '{search}*'"));
        is_systemd = listed.contains(&search);
        let (_, active, _) = run_command(&format!("{systemctl} is-active '{unit}'"));
        status.insert("ActiveState".into(), Value::from(active.trim_end_matches('\n')));
    } else {
        const VALID: &[&str] = &[
            "enabled",
            "enabled-runtime",
            "linked",
            "linked-runtime",
            "masked",
            "masked-runtime",
            "static",
            "indirect",
            "disabled",
            "generated",
            "transient",
        ];
        let (_, out, _) = run_command(&format!("{systemctl} is-enabled '{unit}'"));
        if VALID.contains(&out.trim()) {
            is_systemd = true;
        } else {
            let (rc, _, _) = run_command(&format!("{systemctl} list-unit-files '{unit}'"));
            if rc == 0 {
                is_systemd = true;
            } else {
                let (rc, out, err) = run_command(&systemctl);
                if rc != 0 {
                    let mut r = fail(err.trim_end());
                    r.insert("cmd".into(), systemctl.clone().into());
                    r.insert("rc".into(), rc.into());
                    r.insert("stdout".into(), out.into());
                    r.insert("stderr".into(), err.into());
                    return Err(r);
                }
            }
        }
    }
    result.insert("status".into(), Value::Object(status.clone()));
    let found = is_systemd || is_initd;
    if is_initd && !is_systemd {
        warn(
            &mut result,
            &format!(
                "The service ({unit}) is actually an init script but the system is managed by systemd"
            ),
        );
    }
    if let Some(want) = p.get("masked").as_bool() {
        let (_, out, _) = run_command(&format!("{systemctl} is-enabled '{unit}'"));
        let masked = out.trim() == "masked";
        if masked != want {
            result.insert("changed".into(), true.into());
            let action = if want { "mask" } else { "unmask" };
            if !check {
                let (rc, _, err) = run_command(&format!("{systemctl} {action} '{unit}'"));
                if rc != 0 {
                    missing(found, &unit)?;
                    return Err(fail(format!(
                        "Failed to {action} the service ({unit}): {}",
                        err.trim()
                    )));
                }
            }
        }
    }
    if let Some(want) = p.get("enabled").as_bool() {
        let action = if want { "enable" } else { "disable" };
        missing(found, &unit)?;
        let mut enabled = false;
        let (rc, out, _) = run_command(&format!("{systemctl} is-enabled '{unit}' -l"));
        if rc == 0 {
            enabled = !matches!(out.trim_end(), "enabled-runtime" | "indirect" | "alias");
        } else if rc == 1
            && scope == "system"
            && is_initd
            && !out.trim().ends_with("disabled")
            && sysv_is_enabled(&unit)
        {
            enabled = true;
        }
        result.insert("enabled".into(), enabled.into());
        if enabled != want {
            result.insert("changed".into(), true.into());
            if !check {
                let (rc, out, err) = run_command(&format!("{systemctl} {action} '{unit}'"));
                if rc != 0 {
                    return Err(fail(format!("Unable to {action} service {unit}: {out}{err}")));
                }
            }
            result.insert("enabled".into(), (!enabled).into());
        }
    }
    if let Some(state) = p.str("state") {
        missing(found, &unit)?;
        result.insert("state".into(), state.into());
        if let Some(active) = status.get("ActiveState").and_then(Value::as_str) {
            let running = matches!(active, "active" | "activating");
            let action = match state {
                "started" => (!running).then_some("start"),
                "stopped" => (running || active == "deactivating").then_some("stop"),
                _ => {
                    result.insert("state".into(), "started".into());
                    Some(if !running { "start" } else { &state[..state.len() - 2] })
                }
            };
            if let Some(action) = action {
                result.insert("changed".into(), true.into());
                if !check {
                    let (rc, _, err) = run_command(&format!("{systemctl} {action} '{unit}'"));
                    if rc != 0 {
                        return Err(fail(format!("Unable to {action} service {unit}: {err}")));
                    }
                }
            }
        } else if is_chroot() || offline {
            warn(
                &mut result,
                "Target is a chroot or systemd is offline. This can lead to false positives or prevent the init system tools from working.",
            );
        } else {
            let mut r = fail("Service is in unknown state");
            r.insert("status".into(), Value::Object(status));
            if let Some(w) = result.get("warnings") {
                r.insert("warnings".into(), w.clone());
            }
            return Err(r);
        }
    }
    Ok(result)
}
