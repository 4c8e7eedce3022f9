//! `reboot`, as ansible-core 2.21's action plugin runs it: a `setup` for the distribution,
//! the boot id read with a bare command, the shutdown program found (`reboot_command`'s
//! first word, or the distribution's, looked up with `find` over `search_paths` unless it is
//! absolute), the shutdown line run, then the boot id read again until it changes and the
//! test command run until it succeeds, each wait bounded by `reboot_timeout` and retried with
//! ansible's back-off.
//!
//! Unlike ansible, which keeps its connection object across the reboot, the link is dropped
//! once the shutdown line has gone out and a fresh one opened for the first check, and again
//! after any check the link failed; `connect_timeout` sets each such link's ssh
//! `ConnectTimeout` only. An empty boot id is not a new boot. The task's `timeout:` bounds
//! the whole run, waits included. A local host is refused, as ansible refuses it.
//!
//! Owns the sequence and its messages; the commands run over the task's link
//! (`exec_command`, as the become user when there is one).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value as Json};
use tack_agent::Invocation;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use crate::shell_run;
use tack_links::{Connection, ConnectionError, ExecOutput};
use tack_report::result::{b, s};

/// The arguments ansible's plugin takes (`_VALID_ARGS`).
const VALID_ARGS: &[&str] = &[
    "boot_time_command",
    "connect_timeout",
    "msg",
    "post_reboot_delay",
    "pre_reboot_delay",
    "reboot_command",
    "reboot_timeout",
    "search_paths",
    "test_command",
];

const DEFAULT_SEARCH_PATHS: &[&str] =
    &["/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin"];

/// The host as the distribution tables read it.
struct Distribution {
    name: String,
    version: String,
    family: String,
}

impl Distribution {
    /// ansible's `_get_value_from_facts`: name and major version, then name, then family.
    fn pick<'t>(&self, table: &[(&str, &'t str)], default: &'t str) -> &'t str {
        let find = |key: &str| table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        find(&format!("{}{}", self.name, self.version))
            .or_else(|| find(&self.name))
            .or_else(|| find(&self.family))
            .unwrap_or(default)
    }
}

const BOOT_TIME_COMMANDS: &[(&str, &str)] = &[
    ("freebsd", "/sbin/sysctl kern.boottime"),
    ("openbsd", "/sbin/sysctl kern.boottime"),
    ("macosx", "who -b"),
    ("solaris", "who -b"),
    ("sunos", "who -b"),
    ("vmkernel", "grep booted /var/log/vmksummary.log | tail -n 1"),
    ("aix", "who -b"),
];
const SHUTDOWN_COMMANDS: &[(&str, &str)] = &[("alpine", "reboot"), ("vmkernel", "reboot")];
const DEFAULT_SHUTDOWN_ARGS: &str = "-r {delay_min} \"{message}\"";
const SHUTDOWN_COMMAND_ARGS: &[(&str, &str)] = &[
    ("alpine", ""),
    ("void", "-r +{delay_min} \"{message}\""),
    ("freebsd", "-r +{delay_sec}s \"{message}\""),
    ("linux", DEFAULT_SHUTDOWN_ARGS),
    ("macosx", "-r +{delay_min} \"{message}\""),
    ("openbsd", "-r +{delay_min} \"{message}\""),
    ("solaris", "-y -g {delay_sec} -i 6 \"{message}\""),
    ("sunos", "-y -g {delay_sec} -i 6 \"{message}\""),
    ("vmkernel", "-d {delay_sec}"),
    ("aix", "-Fr"),
];
const TEST_COMMANDS: &[(&str, &str)] = &[("solaris", "who"), ("vmkernel", "who")];

/// Why the run stopped early.
enum Stop {
    /// An ansible error the plugin raised: the task fails with `Task failed: <msg>`.
    Raised(String),
    /// The task's own `timeout:` ran out; `retrying`: while waiting to try a step again
    /// (ansible's timeout then interrupts an exception's handler, and shows as its own cause).
    TaskTimeout { retrying: bool },
    /// A result the plugin returned.
    Output(Box<ActionOutput>),
}

/// What a wait's step said when it did not succeed.
enum Retry {
    /// The link failed: the next try opens a fresh one.
    Link(String),
    Other(String),
}

/// The run's state: the link in use (replaced after a reboot or a failure), the task's
/// deadline.
struct Run<'i, 'a> {
    input: &'i ActionInput<'a>,
    link: Option<Arc<dyn Connection>>,
    deadline: Option<Instant>,
    connect_timeout: Option<u64>,
}

impl Run<'_, '_> {
    fn note(&self, text: String) {
        self.input.trace.note(text);
    }

    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Sleeps `period`, or until the task's deadline.
    fn sleep(&self, period: Duration, retrying: bool) -> Result<(), Stop> {
        let period = match self.deadline {
            Some(d) => period.min(d.saturating_duration_since(Instant::now())),
            None => period,
        };
        std::thread::sleep(period);
        if self.past_deadline() { Err(Stop::TaskTimeout { retrying }) } else { Ok(()) }
    }

    /// `_low_level_execute_command` over the link in use (the task's own until the reboot).
    fn exec(&mut self, cmd: &str) -> Result<ExecOutput, ConnectionError> {
        let cwd = shell_run::cwd(self.input);
        match &self.link {
            Some(link) => link.exec_command(cmd, &cwd),
            None => self.input.conn.exec_command(cmd, &cwd),
        }
    }

    /// A fresh link for the next check: the one before is closed.
    fn relink(&mut self) -> Result<(), Retry> {
        self.link = None;
        let link = (self.input.relink)(self.connect_timeout).map_err(Retry::Link)?;
        self.link = Some(link);
        Ok(())
    }
}

fn is_link_failure(e: &ConnectionError) -> bool {
    matches!(
        e,
        ConnectionError::Unreachable { .. }
            | ConnectionError::AgentDied { .. }
            | ConnectionError::Protocol { .. }
            | ConnectionError::Hello { .. }
            | ConnectionError::Spawn { .. }
            | ConnectionError::Install { .. }
    )
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// An argument as ansible reads a string one (`check_type_str` without conversion).
fn str_arg(input: &ActionInput<'_>, key: &str) -> Result<Option<String>, String> {
    match input.args.get(key).map(|n| &n.value) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(t) | Value::Unsafe(t)) => Ok(Some(t.clone())),
        Some(other) => Err(format!(
            "Invalid value given for '{key}': '{}' is not a string and conversion is not \
             allowed.",
            tack_yaml::pyrepr::repr(other)
        )),
    }
}

/// An integer argument as `int()` reads it, or ansible's error.
fn int_arg(input: &ActionInput<'_>, key: &str, default: i64) -> Result<i64, Stop> {
    match input.args.get(key).map(|n| &n.value) {
        None => Ok(default),
        Some(Value::Int(v)) => Ok(*v),
        Some(Value::Bool(v)) => Ok(i64::from(*v)),
        Some(Value::Float(f)) => Ok(f.trunc() as i64),
        Some(other) => {
            let shown = tack_yaml::pyrepr::str(other);
            shown.trim().parse::<i64>().map_err(|_| {
                Stop::Raised(format!(
                    "invalid literal for int() with base 10: {}",
                    tack_yaml::pyrepr::repr(other)
                ))
            })
        }
    }
}

fn delay(input: &ActionInput<'_>, key: &str) -> Result<u64, Stop> {
    Ok(int_arg(input, key, 0)?.max(0).unsigned_abs())
}

/// `get_distribution`: a `setup` of the `min` subset.
fn distribution(run: &Run<'_, '_>) -> Result<Distribution, Stop> {
    let mut args = Map::new();
    args.insert("gather_subset".into(), Json::String("min".into()));
    let invocation = Invocation { args, ..Default::default() };
    let facts = run
        .input
        .conn
        .run_module("setup", &invocation)
        .map_err(|e| Stop::Raised(format!("Failed to determine system distribution. {e}")))?;
    if facts.get("failed").and_then(Json::as_bool) == Some(true) {
        let said = |k: &str| facts.get(k).and_then(Json::as_str).unwrap_or_default().trim();
        return Err(Stop::Raised(format!(
            "Failed to determine system distribution. {}, {}",
            said("module_stdout"),
            said("module_stderr")
        )));
    }
    let fact = |k: &str| -> Result<String, Stop> {
        facts
            .get("ansible_facts")
            .and_then(|f| f.get(k))
            .and_then(Json::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                Stop::Raised(format!(
                    "Failed to get distribution information. Missing \"{k}\" in output."
                ))
            })
    };
    let name = fact("ansible_distribution")?.to_lowercase();
    let version = fact("ansible_distribution_version")?;
    let version = version.split('.').next().unwrap_or_default().to_string();
    let family = fact("ansible_os_family")?.to_lowercase();
    Ok(Distribution { name, version, family })
}

/// `get_system_boot_time`: the command's trimmed stdout, or ansible's error.
fn boot_time(run: &mut Run<'_, '_>, dist: &Distribution) -> Result<String, Retry> {
    let input = run.input;
    let command = match str_arg(input, "boot_time_command").map_err(Retry::Other)? {
        Some(cmd) if !cmd.is_empty() => cmd,
        _ => dist.pick(BOOT_TIME_COMMANDS, "cat /proc/sys/kernel/random/boot_id").to_string(),
    };
    let out = run.exec(&command).map_err(|e| {
        if is_link_failure(&e) { Retry::Link(e.to_string()) } else { Retry::Other(e.to_string()) }
    })?;
    if out.rc != 0 {
        return Err(Retry::Other(format!(
            "reboot: failed to get host boot time info, rc: {}, stdout: {}, stderr: {}",
            out.rc,
            text(&out.stdout),
            text(&out.stderr)
        )));
    }
    Ok(text(&out.stdout).trim().to_string())
}

/// `get_shutdown_command`: the program's path, found with `find` when not absolute.
fn shutdown_program(run: &Run<'_, '_>, dist: &Distribution) -> Result<String, Stop> {
    let program = match str_arg(run.input, "reboot_command").map_err(Stop::Raised)? {
        Some(cmd) => cmd.split(' ').next().unwrap_or_default().to_string(),
        None => dist.pick(SHUTDOWN_COMMANDS, "shutdown").to_string(),
    };
    if program.starts_with('/') {
        return Ok(program);
    }
    let paths: Vec<String> = match run.input.args.get("search_paths").map(|n| &n.value) {
        None => DEFAULT_SEARCH_PATHS.iter().map(|p| p.to_string()).collect(),
        Some(Value::Seq(items)) => items
            .iter()
            .map(|n| match &n.value {
                Value::Seq(_) | Value::Map(_) => None,
                v => Some(tack_yaml::pyrepr::str(v)),
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Stop::Raised(format!(
                    "'search_paths' must be a string or flat list of strings, got {}",
                    tack_yaml::pyrepr::str(&Value::Seq(items.clone()))
                ))
            })?,
        // `check_type_list` splits a string at its commas.
        Some(other) => {
            tack_yaml::pyrepr::str(other).split(',').map(|p| p.trim().to_string()).collect()
        }
    };
    let mut args = Map::new();
    args.insert("paths".into(), Json::Array(paths.iter().cloned().map(Json::String).collect()));
    args.insert("patterns".into(), Json::Array(vec![Json::String(program.clone())]));
    args.insert("file_type".into(), Json::String("any".into()));
    let invocation = Invocation { args, ..Default::default() };
    let found =
        run.input.conn.run_module("find", &invocation).map_err(|e| Stop::Raised(e.to_string()))?;
    // ansible shows the warnings of the modules an action runs.
    for warning in found.get("warnings").and_then(Json::as_array).into_iter().flatten() {
        let said = warning.pointer("/event/msg").or(Some(warning)).and_then(Json::as_str);
        if let Some(text) = said {
            tack_diag::warn(&tack_diag::Diagnostic::new(text.trim_end()));
        }
    }
    let first = found
        .get("files")
        .and_then(Json::as_array)
        .and_then(|files| files.first())
        .and_then(|f| f.get("path"))
        .and_then(Json::as_str);
    match first {
        Some(path) => Ok(path.to_string()),
        None => {
            let shown: Vec<String> = paths.iter().map(|p| tack_py::repr::str_repr(p)).collect();
            Err(Stop::Raised(format!(
                "Unable to find command \"{program}\" in search paths: [{}]",
                shown.join(", ")
            )))
        }
    }
}

/// `get_shutdown_command_args`.
fn shutdown_args(input: &ActionInput<'_>, dist: &Distribution) -> Result<String, Stop> {
    if let Some(cmd) = str_arg(input, "reboot_command").map_err(Stop::Raised)? {
        return Ok(cmd.split_once(' ').map(|(_, rest)| rest.to_string()).unwrap_or_default());
    }
    let pre = delay(input, "pre_reboot_delay")?;
    let message = input.text("msg").unwrap_or_else(|| "Reboot initiated by Ansible".into());
    Ok(dist
        .pick(SHUTDOWN_COMMAND_ARGS, DEFAULT_SHUTDOWN_ARGS)
        .replace("{delay_sec}", &pre.to_string())
        .replace("{delay_min}", &(pre / 60).to_string())
        .replace("{message}", &message))
}

/// `do_until_success_or_timeout`: `step` until it succeeds or `timeout` seconds pass, with
/// ansible's back-off (2^n seconds and a random fraction, at most 12) and its `-vvv` lines.
fn until_success(
    run: &mut Run<'_, '_>,
    timeout: i64,
    what: &str,
    mut step: impl FnMut(&mut Run<'_, '_>) -> Result<(), Retry>,
) -> Result<bool, Stop> {
    let end = Instant::now() + Duration::from_secs(timeout.max(0).unsigned_abs());
    let mut fails = 0u32;
    let mut last = String::new();
    while Instant::now() < end {
        let error = match step(run) {
            Ok(()) => return Ok(true),
            Err(Retry::Link(e)) => {
                // The next try opens a fresh link.
                run.link = None;
                e
            }
            Err(Retry::Other(e)) => e,
        };
        if run.past_deadline() {
            return Err(Stop::TaskTimeout { retrying: false });
        }
        let jitter = {
            let mut b = [0u8; 2];
            let _ = getrandom::fill(&mut b);
            f64::from(u16::from_le_bytes(b) % 1000) / 1000.0
        };
        let mut sleep = 2f64.powi(fails.min(16) as i32) + jitter;
        if sleep > 12.0 {
            sleep = 12.0 + jitter;
        }
        let error = error.lines().last().unwrap_or_default().to_string();
        last = format!("reboot: {what} fail '{error}'");
        run.note(format!("{last}, retrying in {sleep:.4} seconds..."));
        fails += 1;
        run.sleep(Duration::from_secs_f64(sleep), true)?;
    }
    if !last.is_empty() {
        run.note(format!("Last error message before the timeout exception - {last}"));
    }
    Ok(false)
}

fn int(v: u64) -> Node {
    Node::bare(Value::Int(i64::try_from(v).unwrap_or(i64::MAX)))
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if input.local_connection {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("elapsed"), int(0));
        data.insert(s("rebooted"), b(false));
        let msg = "Running reboot with local connection would reboot the control node.";
        return ActionOutput::action_failed(data, s(msg), input.task_origin.clone());
    }
    if input.check_mode {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(true));
        data.insert(s("elapsed"), int(0));
        data.insert(s("rebooted"), b(true));
        return ActionOutput::new(data);
    }
    let mut bad: Vec<String> = input
        .args
        .iter()
        .filter_map(|(k, _)| k.as_str().map(str::to_string))
        .filter(|k| !VALID_ARGS.contains(&k.as_str()))
        .collect();
    if !bad.is_empty() {
        // ansible joins them in set order, which changes between runs; tack sorts them.
        bad.sort();
        return shell_run::action_fail(
            input,
            &format!("Invalid options for reboot: {}", bad.join(",")),
        );
    }
    let deadline =
        input.timeout.filter(|t| *t > 0).map(|t| Instant::now() + Duration::from_secs(t));
    let connect_timeout = input
        .args
        .get("connect_timeout")
        .filter(|n| n.value.is_truthy())
        .map(|_| int_arg(input, "connect_timeout", 0));
    let connect_timeout = match connect_timeout.transpose() {
        Ok(t) => t.map(|t| t.max(0).unsigned_abs()),
        Err(stop) => return finish(input, stop),
    };
    let mut run = Run { input, link: None, deadline, connect_timeout };
    match reboot(&mut run) {
        Ok(out) => out,
        Err(stop) => finish(input, stop),
    }
}

fn finish(input: &ActionInput<'_>, stop: Stop) -> ActionOutput {
    match stop {
        Stop::Raised(msg) => super::copy::raised_through(input, &msg),
        Stop::TaskTimeout { retrying } => {
            super::module::task_timed_out(input, input.timeout.unwrap_or_default(), retrying)
        }
        Stop::Output(out) => *out,
    }
}

fn reboot(run: &mut Run<'_, '_>) -> Result<ActionOutput, Stop> {
    let input = run.input;
    let dist = distribution(run)?;
    let previous = match boot_time(run, &dist) {
        Ok(id) => id,
        Err(Retry::Link(msg) | Retry::Other(msg)) => {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            data.insert(s("reboot"), b(false));
            return Err(Stop::Output(Box::new(ActionOutput::action_failed(
                data,
                s(&msg),
                input.task_origin.clone(),
            ))));
        }
    };
    let program = shutdown_program(run, &dist)?;
    let args = shutdown_args(input, &dist)?;
    let line = format!("{program} {args}");
    run.note("reboot: rebooting server...".into());
    let said = run.exec(&line);
    let start = Instant::now();
    let started = SystemTime::now();
    // The link that sent the shutdown line is not used again: the first check opens a
    // fresh one (closing this).
    run.link = None;
    let elapsed = |data: &mut Mapping| {
        data.insert(s("elapsed"), int(start.elapsed().as_secs()));
    };
    match said {
        Ok(out) if out.rc != 0 => {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            data.insert(s("rebooted"), b(false));
            data.insert(s("start"), s(&tack_agent::modules::utc_isoformat(started)));
            elapsed(&mut data);
            let msg = format!(
                "Reboot command failed. Error was: '{}, {}'",
                text(&out.stdout).trim(),
                text(&out.stderr).trim()
            );
            return Ok(ActionOutput::action_failed(data, s(&msg), input.task_origin.clone()));
        }
        Ok(_) => {}
        // A link that fails as the host goes down is the reboot under way.
        Err(e) if is_link_failure(&e) => {}
        Err(e) => return Err(Stop::Raised(e.to_string())),
    }
    if run.past_deadline() {
        return Err(Stop::TaskTimeout { retrying: false });
    }
    let post = delay(input, "post_reboot_delay")?;
    if post != 0 {
        run.note(format!("reboot: waiting an additional {post} seconds"));
        run.sleep(Duration::from_secs(post), false)?;
    }
    run.note("reboot: validating reboot".into());
    let reboot_timeout = int_arg(input, "reboot_timeout", 600)?;
    let test_command =
        input.text("test_command").unwrap_or_else(|| dist.pick(TEST_COMMANDS, "whoami").into());
    let booted = until_success(run, reboot_timeout, "last boot time check", |run| {
        run.note("reboot: attempting to get system boot time".into());
        if run.link.is_none() || run.connect_timeout.is_some() {
            run.relink()?;
        }
        let now = boot_time(run, &dist)?;
        // An empty answer can come just before the host goes down: not a new boot.
        if now.is_empty() || now == previous {
            return Err(Retry::Other("boot time has not changed".into()));
        }
        Ok(())
    })?;
    let tested = booted
        && until_success(run, reboot_timeout, "post-reboot test command", |run| {
            run.note("reboot: attempting post-reboot test command".into());
            if run.link.is_none() {
                run.relink()?;
            }
            let out = run.exec(&test_command).map_err(|e| {
                if is_link_failure(&e) {
                    Retry::Link(e.to_string())
                } else {
                    Retry::Other(e.to_string())
                }
            })?;
            if out.rc != 0 {
                return Err(Retry::Other(format!(
                    "Test command failed: {} {}",
                    text(&out.stderr),
                    text(&out.stdout)
                )));
            }
            run.note("reboot: system successfully rebooted".into());
            Ok(())
        })?;
    if run.connect_timeout.is_some() {
        // ansible sets the connection's timeout back and resets it: later tasks get a link
        // opened the usual way.
        let _ = (input.relink)(None);
    }
    let mut data = Mapping::new();
    data.insert(s("rebooted"), b(true));
    if tested {
        data.insert(s("changed"), b(true));
        elapsed(&mut data);
        return Ok(ActionOutput::new(data));
    }
    let what = if booted { "post-reboot test command" } else { "last boot time check" };
    let msg = format!("Timed out waiting for {what} (timeout={reboot_timeout})");
    data.insert(s("changed"), b(false));
    elapsed(&mut data);
    Ok(ActionOutput::action_failed(data, s(&msg), input.task_origin.clone()))
}
