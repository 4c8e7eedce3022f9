//! `ansible.builtin.service` on Linux (ansible's `LinuxService`): the tools found on the host
//! (`systemctl` when systemd manages it, else the `service` binary or the init script), the
//! service's status read from `status` (or `ps` with `pattern`), start/stop/reload/restart run
//! detached (new session, `/`, only the locale in the environment, output to private
//! temporary files so a daemon keeping them open cannot hold the module), and `enabled`
//! through `update-rc.d` and the `/etc/rc?.d` links. Upstart, OpenRC, and enabling through
//! `insserv` or `chkconfig` are refused by name. Changes only what the task asks for.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use serde_json::Value;

use super::argspec::{Kind, Opt, Params, Spec};
use super::common::fail;
use super::{Ctx, Invocation, ModuleResult};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("name", Kind::Str).required(),
            Opt::new("state", Kind::Str).choices(&["started", "stopped", "reloaded", "restarted"]),
            Opt::new("sleep", Kind::Int),
            Opt::new("pattern", Kind::Str),
            Opt::new("enabled", Kind::Bool),
            Opt::new("runlevel", Kind::Str).default("default"),
            Opt::new("arguments", Kind::Str).default("").aliases(&["args"]),
        ],
        required_one_of: &[&["state", "enabled"]],
        ..Spec::default()
    }
}

type Outcome<T> = Result<T, ModuleResult>;

/// `get_bin_path(name, opt_dirs=[/sbin, /usr/sbin, /bin, /usr/bin])`.
fn bin_path(name: &str) -> Option<String> {
    let path = super::environment::var("PATH").unwrap_or_default();
    let mut dirs: Vec<String> =
        ["/sbin", "/usr/sbin", "/bin", "/usr/bin"].map(String::from).to_vec();
    dirs.extend(path.split(':').filter(|d| !d.is_empty()).map(String::from));
    for extra in ["/sbin", "/usr/sbin", "/usr/local/sbin"] {
        dirs.push(extra.into());
    }
    dirs.iter().map(|d| format!("{}/{name}", d.trim_end_matches('/'))).find(|full| {
        std::fs::metadata(full).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        })
    })
}

/// `is_systemd_managed`: systemctl present and systemd the booted init.
pub(super) fn systemd_managed() -> bool {
    if bin_path("systemctl").is_none() {
        return false;
    }
    if ["/run/systemd/system/", "/dev/.run/systemd/", "/dev/.systemd/"]
        .iter()
        .any(|c| std::path::Path::new(c).exists())
    {
        return true;
    }
    std::fs::read_to_string("/proc/1/comm").is_ok_and(|c| c.trim() == "systemd")
}

const LOCALE: &[(&str, &str)] =
    &[("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8"), ("LC_MESSAGES", "C.UTF-8")];

/// `execute_command(cmd)`: split as shlex splits, run with the locale added.
fn execute(cmd: &str) -> (i64, String, String) {
    let Some(argv) = super::common::shlex_split(cmd).filter(|a| !a.is_empty()) else {
        return (2, String::new(), String::new());
    };
    let mut command = super::environment::command(&argv[0]);
    command.args(&argv[1..]).stdin(Stdio::null());
    for (k, v) in LOCALE {
        command.env(k, v);
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

/// An unnamed private temporary file for a detached command's output.
fn private_tmp() -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = super::environment::temp_dir();
    for _ in 0..100 {
        let path = dir.join(format!(".tack-service-{}", super::tempname::random_part()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::EEXIST))
}

/// `execute_command(cmd, daemonize=True)`: the command in a session of its own, in `/`, with
/// only the locale for environment.
fn execute_detached(cmd: &str) -> (i64, String, String) {
    let Some(argv) = super::common::shlex_split(cmd).filter(|a| !a.is_empty()) else {
        return (2, String::new(), String::new());
    };
    let (Ok(mut out), Ok(mut err)) = (private_tmp(), private_tmp()) else {
        return (1, String::new(), "could not make a temporary file for the output".into());
    };
    let (Ok(out_w), Ok(err_w)) = (out.try_clone(), err.try_clone()) else {
        return (1, String::new(), "could not make a temporary file for the output".into());
    };
    let mut command = super::environment::command(&argv[0]);
    command
        .args(&argv[1..])
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(out_w)
        .stderr(err_w);
    for (k, v) in LOCALE {
        command.env(k, v);
    }
    // SAFETY: setsid is async-signal-safe and touches nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let rc = match command.status() {
        Ok(s) => i64::from(s.code().unwrap_or(-1)),
        Err(e) => return (i64::from(e.raw_os_error().unwrap_or(2)), String::new(), e.to_string()),
    };
    let read = |f: &mut std::fs::File| {
        use std::io::Seek;
        let mut buf = Vec::new();
        let _ = f.seek(std::io::SeekFrom::Start(0)).and_then(|_| f.read_to_end(&mut buf));
        String::from_utf8_lossy(&buf).into_owned()
    };
    (rc, read(&mut out), read(&mut err))
}

fn rc_links(kind: char, name: &str) -> bool {
    let Ok(dirs) = std::fs::read_dir("/etc") else { return false };
    dirs.flatten().any(|d| {
        let dn = d.file_name().to_string_lossy().into_owned();
        let is_rc = dn.len() == 5 && dn.starts_with("rc") && dn.ends_with(".d");
        is_rc
            && std::fs::read_dir(d.path()).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let b = n.as_bytes();
                    b.len() == 3 + name.len()
                        && b[0] == kind as u8
                        && n.is_char_boundary(3)
                        && &n[3..] == name
                })
            })
    })
}

struct Svc<'a> {
    p: &'a Params,
    name: String,
    svc_cmd: Option<String>,
    initscript: Option<String>,
    enable_cmd: Option<String>,
    running: Option<bool>,
    changed: bool,
    check: bool,
}

impl Svc<'_> {
    fn tools(&mut self) -> Outcome<()> {
        let script = format!("/etc/init.d/{}", self.name);
        if std::path::Path::new(&script).is_file() {
            self.initscript = Some(script);
        }
        if systemd_managed() {
            return Err(fail(
                "tack's service module does not drive systemd yet: use the systemd module",
            ));
        }
        if bin_path("initctl").is_some()
            && std::path::Path::new(&format!("/etc/init/{}.conf", self.name)).exists()
        {
            return Err(fail("tack's service module does not drive upstart (initctl) yet"));
        }
        if bin_path("rc-service").is_some() {
            return Err(fail("tack's service module does not drive OpenRC (rc-service) yet"));
        }
        if self.initscript.is_some() {
            self.enable_cmd = bin_path("update-rc.d")
                .or_else(|| bin_path("insserv"))
                .or_else(|| bin_path("chkconfig"));
        }
        if self.enable_cmd.is_none() {
            return Err(fail(format!("Could not find the requested service {}: host", self.name)));
        }
        self.svc_cmd = bin_path("service");
        if self.svc_cmd.is_none() && self.initscript.is_none() {
            return Err(fail(
                "cannot find 'service' binary or init script for service,  possible typo in service name?, aborting",
            ));
        }
        Ok(())
    }

    fn control(&self, action: &str) -> (i64, String, String) {
        let arguments = self.p.str("arguments").unwrap_or_default();
        let base = match (&self.svc_cmd, &self.initscript) {
            (Some(cmd), _) => format!("{cmd} {}", self.name),
            (None, Some(script)) => script.clone(),
            (None, None) => String::new(),
        };
        let run = |a: &str| {
            if base.is_empty() {
                execute_detached(&format!("{a} {} {arguments}", self.name))
            } else {
                execute_detached(&format!("{base} {a} {arguments}"))
            }
        };
        if action != "restart" {
            return run(action);
        }
        let (rc1, o1, e1) = run("stop");
        if let Some(secs) = self.p.get("sleep").as_u64() {
            std::thread::sleep(std::time::Duration::from_secs(secs));
        }
        let (rc2, o2, e2) = run("start");
        if rc1 != 0 && rc2 == 0 { (rc2, o2, e2) } else { (rc1 + rc2, o1 + &o2, e1 + &e2) }
    }

    fn status(&mut self) -> Option<bool> {
        let (rc, out, _) = self.control("status");
        if self.running.is_none() && [1, 2, 3, 4, 69].contains(&rc) {
            self.running = Some(false);
        }
        if self.running.is_none() && out.matches('\n').count() <= 1 {
            let clean = out.to_lowercase().replace(&self.name.to_lowercase(), "");
            if clean.contains("stop") {
                self.running = Some(false);
            } else if clean.contains("run") {
                self.running = Some(!clean.contains("not "));
            } else if clean.contains("start") && !clean.contains("not ") {
                self.running = Some(true);
            } else if [
                "could not access pid file",
                "is dead and pid file exists",
                "dead but subsys locked",
                "dead but pid file exists",
            ]
            .iter()
            .any(|s| clean.contains(s))
            {
                self.running = Some(false);
            }
        }
        if self.running.is_none() && rc == 0 {
            self.running = Some(true);
        }
        if self.running.is_none() && self.name == "iptables" && out.contains("ACCEPT") {
            self.running = Some(true);
        }
        self.running
    }

    fn check_ps(&mut self) -> Outcome<()> {
        let Some(ps) = bin_path("ps") else {
            return Err(fail("Failed to find required executable \"ps\""));
        };
        let pattern = self.p.str("pattern").unwrap_or_default().to_string();
        let (rc, out, _) = execute(&format!("{ps} auxww"));
        if rc == 0 {
            self.running =
                Some(out.split('\n').any(|l| l.contains(&pattern) && !l.contains("pattern=")));
        }
        Ok(())
    }

    fn enable(&mut self, want: bool) -> Outcome<Option<ModuleResult>> {
        let Some(cmd) = self.enable_cmd.clone() else {
            return Err(fail(format!(
                "cannot detect command to enable service {}, typo or init system potentially unknown",
                self.name
            )));
        };
        if !cmd.ends_with("update-rc.d") {
            return Err(fail(format!(
                "tack's service module enables services through update-rc.d only, not {cmd}"
            )));
        }
        let enabled = rc_links('S', &self.name);
        if want == enabled {
            self.changed = false;
            return Ok(None);
        }
        self.changed = true;
        let action = if want { "enable" } else { "disable" };
        if want && !rc_links('K', &self.name) && !self.check {
            let (rc, out, err) = execute(&format!("{cmd} {} defaults", self.name));
            if rc != 0 {
                return Err(fail(if err.is_empty() { out } else { err }));
            }
        }
        if !self.check {
            let (rc, out, err) = execute(&format!("{cmd} {} {action}", self.name));
            if rc != 0 {
                return Err(fail(if err.is_empty() { out } else { err }));
            }
        }
        Ok(None)
    }
}

fn checked_exit(msg: &str) -> ModuleResult {
    let mut r = ModuleResult::new();
    r.insert("changed".into(), true.into());
    r.insert("msg".into(), msg.into());
    r
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    match execute_module(ctx, &p) {
        Ok(r) | Err(r) => r,
    }
}

fn execute_module(ctx: Ctx, p: &Params) -> Outcome<ModuleResult> {
    let mut svc = Svc {
        p,
        name: p.str("name").unwrap_or_default().to_string(),
        svc_cmd: None,
        initscript: None,
        enable_cmd: None,
        running: None,
        changed: false,
        check: ctx.check_mode,
    };
    let mut result = ModuleResult::new();
    result.insert("name".into(), svc.name.clone().into());
    svc.tools()?;
    let enabled = p.get("enabled").as_bool();
    if let Some(want) = enabled {
        svc.enable(want)?;
        result.insert("enabled".into(), want.into());
    }
    let Some(state) = p.str("state").map(str::to_string) else {
        result.insert("changed".into(), svc.changed.into());
        return Ok(result);
    };
    result.insert("state".into(), state.clone().into());
    if p.is_set("pattern") && !p.str("pattern").unwrap_or_default().is_empty() {
        svc.check_ps()?;
    } else {
        svc.status();
    }
    let Some(running) = svc.running else {
        return Err(fail("failed determining service state, possible typo of service name?"));
    };
    let change = match state.as_str() {
        "reloaded" | "started" if !running => true,
        "reloaded" | "stopped" if running => true,
        "restarted" => true,
        _ => false,
    };
    if ctx.check_mode && change {
        return Ok(checked_exit("service state changed"));
    }
    if change {
        let action = match state.as_str() {
            "started" => "start",
            "reloaded" if !running => "start",
            "stopped" => "stop",
            "reloaded" => "reload",
            _ => "restart",
        };
        let (rc, out, err) = svc.control(action);
        if rc != 0 && !err.contains("Job is already running") {
            return Err(fail(if err.is_empty() { out } else { err }));
        }
    }
    result.insert("changed".into(), (svc.changed | change).into());
    if let Some(want) = enabled {
        result.insert("enabled".into(), want.into());
    }
    let shown = if state == "stopped" { "stopped" } else { "started" };
    result.insert("state".into(), Value::from(shown));
    Ok(result)
}
