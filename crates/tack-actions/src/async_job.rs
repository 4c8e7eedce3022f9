//! `async`/`poll` on the controller, as ansible's task executor and `async_status` action
//! plugin do them: starting a task's module as a detached job over the host's link (its
//! job process is `tack_agent::jobs`), the immediate result of `poll: 0`, the poll loop
//! of `poll > 0` with its `ASYNC POLL`/`ASYNC OK`/`ASYNC FAILED` notes, the cleanup of a
//! finished job's file, and the `async_status` action itself.
//!
//! Native modules and modules through the Python path run as jobs (anything else is
//! refused by name, in `refuse`);
//! this module never judges a result (`changed_when`, `until`, ...): the executor does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value as Json, json};
use tack_agent::{Invocation, ModuleResult};
use tack_template::{Scope, Templar};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_connect::JobSpec;
use tack_links::Connection;

/// The async directory for a task as configured: `ansible_async_dir`, else the `async_dir`
/// setting (`ANSIBLE_ASYNC_DIR`, `[defaults] async_dir`, `~/.ansible_async`).
fn configured_dir(templar: &Templar, scope: &Scope, setting: &str) -> Result<String, String> {
    if let Some(binding) = scope.get("ansible_async_dir") {
        let rendered = templar.render(binding.node(), scope).map_err(|e| e.message.clone())?;
        return Ok(tack_yaml::pyrepr::str(&rendered.value.value));
    }
    Ok(if setting.is_empty() { "~/.ansible_async".to_string() } else { setting.to_string() })
}

/// The directory the controller names on the host: a leading `~` is the home of the user
/// the link runs as, which the link asks the host for (ansible's `_remote_expand_user`; the
/// local connection reads the password database, as `~user` finds it). The job process
/// reads `$HOME` instead; the two differ only when `$HOME` was changed.
fn host_dir(conn: &dyn Connection, configured: &str) -> Result<PathBuf, String> {
    match configured.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = conn.home().map_err(|e| e.to_string())?;
            Ok(PathBuf::from(home + rest))
        }
        _ => Ok(PathBuf::from(configured)),
    }
}

fn failed_output(input: &ActionInput<'_>, msg: String) -> ActionOutput {
    let mut result = ModuleResult::new();
    result.insert("failed".into(), Json::Bool(true));
    result.insert("msg".into(), Json::from(msg));
    crate::module_result::from_result(input, &result, true)
}

/// Starts the native module's job and, unless `poll` is 0, waits for it as ansible's
/// `_poll_async_result`.
pub(crate) fn run(
    input: &ActionInput<'_>,
    task: &crate::input::AsyncTask<'_>,
    module: &str,
    invocation: &Invocation,
) -> ActionOutput {
    let job = JobSpec {
        module: module.to_string(),
        args: invocation.args.clone(),
        check_mode: invocation.check_mode,
        diff: invocation.diff,
        environment: invocation.environment.clone(),
        dir: String::new(),
        limit: task.limit,
        rlimit_nofile: invocation.rlimit_nofile,
        python: None,
        program: None,
    };
    run_job(input, task, job)
}

/// The job of a module that is not native (a Python-path payload or a program module): the
/// task's modes, environment and limits, no arguments of its own (the module carries them).
pub(crate) fn foreign_job(
    input: &ActionInput<'_>,
    task: &crate::input::AsyncTask<'_>,
    module: &str,
) -> JobSpec {
    JobSpec {
        module: module.to_string(),
        args: serde_json::Map::new(),
        check_mode: input.check_mode,
        diff: input.diff,
        environment: input.environment.clone(),
        dir: String::new(),
        limit: task.limit,
        rlimit_nofile: input.rlimit_nofile(),
        python: None,
        program: None,
    }
}

/// Starts `job` (its directory the task's async directory) and, unless `poll` is 0, waits
/// for it.
pub(crate) fn run_job(
    input: &ActionInput<'_>,
    task: &crate::input::AsyncTask<'_>,
    mut job: JobSpec,
) -> ActionOutput {
    let configured = match configured_dir(input.templar, input.scope, input.async_dir) {
        Ok(configured) => configured,
        Err(msg) => return failed_output(input, msg),
    };
    job.dir = configured.clone();
    let started = match input.conn.start_job(&job) {
        Ok(started) => started,
        Err(e) => return failed_output(input, e.to_string()),
    };
    if started.get("failed").is_some_and(|f| f.as_bool() == Some(true)) {
        return crate::module_result::from_result(input, &started, true);
    }
    if task.poll == 0 {
        let mut result = started;
        // The executor marks a job it left running as a change.
        result.insert("changed".into(), Json::Bool(true));
        return crate::module_result::from_result(input, &result, false);
    }
    poll_job(input, task, &configured, started)
}

/// What ansible's executor does after an action that started a job returned its start
/// (`_poll_async_result`): waits for the job its `ansible_job_id` names, or fails without
/// one.
pub(crate) fn poll_started(
    input: &ActionInput<'_>,
    task: &crate::input::AsyncTask<'_>,
    started: ModuleResult,
) -> ActionOutput {
    if started.get("ansible_job_id").is_none_or(Json::is_null) {
        let mut failed = ModuleResult::new();
        failed.insert("failed".into(), Json::Bool(true));
        failed.insert("msg".into(), Json::from("No job id was returned by the async task"));
        // The executor reports it as a failed job, with the job id it lacks.
        input.trace.job_note(tack_links::JobNote {
            text: format!("ASYNC FAILED on {}: jid=None", task.host),
            event: "failed",
            result: failed.clone(),
        });
        let mut out = crate::module_result::from_result(input, &failed, false);
        out.error = None;
        return out;
    }
    match configured_dir(input.templar, input.scope, input.async_dir) {
        Ok(configured) => poll_job(input, task, &configured, started),
        Err(msg) => failed_output(input, msg),
    }
}

/// The poll loop over the job `started` names, in the async directory `configured`.
fn poll_job(
    input: &ActionInput<'_>,
    task: &crate::input::AsyncTask<'_>,
    configured: &str,
    started: ModuleResult,
) -> ActionOutput {
    let dir = match host_dir(input.conn, configured) {
        Ok(dir) => dir,
        Err(msg) => return failed_output(input, msg),
    };
    let jid = started.get("ansible_job_id").and_then(Json::as_str).unwrap_or_default();
    let mut time_left = task.limit as i64;
    let poll = task.poll as i64;
    let mut status = ModuleResult::new();
    // The `ASYNC ...` lines go to the run's trace, which the run loop shows with the task.
    let notes = input.trace;
    while time_left > 0 {
        std::thread::sleep(Duration::from_secs(task.poll));
        status = job_status(input.conn, jid, &dir, "status", input.check_mode);
        let failed = status.get("failed").is_some_and(|f| f.as_bool() == Some(true));
        if flag(&status, "finished") || failed || flag(&status, "skipped") {
            break;
        }
        time_left -= poll;
        notes.job_note(tack_links::JobNote {
            text: format!(
                "ASYNC POLL on {}: jid={} started={} finished={}",
                task.host,
                py(status.get("ansible_job_id")),
                py(status.get("started")),
                py(status.get("finished")),
            ),
            event: "poll",
            result: status.clone(),
        });
    }
    let result = if flag(&status, "finished") {
        // The job file of a finished job is removed, as the executor's cleanup task does.
        job_status(input.conn, jid, &dir, "cleanup", input.check_mode);
        status
    } else {
        // ansible-core 2.21 builds this failure as a new result, whose "parsed" flag is never
        // set, so it always reports unparsable results (its "did not complete within the
        // requested time" branch is unreachable); the last poll's result is kept with the
        // defaults every result dictionary carries.
        let mut last = status;
        for (key, value) in [
            ("changed", Json::Bool(false)),
            ("failed", Json::Bool(false)),
            ("deprecations", json!([])),
            ("warnings", json!([])),
        ] {
            last.entry(key).or_insert(value);
        }
        let mut failed = ModuleResult::new();
        failed.insert("failed".into(), Json::Bool(true));
        failed.insert("async_result".into(), Json::Object(last));
        failed.insert("msg".into(), Json::from("async task produced unparsable results"));
        let jid_shown = failed["async_result"].get("ansible_job_id").cloned();
        notes.job_note(tack_links::JobNote {
            text: format!("ASYNC FAILED on {}: jid={}", task.host, py(jid_shown.as_ref())),
            event: "failed",
            result: failed.clone(),
        });
        // A result ansible synthesizes, not an exception: no error block, no traceback.
        let mut out = crate::module_result::from_result(input, &failed, false);
        out.error = None;
        return out;
    };
    let failed = result.get("failed").is_some_and(|f| f.as_bool() == Some(true));
    let jid_shown = result
        .get("ansible_job_id")
        .or_else(|| result.get("async_result").and_then(|r| r.get("ansible_job_id")));
    let word = if failed { "FAILED" } else { "OK" };
    notes.job_note(tack_links::JobNote {
        text: format!("ASYNC {word} on {}: jid={}", task.host, py(jid_shown)),
        event: if failed { "failed" } else { "ok" },
        result: result.clone(),
    });
    crate::module_result::from_result(input, &result, true)
}

fn flag(result: &ModuleResult, key: &str) -> bool {
    result.get(key).is_some_and(|v| v.as_bool() == Some(true))
}

/// A JSON value as Python's `%s` prints it (`True`, `None`, a bare string).
fn py(value: Option<&Json>) -> String {
    match value {
        None | Some(Json::Null) => "None".into(),
        Some(Json::Bool(true)) => "True".into(),
        Some(Json::Bool(false)) => "False".into(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// What ansible's `async_status` action returns for `jid` in `mode`: its own keys, the
/// module's result over them, `started`/`finished` as booleans.
fn job_status(
    conn: &dyn Connection,
    jid: &str,
    dir: &Path,
    mode: &str,
    check_mode: bool,
) -> ModuleResult {
    let mut args = Map::new();
    args.insert("jid".into(), Json::from(jid));
    args.insert("mode".into(), Json::from(mode));
    status_with(conn, args, jid, mode, dir, check_mode)
}

fn status_with(
    conn: &dyn Connection,
    mut args: Map<String, Json>,
    jid: &str,
    mode: &str,
    dir: &Path,
    check_mode: bool,
) -> ModuleResult {
    let mut results = ModuleResult::new();
    results.insert("started".into(), Json::Bool(false));
    results.insert("finished".into(), Json::Bool(false));
    results.insert("stdout".into(), Json::from(""));
    results.insert("stderr".into(), Json::from(""));
    results.insert("stdout_lines".into(), json!([]));
    results.insert("stderr_lines".into(), json!([]));
    results.insert("ansible_job_id".into(), Json::from(jid));
    let log_path = dir.join(jid).display().to_string();
    if mode == "cleanup" {
        results.insert("erased".into(), Json::from(log_path));
    } else {
        results.insert("results_file".into(), Json::from(log_path));
        results.insert("started".into(), Json::Bool(true));
    }
    args.insert("_async_dir".into(), Json::from(dir.display().to_string()));
    let invocation = Invocation { args, check_mode, ..Invocation::default() };
    let module = match conn.run_module("async_status", &invocation) {
        Ok(module) => module,
        Err(e) => {
            let mut failed = ModuleResult::new();
            failed.insert("failed".into(), Json::Bool(true));
            failed.insert("msg".into(), Json::from(e.to_string()));
            failed
        }
    };
    let mut module = module;
    // The executor's lines for the text the module returned, before the action merges it
    // over its own empty ones.
    for (text, lines) in [("stdout", "stdout_lines"), ("stderr", "stderr_lines")] {
        if module.contains_key(lines) {
            continue;
        }
        if let Some(Json::String(value)) = module.get(text) {
            let split: Vec<Json> =
                tack_py::text::splitlines(value).into_iter().map(Json::from).collect();
            module.insert(lines.into(), Json::Array(split));
        }
    }
    for (key, value) in module {
        results.insert(key, value);
    }
    for key in ["started", "finished"] {
        let truth = match results.get(key) {
            Some(Json::Bool(b)) => *b,
            Some(Json::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
            Some(Json::String(s)) => !s.is_empty(),
            Some(Json::Null) | None => false,
            Some(_) => true,
        };
        results.insert(key.into(), Json::Bool(truth));
    }
    results
}

/// The `async_status` action a task names.
pub(crate) fn status_action(input: &ActionInput<'_>) -> ActionOutput {
    let args = crate::json::map_to_json(input.args);
    let jid = args.get("jid").filter(|j| !j.is_null()).map(|j| py(Some(j)));
    let mode = args.get("mode").map(|m| py(Some(m))).unwrap_or_else(|| "status".into());
    // The action checks its own two arguments before the module runs, in its order.
    let invalid = match &jid {
        None => Some("missing required arguments: jid".to_string()),
        Some(_) if !matches!(mode.as_str(), "status" | "cleanup") => {
            Some(format!("value of mode must be one of: status, cleanup, got: {mode}"))
        }
        Some(_) => None,
    };
    if let Some(msg) = invalid {
        let mut data = tack_yaml::Mapping::new();
        data.insert(tack_report::result::s("changed"), tack_report::result::b(false));
        data.insert(
            tack_report::result::s("exception"),
            tack_report::result::s("(traceback unavailable)"),
        );
        data.insert(tack_report::result::s("failed"), tack_report::result::b(true));
        data.insert(tack_report::result::s("msg"), tack_report::result::s(&msg));
        let mut out = ActionOutput::new(data);
        out.error = Some(tack_diag::Diagnostic::at(
            format!("Task failed: {msg}"),
            input.task_origin.clone(),
        ));
        out.raised = true;
        return out;
    }
    let jid = jid.unwrap_or_default();
    let dir = match configured_dir(input.templar, input.scope, input.async_dir)
        .and_then(|configured| host_dir(input.conn, &configured))
    {
        Ok(dir) => dir,
        Err(msg) => return failed_output(input, msg),
    };
    let result = status_with(input.conn, args, &jid, &mode, &dir, input.check_mode);
    crate::module_result::from_result(input, &result, true)
}
