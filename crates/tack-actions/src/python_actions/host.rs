//! What an action plugin asks to have done on the task's host, done over the task's link: a
//! module by name (found as a task finds one: `library/` and the configured paths, a native
//! module, ansible-core's own through its module code), a command through the host's shell,
//! a file written there; and what it prints, shown with the task.
//!
//! Every answer is the worker's `{"op": "value", ...}`; a link that died answers
//! `unreachable`, which the worker raises as ansible's connection failure.

use base64::Engine as _;
use serde_json::{Map, Value as Json, json};
use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Value};

use crate::input::ActionInput;
use crate::json;
use crate::output::link_lost;
use crate::python_plugins::from_wire;

fn link_failed(e: &tack_connect::ConnectionError) -> Json {
    if link_lost(e) {
        json!({ "op": "value", "unreachable": e.to_string() })
    } else {
        json!({ "op": "value", "error": e.to_string() })
    }
}

fn text<'m>(message: &'m Map<String, Json>, key: &str) -> &'m str {
    message.get(key).and_then(Json::as_str).unwrap_or_default()
}

/// `_execute_module`: the module's result dictionary as it printed it.
pub(super) fn module(input: &ActionInput<'_>, message: &Map<String, Json>) -> Json {
    let name = text(message, "name");
    let args = match message.get("args").map(from_wire) {
        Some(Value::Map(map)) => map,
        _ => Mapping::new(),
    };
    // `wrap_async`: the module started as the task's job, its start the answer; the
    // executor's poll follows once the plugin returns (`python_actions::run`).
    let job = match (message.get("async").and_then(Json::as_bool), input.async_task) {
        (Some(true), Some(task)) => {
            Some(crate::input::AsyncTask { limit: task.limit, poll: 0, host: task.host })
        }
        (Some(true), None) => {
            return json!({
                "op": "value",
                "error": "an async job was asked for a task that is not async",
            });
        }
        _ => None,
    };
    let mut sub = input.with_args(&args);
    sub.async_task = job.as_ref();
    let answered = if let Some(found) = input.modules.and_then(|search| search.find(name)) {
        crate::python_path::action::library_answer(&sub, &found)
    } else if let Some(native) = tack_agent::modules::native_name(name) {
        let invocation = sub.invocation(json::map_to_json(&args));
        if let Some(job) = &job {
            Err(Box::new(crate::async_job::run(&sub, job, native, &invocation)))
        } else {
            match sub.conn.run_module(native, &invocation) {
                Ok(result) => Ok(result),
                Err(e) => return link_failed(&e),
            }
        }
    } else if let Some(builtin) = crate::python_path::host_module(name) {
        crate::python_path::action::builtin_answer(&sub, builtin)
    } else {
        return json!({
            "op": "value",
            "error": format!("tack cannot run the module '{name}' an action plugin asked for"),
        });
    };
    let result = match answered {
        Ok(result) => result,
        Err(output) => {
            if output.data.get("unreachable").is_some_and(|u| u.value.is_truthy()) {
                let why = output.error.map(|e| e.brief()).unwrap_or_default();
                return json!({ "op": "value", "unreachable": why });
            }
            let mut data = output.data;
            if let Some(error) = output.error
                && data.get("msg").is_none()
            {
                data.insert(tack_report::result::s("msg"), tack_report::result::s(&error.brief()));
            }
            json::map_to_json(&data)
        }
    };
    json!({ "op": "value", "result": Json::Object(result) })
}

/// `_low_level_execute_command`: the command through the host's shell, as the link's user.
pub(super) fn exec(input: &ActionInput<'_>, message: &Map<String, Json>) -> Json {
    let cmd = text(message, "cmd");
    match input.conn.exec_command(cmd, &crate::shell_run::cwd(input)) {
        Ok(out) => json!({
            "op": "value",
            "rc": out.rc,
            "stdout": String::from_utf8_lossy(&out.stdout),
            "stderr": String::from_utf8_lossy(&out.stderr),
        }),
        Err(e) => link_failed(&e),
    }
}

/// `_transfer_data`/`_transfer_file`: the bytes written to `path` on the host, staged
/// privately first and then moved into place.
pub(super) fn put(input: &ActionInput<'_>, message: &Map<String, Json>) -> Json {
    let path = text(message, "path");
    let bytes = match base64::engine::general_purpose::STANDARD.decode(text(message, "data")) {
        Ok(bytes) => bytes,
        Err(e) => {
            return json!({ "op": "value", "error": format!("a file's bytes were mangled: {e}") });
        }
    };
    if let Some(limit) = input.conn.stage_limit()
        && bytes.len() > limit
    {
        return json!({
            "op": "value",
            "error": format!("tack cannot send {path} ({} bytes): its link takes files up to {limit} bytes", bytes.len()),
        });
    }
    let name = path.rsplit('/').next().unwrap_or("file");
    let staged = match input.conn.stage(&bytes, name, false) {
        Ok(staged) => staged,
        Err(e) => return link_failed(&e),
    };
    let quote = tack_py::shlex::quote;
    let cmd = format!("mv -f -- {} {}", quote(staged.path()), quote(path));
    let moved = input.conn.exec_command(&cmd, &crate::shell_run::cwd(input));
    let _ = input.conn.unstage(staged);
    match moved {
        Ok(out) if out.rc == 0 => json!({ "op": "value" }),
        Ok(out) => json!({
            "op": "value",
            "error": format!(
                "failed to transfer file to {path}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }),
        Err(e) => link_failed(&e),
    }
}

/// What the plugin printed through ansible's display: shown with the task, as ansible's
/// worker processes send theirs to be shown (a verbose line noted at its level, the callback
/// showing and logging it).
pub(super) fn display(input: &ActionInput<'_>, message: &Map<String, Json>) {
    use crate::python_lines::Displayed;
    match crate::python_lines::displayed(message, input.verbosity) {
        Displayed::Warning(msg) => tack_diag::warn(&Diagnostic::new(msg)),
        Displayed::Verbose(level, line) => input.trace.note_at(level, line),
        Displayed::Plain(line) => input.trace.note_at(0, line),
        Displayed::Nothing => {}
    }
}
