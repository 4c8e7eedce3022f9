//! `ansible.builtin.command` and `ansible.builtin.shell` (ansible runs the latter as the
//! command module with `_uses_shell`): runs one program, honouring `creates`/`removes`,
//! `chdir` and `stdin`. It never changes the agent's own working directory: `chdir` applies
//! to the child only, and relative `creates`/`removes` patterns are taken from it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use serde_json::Value;

use super::argspec::{Elem, Kind, Opt, Spec};
use super::common::{delta, fail_with_cause, failed, shlex_split, timestamp, warn};
use super::{Ctx, Invocation, ModuleResult, glob};

/// The name ansible's command and shell actions give the module they run.
const ACTION_NAME: &str = "ansible.legacy.command";

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("_raw_params", Kind::Str),
            Opt::new("_uses_shell", Kind::Bool).default(false),
            Opt::new("cmd", Kind::Str),
            Opt::new("argv", Kind::List(Some(Elem::Str))),
            Opt::new("chdir", Kind::Path),
            Opt::new("executable", Kind::Str),
            Opt::new("expand_argument_vars", Kind::Bool).default(true),
            Opt::new("creates", Kind::Path),
            Opt::new("removes", Kind::Path),
            Opt::new("stdin", Kind::Str),
            Opt::new("stdin_add_newline", Kind::Bool).default(true),
            Opt::new("strip_empty_ends", Kind::Bool).default(true),
        ],
        required_one_of: &[&["_raw_params", "cmd", "argv"]],
        mutually_exclusive: &[&["_raw_params", "cmd", "argv"]],
        ..Spec::default()
    }
}

/// The command to run: a shell string or an argument vector.
enum Args {
    Line(String),
    Argv(Vec<String>),
}

pub(super) fn run(ctx: Ctx, inv: &Invocation, as_shell: bool) -> ModuleResult {
    if as_shell && inv.args.contains_key("expand_argument_vars") {
        return super::common::fail(format!(
            "Unsupported parameters for ({}) module: expand_argument_vars",
            ctx.name
        ));
    }
    let mut inv = inv.clone();
    if as_shell {
        inv.args.insert("_uses_shell".into(), Value::Bool(true));
    }
    let ctx = Ctx { name: ACTION_NAME, ..ctx };
    let p = match ctx.params(&spec(), &inv) {
        Ok(p) => p,
        Err(failure) => return failure,
    };
    let shell = p.bool("_uses_shell");
    let mut executable = p.str("executable").map(str::to_string).filter(|e| !e.is_empty());
    let mut r = ModuleResult::new();
    for (k, v) in [
        ("changed", Value::Bool(false)),
        ("stdout", Value::from("")),
        ("stderr", Value::from("")),
        ("rc", Value::Null),
        ("cmd", Value::Null),
        ("start", Value::Null),
        ("end", Value::Null),
        ("delta", Value::Null),
        ("msg", Value::from("")),
    ] {
        r.insert(k.into(), v);
    }
    if !shell && let Some(exe) = executable.take() {
        warn(
            &mut r,
            &format!(
                "As of Ansible 2.4, the parameter 'executable' is no longer supported with the 'command' module. Not using '{exe}'."
            ),
        );
    }
    let line =
        p.str("_raw_params").filter(|s| !s.is_empty()).or(p.str("cmd").filter(|s| !s.is_empty()));
    let args = match line {
        Some(line) if shell => Args::Line(line.to_string()),
        Some(line) => match shlex_split(line) {
            Some(words) => Args::Argv(words),
            None => return super::common::fail("No closing quotation"),
        },
        None => Args::Argv(
            p.get("argv")
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        ),
    };
    r.insert(
        "cmd".into(),
        match &args {
            Args::Line(s) => Value::from(s.clone()),
            Args::Argv(v) => Value::from(v.clone()),
        },
    );
    // Path options expand against the task's environment, which the module's process has in
    // ansible; validation expanded them against the agent's own.
    let task_env = super::environment::TaskEnv(&inv.environment);
    let path_opt = |name: &str| -> Option<String> {
        let value = p.str(name).filter(|s| !s.is_empty())?;
        if inv.environment.is_empty() {
            return Some(value.to_string());
        }
        let raw = inv.args.get(name).and_then(Value::as_str).unwrap_or(value);
        Some(super::argspec::expand_path_in(raw, &task_env))
    };
    let chdir = path_opt("chdir");
    if let Some(dir) = &chdir {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                let err = std::io::Error::from_raw_os_error(libc::ENOTDIR);
                return fail_with_cause(
                    r,
                    "Unable to change directory before execution.",
                    &tack_py::oserror::os_error_bytes(&err, str::as_bytes(dir)),
                );
            }
            Err(err) => {
                return fail_with_cause(
                    r,
                    "Unable to change directory before execution.",
                    &tack_py::oserror::os_error_bytes(&err, str::as_bytes(dir)),
                );
            }
        }
    }
    let in_dir = |pattern: &str| match &chdir {
        Some(dir) if !pattern.starts_with('/') => format!("{dir}/{pattern}"),
        _ => pattern.to_string(),
    };
    let shoulda = if ctx.check_mode { "Would" } else { "Did" };
    let creates = path_opt("creates");
    let removes = path_opt("removes");
    let (creates, removes) = (creates.as_deref(), removes.as_deref());
    let mut skipped = None;
    if let Some(c) = creates
        && glob::any_match(&in_dir(c))
    {
        skipped = Some((
            format!("{shoulda} not run command since '{c}' exists"),
            format!("skipped, since {c} exists"),
        ));
    }
    if skipped.is_none()
        && let Some(rm) = removes
        && !glob::any_match(&in_dir(rm))
    {
        skipped = Some((
            format!("{shoulda} not run command since '{rm}' does not exist"),
            format!("skipped, since {rm} does not exist"),
        ));
    }
    if let Some((msg, stdout)) = skipped {
        r.insert("msg".into(), Value::from(msg));
        r.insert("stdout".into(), Value::from(stdout));
        r.insert("rc".into(), Value::from(0));
        return r;
    }
    r.insert("changed".into(), Value::Bool(true));
    if ctx.check_mode {
        r.insert("rc".into(), Value::from(0));
        r.insert("msg".into(), Value::from("Command would have run if not in check mode"));
        if creates.is_none() && removes.is_none() {
            r.insert("skipped".into(), Value::Bool(true));
            r.insert("changed".into(), Value::Bool(false));
        }
        return r;
    }
    let argv: Vec<String> = match &args {
        Args::Argv(words) if shell => vec![
            executable.clone().unwrap_or_else(|| "/bin/sh".into()),
            "-c".into(),
            words.iter().map(|w| tack_py::shlex::quote(w)).collect::<Vec<_>>().join(" "),
        ],
        Args::Line(line) => {
            vec![executable.clone().unwrap_or_else(|| "/bin/sh".into()), "-c".into(), line.clone()]
        }
        Args::Argv(words) if p.bool("expand_argument_vars") => {
            let env = super::environment::TaskEnv(&inv.environment);
            words.iter().map(|w| super::argspec::expand_path_in(w, &env)).collect()
        }
        Args::Argv(words) => words.clone(),
    };
    let stdin = p.str("stdin").filter(|s| !s.is_empty()).map(|s| {
        let mut data = s.to_string();
        if p.bool("stdin_add_newline") {
            data.push('\n');
        }
        data
    });
    let started = SystemTime::now();
    let clock = Instant::now();
    let env = super::environment::TaskEnv(&inv.environment);
    let outcome = spawn(&argv, chdir.as_deref(), stdin.as_deref(), &env, inv.timeout);
    let ended = SystemTime::now();
    let (rc, stdout, stderr) = match outcome {
        Ok(done) => done,
        Err(err) if err.kind() == std::io::ErrorKind::TimedOut => {
            let mut f = ModuleResult::new();
            f.insert("failed".into(), Value::Bool(true));
            let mut period = serde_json::Map::new();
            period.insert("period".into(), Value::from(inv.timeout.unwrap_or_default()));
            f.insert("timedout".into(), Value::Object(period));
            return f;
        }
        Err(err) => {
            let program = argv.first().map(String::as_str).unwrap_or_default();
            let mut f = ModuleResult::new();
            f.insert("rc".into(), Value::from(err.raw_os_error().unwrap_or(257)));
            f.insert("stdout".into(), Value::from(""));
            f.insert("stderr".into(), Value::from(""));
            f.insert("cmd".into(), Value::from(clean_args(&argv)));
            return fail_with_cause(
                f,
                "Error executing command.",
                &tack_py::oserror::os_error_bytes(&err, str::as_bytes(program)),
            );
        }
    };
    r.insert("rc".into(), Value::from(rc));
    r.insert("start".into(), Value::from(timestamp(started)));
    r.insert("end".into(), Value::from(timestamp(ended)));
    r.insert("delta".into(), Value::from(delta(clock.elapsed())));
    let (stdout, stderr) = if p.bool("strip_empty_ends") {
        (
            stdout.trim_end_matches(['\r', '\n']).to_string(),
            stderr.trim_end_matches(['\r', '\n']).to_string(),
        )
    } else {
        (stdout, stderr)
    };
    r.insert("stdout".into(), Value::from(stdout));
    r.insert("stderr".into(), Value::from(stderr));
    if rc != 0 {
        return failed(r, "The command exited with a non-zero return code.");
    }
    r
}

/// `_clean_args`: the command line for a failure report, with password arguments masked.
pub(super) fn clean_args(argv: &[String]) -> String {
    let mut out = Vec::new();
    let mut hide_next = false;
    for arg in argv {
        if hide_next {
            hide_next = false;
            out.push("********".to_string());
            continue;
        }
        if is_password_flag(arg) {
            match arg.find('=') {
                Some(i) => {
                    out.push(format!("{}=********", &arg[..i]));
                    continue;
                }
                None => hide_next = true,
            }
        }
        out.push(arg.clone());
    }
    out.iter().map(|a| tack_py::shlex::quote(a)).collect::<Vec<_>>().join(" ")
}

/// `^[-]{0,2}pass[-]?(word|wd)?`, matched at the start.
fn is_password_flag(arg: &str) -> bool {
    let rest = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')).unwrap_or(arg);
    rest.starts_with("pass")
}

/// Runs `argv` with its output captured, killed with its process group after `timeout`
/// seconds when given (an `Err` of kind `TimedOut` then).
pub(super) fn spawn(
    argv: &[String],
    cwd: Option<&str>,
    stdin: Option<&str>,
    env: &super::environment::TaskEnv<'_>,
    timeout: Option<u64>,
) -> std::io::Result<(i32, String, String)> {
    let Some((program, rest)) = argv.split_first() else {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    };
    crate::descendants::hold_if_ending();
    let mut command = Command::new(program);
    env.apply(&mut command);
    super::environment::limit(&mut command);
    // Its own session (or, with isolation off, process group): a timeout kills what a shell
    // started too (their pipes would keep the wait below open).
    crate::session::detach(&mut command);
    command.args(rest).stdout(Stdio::piped()).stderr(Stdio::piped());
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn()?;
    let watchdog = timeout.map(|secs| watchdog(child.id(), secs));
    if let (Some(data), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A child that exits without reading its input is not an error of the module's.
        let _ = pipe.write_all(data.as_bytes());
    }
    let (status, stdout, stderr) = super::pipes::collect(&mut child)?;
    if let Some((done, fired)) = watchdog {
        // The watchdog may already be gone (it fired); nothing is left to tell it then.
        let _ = done.send(());
        if fired.join().unwrap_or(false) {
            return Err(std::io::Error::from(std::io::ErrorKind::TimedOut));
        }
    }
    let rc = match status.code() {
        Some(code) => code,
        None => {
            use std::os::unix::process::ExitStatusExt;
            -status.signal().unwrap_or(0)
        }
    };
    Ok((
        rc,
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    ))
}

/// Kills process group `pid` after `secs` seconds unless told the child is done first; the
/// thread's result says whether it fired.
fn watchdog(pid: u32, secs: u64) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<bool>) {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        match wait.recv_timeout(std::time::Duration::from_secs(secs)) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                // SAFETY: kill has no memory preconditions; a group already gone gives ESRCH.
                unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
                true
            }
            _ => false,
        }
    });
    (done, handle)
}
