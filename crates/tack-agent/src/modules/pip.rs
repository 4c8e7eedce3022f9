//! `ansible.builtin.pip`: installs, upgrades, reinstalls or removes Python packages with the
//! pip of a virtualenv (made first when missing) or of a named `executable`, and in check
//! mode reads `pip list`/`pip freeze` to say whether anything would change. Runs pip and the
//! virtualenv command only; it never edits a site-packages directory itself. The requirement
//! grammar lives in `pip_req.rs`.
//!
//! tack's agent is no Python interpreter: where ansible falls back to its own
//! (`sys.executable`: pip without `virtualenv` or `executable`, a `virtualenv` tool without
//! `virtualenv_python`) the task is refused by name before anything runs. So is check mode
//! with a name that is not a requirement (a URL, a path), which ansible resolves through
//! `pip install --report`.

use std::path::Path;

use serde_json::Value;

use super::argspec::{Kind, Opt, Spec, expand_path};
use super::common::{fail, shlex_split, warn};
use super::pip_req::{Package, canonicalize, recover_package_names};
use super::{Ctx, Invocation, ModuleResult, group};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("state", Kind::Str).default("present").choices(&[
                "present",
                "absent",
                "latest",
                "forcereinstall",
            ]),
            Opt::new("name", Kind::List(Some(super::argspec::Elem::Str))),
            Opt::new("version", Kind::Str),
            Opt::new("requirements", Kind::Str),
            Opt::new("virtualenv", Kind::Path),
            Opt::new("virtualenv_site_packages", Kind::Bool).default(false),
            Opt::new("virtualenv_command", Kind::Path).default("virtualenv"),
            Opt::new("virtualenv_python", Kind::Str),
            Opt::new("extra_args", Kind::Str),
            Opt::new("editable", Kind::Bool).default(false),
            Opt::new("chdir", Kind::Path),
            Opt::new("executable", Kind::Path),
            Opt::new("umask", Kind::Str),
            Opt::new("break_system_packages", Kind::Bool).default(false),
        ],
        required_one_of: &[&["name", "requirements"]],
        mutually_exclusive: &[
            &["name", "requirements"],
            &["executable", "virtualenv"],
            &["editable", "requirements"],
        ],
        ..Spec::default()
    }
}

/// How one run of the module talks to the commands it starts.
struct Runner {
    extra_env: Vec<(String, String)>,
    /// The `umask` argument, set in each command's own process: the module may share its
    /// process with modules of other hosts running at the same time (`forks`), whose files
    /// must not get this mask.
    umask: Option<libc::mode_t>,
}

/// `run_command` as ansible calls it here: `~` and `$VAR` expanded in every argument, an
/// invalid `cwd` ignored, `path_prefix` put before `PATH`.
impl Runner {
    fn run(
        &self,
        argv: &[String],
        cwd: &str,
        path_prefix: Option<&str>,
        env: &[(&str, &str)],
    ) -> Result<(i32, String, String), ModuleResult> {
        let argv: Vec<String> = argv.iter().map(|a| expand_path(a)).collect();
        let mut cmd = super::environment::command(&argv[0]);
        cmd.args(&argv[1..]);
        if Path::new(cwd).is_dir() {
            cmd.current_dir(cwd);
        }
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        if let Some(mask) = self.umask {
            use std::os::unix::process::CommandExt;
            // SAFETY: the closure runs in the forked child before exec and calls only
            // umask(2), which is async-signal-safe and cannot fail.
            unsafe {
                cmd.pre_exec(move || {
                    libc::umask(mask);
                    Ok(())
                });
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(prefix) = path_prefix {
            let path = super::environment::var("PATH").unwrap_or_default();
            cmd.env(
                "PATH",
                if path.is_empty() { prefix.to_string() } else { format!("{prefix}:{path}") },
            );
        }
        super::common::command_output(&mut cmd, &argv)
    }
}

/// `_fail`: pip's output as the message, the command that failed as `cmd`.
fn pip_failure(cmd: &[String], out: &str, err: &str) -> ModuleResult {
    let mut msg = String::new();
    if !out.is_empty() {
        msg.push_str(&format!("stdout: {out}"));
    }
    if !err.is_empty() {
        msg.push_str(&format!("\n:stderr: {err}"));
    }
    let mut r = fail(msg);
    r.insert("cmd".into(), strings(cmd));
    r
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().map(|s| Value::from(s.as_str())).collect())
}

/// `os.path.join(a, b)`.
fn join(a: &str, b: &str) -> String {
    if b.starts_with('/') || a.is_empty() {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

fn is_executable_file(p: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `get_bin_path(name, required=False)`.
fn find_bin(name: &str) -> Option<String> {
    let path = super::environment::var("PATH").unwrap_or_default();
    let mut dirs: Vec<&str> = path.split(':').collect();
    for extra in ["/sbin", "/usr/sbin", "/usr/local/sbin"] {
        if !dirs.contains(&extra) && Path::new(extra).exists() {
            dirs.push(extra);
        }
    }
    dirs.iter()
        .filter(|d| !d.is_empty())
        .map(|d| join(d, name))
        .find(|full| is_executable_file(full) && !Path::new(full).is_dir())
}

/// `_is_venv_command`: `pyvenv`, or a command line with `-m venv`.
fn is_venv_command(argv: &[String]) -> bool {
    if argv.first().is_some_and(|a| a == "pyvenv") {
        return true;
    }
    let mut module = None;
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        if a == "-m" {
            module = it.next().cloned();
        } else if let Some(v) = a.strip_prefix("-m=") {
            module = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("-m") {
            module = Some(v.to_string());
        }
    }
    module.as_deref() == Some("venv")
}

/// `_get_packages`: `pip list --format=freeze`, or `pip freeze` where that fails.
fn installed(
    runner: &Runner,
    pip: &[String],
    chdir: &str,
) -> Result<(String, String, String), ModuleResult> {
    let mut command = pip.to_vec();
    command.extend(["list".into(), "--format=freeze".into()]);
    let loc = super::common::best_parsable_locale();
    let env = [("LANG", loc.as_str()), ("LC_ALL", loc.as_str()), ("LC_MESSAGES", loc.as_str())];
    let (mut rc, mut out, mut err) = runner.run(&command, chdir, None, &env)?;
    if rc != 0 {
        command = pip.to_vec();
        command.push("freeze".into());
        (rc, out, err) = runner.run(&command, chdir, None, &[])?;
        if rc != 0 {
            return Err(pip_failure(&command, &out, &err));
        }
    }
    Ok((command.join(" "), out, err))
}

fn changed_only(changed: bool) -> ModuleResult {
    let mut r = ModuleResult::new();
    r.insert("changed".into(), changed.into());
    r
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    match main(ctx, &p) {
        Ok(r) | Err(r) => r,
    }
}

fn main(ctx: Ctx, p: &super::argspec::Params) -> Result<ModuleResult, ModuleResult> {
    let state = p.str("state").unwrap_or("present").to_string();
    let name: Option<Vec<String>> = p.get("name").as_array().map(|items| {
        items
            .iter()
            .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
            .collect()
    });
    let version = p.str("version").map(str::to_string);
    let requirements = p.str("requirements").map(str::to_string);
    let extra_args = p.str("extra_args").map(str::to_string);
    let executable = p.str("executable").map(str::to_string);
    let editable = p.bool("editable");
    let mut chdir = p.str("chdir").map(str::to_string);
    let mut env = p.str("virtualenv").map(str::to_string);
    if let (Some(e), Some(c)) = (&env, &chdir) {
        env = Some(join(c, e));
    }
    let venv_argv = shlex_split(p.str("virtualenv_command").unwrap_or("virtualenv"))
        .filter(|a| !a.is_empty())
        .ok_or_else(|| fail("pip: tack could not split virtualenv_command as shlex would"))?;

    // What only a Python interpreter running the module could answer, refused up front.
    if env.is_none() && executable.is_none() {
        return Err(fail(
            "pip: tack runs pip only inside a `virtualenv` or through an `executable`; without \
             them ansible uses its own interpreter's pip, which tack's agent does not have",
        ));
    }
    let name_list = name.as_deref().filter(|n| !n.is_empty());
    let mut packages = Vec::new();
    if let Some(names) = name_list {
        for n in recover_package_names(names) {
            packages.push(Package::new(&n, None).map_err(|e| fail(e.to_string()))?);
        }
        if ctx.check_mode
            && matches!(state.as_str(), "present" | "absent" | "forcereinstall")
            && extra_args.is_none()
            && packages.iter().any(|p| !p.has_requirement())
        {
            return Err(fail(
                "pip: check mode with a name that is not a requirement (a URL or a path) is not \
                 supported by tack (ansible resolves it with `pip install --dry-run --report`)",
            ));
        }
    }

    let umask = match p.str("umask") {
        Some(u) => match u32::from_str_radix(u, 8) {
            Ok(m) => Some(m as libc::mode_t),
            Err(e) => {
                let mut r = fail("umask must be an octal integer");
                r.insert("details".into(), Value::from(py_int_error(u, &e)));
                return Err(r);
            }
        },
        None => None,
    };
    let mut runner = Runner { extra_env: Vec::new(), umask };
    if state == "latest" && version.is_some() {
        return Err(fail("version is incompatible with state=latest"));
    }
    let chdir_s = chdir.take().unwrap_or_else(|| {
        super::environment::temp_dir().to_string_lossy().trim_end_matches('/').to_string()
    });
    let chdir = chdir_s.as_str();
    let (mut out, mut err) = (String::new(), String::new());
    let mut venv_cmd: Option<Vec<String>> = None;
    let py_bin;
    if let Some(e) = &env {
        if !Path::new(&join(e, "bin/activate")).exists() {
            if ctx.check_mode {
                return Ok(changed_only(true));
            }
            let cmd = make_venv(&runner, p, &venv_argv, e, chdir, &mut out, &mut err)?;
            venv_cmd = Some(cmd);
        }
        py_bin = join(e, "bin/python");
    } else {
        py_bin = executable.clone().unwrap_or_default();
    }
    let pip = find_pip(env.as_deref(), executable.as_deref())?;
    let mut cmd = pip.clone();
    cmd.extend(
        match state.as_str() {
            "absent" => &["uninstall", "-y"][..],
            "latest" => &["install", "-U"][..],
            "forcereinstall" => &["install", "-U", "--force-reinstall"][..],
            _ => &["install"][..],
        }
        .iter()
        .map(|s| s.to_string()),
    );
    let path_prefix = env.as_ref().map(|e| join(e, "bin"));
    let has_vcs = name_list.is_some_and(|n| n.iter().any(|s| is_vcs_url(s)));
    if let Some(v) = &version {
        if packages.len() > 1 {
            return Err(fail(
                "'version' argument is ambiguous when installing multiple package distributions. \
                 Please specify version restrictions next to each package in 'name' argument.",
            ));
        }
        if let Some(first) = packages.first_mut() {
            if first.has_version_specifier() {
                return Err(fail(
                    "The 'version' argument conflicts with any version specifier provided along \
                     with a package name. Please keep the version specifier, but remove the \
                     'version' argument.",
                ));
            }
            *first = Package::new(&first.render(), Some(v)).map_err(|e| fail(e.to_string()))?;
        }
    }
    if let Some(x) = &extra_args {
        cmd.extend(
            shlex_split(x)
                .ok_or_else(|| fail("pip: tack could not split extra_args as shlex would"))?,
        );
    }
    if p.bool("break_system_packages") {
        runner.extra_env.push(("PIP_BREAK_SYSTEM_PACKAGES".into(), "1".into()));
    }
    let full = |changed: bool, cmd: Value, out: &str, err: &str| {
        let mut r = changed_only(changed);
        r.insert("cmd".into(), cmd);
        r.insert("name".into(), name.as_ref().map_or(Value::Null, |n| strings(n)));
        r.insert("version".into(), version.clone().map_or(Value::Null, Value::from));
        r.insert("state".into(), Value::from(state.as_str()));
        r.insert("requirements".into(), requirements.clone().map_or(Value::Null, Value::from));
        r.insert("virtualenv".into(), env.clone().map_or(Value::Null, Value::from));
        r.insert("stdout".into(), Value::from(out));
        r.insert("stderr".into(), Value::from(err));
        r
    };
    if name_list.is_some() {
        for pkg in &packages {
            if editable {
                cmd.push("-e".into());
            }
            cmd.push(pkg.render());
        }
    } else if let Some(r) = &requirements {
        cmd.extend(["-r".to_string(), r.clone()]);
    } else if let Some(vc) = &venv_cmd {
        return Ok(full(true, strings(vc), &out, &err));
    } else {
        let mut r = changed_only(false);
        warn(&mut r, "No valid name or requirements file found.");
        return Ok(r);
    }

    if ctx.check_mode {
        if extra_args.is_some()
            || requirements.is_some()
            || state == "latest"
            || name_list.is_none()
        {
            return Ok(changed_only(true));
        }
        let (pkg_cmd, o, e) = installed(&runner, &pip, chdir)?;
        out.push_str(&o);
        err.push_str(&e);
        let mut list: Vec<String> = out
            .split('\n')
            .filter(|l| {
                !l.is_empty()
                    && !l.starts_with("You are using")
                    && !l.starts_with("You should consider")
            })
            .map(str::to_string)
            .collect();
        let names = name_list.unwrap_or_default();
        if pkg_cmd.ends_with(" freeze") {
            for special in ["setuptools", "pip"] {
                if names.iter().any(|n| n == special)
                    && let Some(dep) = special_version(&runner, special, &py_bin)
                {
                    out.push_str(&format!("{dep}\n"));
                    list.push(dep);
                }
            }
        }
        let changed = packages.iter().any(|pkg| {
            let present = list.iter().any(|line| {
                line.split_once("==").is_some_and(|(n, v)| {
                    !v.contains("==")
                        && canonicalize(n) == pkg.package_name
                        && pkg.is_satisfied_by(v)
                })
            });
            (state == "present" && !present) || (state == "absent" && present)
        });
        let mut r = changed_only(changed);
        r.insert("cmd".into(), Value::from(pkg_cmd));
        r.insert("stdout".into(), Value::from(out));
        r.insert("stderr".into(), Value::from(err));
        return Ok(r);
    }

    let freeze_before = if requirements.is_some() || has_vcs {
        Some(installed(&runner, &pip, chdir)?.1)
    } else {
        None
    };
    let (rc, o, e) = runner.run(&cmd, chdir, path_prefix.as_deref(), &[])?;
    out.push_str(&o);
    err.push_str(&e);
    let not_installed = rc == 1
        && state == "absent"
        && (o.contains("not installed") || e.contains("not installed"));
    if rc != 0 && !not_installed {
        return Err(pip_failure(&cmd, &out, &err));
    }
    let changed = if state == "absent" {
        o.contains("Successfully uninstalled")
    } else if let Some(before) = freeze_before {
        installed(&runner, &pip, chdir)?.1 != before
    } else {
        o.contains("Successfully installed")
    };
    Ok(full(changed || venv_cmd.is_some(), strings(&cmd), &out, &err))
}

/// Python's `int(u, 8)` error text.
fn py_int_error(u: &str, _e: &std::num::ParseIntError) -> String {
    format!("invalid literal for int() with base 8: {}", super::pyfmt::py_repr(&Value::from(u)))
}

fn is_vcs_url(name: &str) -> bool {
    ["svn+", "git+", "hg+", "bzr+"].iter().any(|p| name.starts_with(p))
}

/// `setup_virtualenv` (its check-mode exit is the caller's).
fn make_venv(
    runner: &Runner,
    p: &super::argspec::Params,
    argv: &[String],
    env: &str,
    chdir: &str,
    out: &mut String,
    err: &mut String,
) -> Result<Vec<String>, ModuleResult> {
    if !is_venv_command(argv) && p.str("virtualenv_python").is_none() {
        // Refused before the virtualenv tool runs at all.
        return Err(fail(
            "pip: a `virtualenv_command` other than `python -m venv` needs `virtualenv_python` \
             in tack (ansible would pass its own interpreter)",
        ));
    }
    let mut cmd = argv.to_vec();
    if Path::new(&cmd[0]).file_name().is_some_and(|b| b.to_string_lossy() == cmd[0]) {
        cmd[0] = group::bin_path(&cmd[0])?;
    }
    if p.bool("virtualenv_site_packages") {
        cmd.push("--system-site-packages".into());
    } else {
        let help = format!("{} --help", cmd[0]);
        let help_argv = shlex_split(&help).unwrap_or_else(|| vec![cmd[0].clone(), "--help".into()]);
        let (rc, o, e) = runner.run(&help_argv, ".", None, &[])?;
        if rc != 0 {
            return Err(fail(format!("Could not get output from {help}: {o}{e}")));
        }
        if o.split_whitespace().any(|w| w == "--no-site-packages") {
            cmd.push("--no-site-packages".into());
        }
    }
    let python = p.str("virtualenv_python");
    if !is_venv_command(argv) {
        // Refused at the start of make_venv: without virtualenv_python ansible would pass its interpreter.
        if let Some(py) = python {
            cmd.push(format!("-p{py}"));
        }
    } else if python.is_some() {
        return Err(fail(
            "virtualenv_python should not be used when using the venv module or pyvenv as \
             virtualenv_command",
        ));
    }
    cmd.push(env.to_string());
    let (rc, o, e) = runner.run(&cmd, chdir, None, &[])?;
    out.push_str(&o);
    err.push_str(&e);
    if rc != 0 {
        return Err(pip_failure(&cmd, out, err));
    }
    Ok(cmd)
}

/// `_get_pip` with a virtualenv or an executable (the interpreter's own pip is refused).
fn find_pip(env: Option<&str>, executable: Option<&str>) -> Result<Vec<String>, ModuleResult> {
    if let Some(x) = executable {
        if x.starts_with('/') {
            return Ok(vec![x.to_string()]);
        }
        return match find_bin(x) {
            Some(p) => Ok(vec![p]),
            None => {
                Err(fail(format!("Unable to find any of {x} to use.  pip needs to be installed.")))
            }
        };
    }
    let env = env.unwrap_or_default();
    let dir = join(env, "bin");
    for base in ["pip3", "pip"] {
        let candidate = join(&dir, base);
        if Path::new(&candidate).exists() && is_executable_file(&candidate) {
            return Ok(vec![candidate]);
        }
    }
    Err(fail(format!(
        "Unable to find pip in the virtualenv, {env}, under any of these names: pip3, pip. Make \
         sure pip is present in the virtualenv."
    )))
}

/// `_get_package_info`: `pip==X` / `setuptools==X` from the interpreter's metadata.
fn special_version(runner: &Runner, package: &str, python: &str) -> Option<String> {
    if python.is_empty() {
        return None;
    }
    let py = python.to_string();
    let importlib = runner
        .run(&[py.clone(), "-c".into(), "import importlib.metadata".into()], ".", None, &[])
        .ok()?
        .0
        == 0;
    let code = match (importlib, package) {
        (true, _) => {
            format!("from importlib.metadata import version; print(version(\"{package}\"))")
        }
        (false, "setuptools") => "import setuptools; print(setuptools.__version__)".to_string(),
        (false, _) => {
            "import pkg_resources; print(pkg_resources.get_distribution(\"pip\").version)"
                .to_string()
        }
    };
    match runner.run(&[py, "-c".into(), code], ".", None, &[]).ok()? {
        (0, o, _) => Some(format!("{package}=={}", o.trim())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::modules::{Invocation, run_module};

    fn run(args: Value, check_mode: bool) -> crate::modules::ModuleResult {
        let inv = Invocation {
            args: args.as_object().cloned().unwrap_or_default(),
            check_mode,
            ..Invocation::default()
        };
        run_module("pip", &inv).unwrap()
    }

    fn refused(r: &crate::modules::ModuleResult, needle: &str) -> bool {
        r["failed"] == Value::Bool(true) && r["msg"].as_str().is_some_and(|m| m.contains(needle))
    }

    /// What needs ansible's own interpreter is refused, naming the option, and nothing is made.
    #[test]
    fn interpreter_fallbacks_are_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("tack-pip-refuse-{}", std::process::id()));
        let venv = dir.join("venv").to_string_lossy().into_owned();
        let r = run(json!({"name": ["six"]}), false);
        assert!(refused(&r, "`virtualenv` or through an `executable`"), "{r:?}");
        let r = run(
            json!({"name": ["six"], "virtualenv": venv, "virtualenv_command": "virtualenv"}),
            false,
        );
        assert!(refused(&r, "needs `virtualenv_python`"), "{r:?}");
        assert!(!dir.exists());
        let r = run(json!({"name": ["./pkg"], "executable": "/nonexistent/pip"}), true);
        assert!(refused(&r, "check mode with a name that is not a requirement"), "{r:?}");
        let r = run(
            json!({"name": ["six; python_version>'3'"], "executable": "/nonexistent/pip"}),
            false,
        );
        assert!(refused(&r, "environment markers"), "{r:?}");
    }
}
