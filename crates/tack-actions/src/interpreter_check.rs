//! A host whose `ansible_python_interpreter` names a program it does not have: ansible's
//! every module fails there ("The module interpreter '...' was not found."), tack's native
//! modules included, though they need no interpreter, so that a run gives the same result as
//! ansible's.
//!
//! Owns the check (once per host and interpreter in a run, by the host's own `/bin/sh`, whose
//! words ansible's result carries) and the failed result, and the other per-module process
//! setting, `ansible_python_module_rlimit_nofile` (read and checked here, applied by the
//! agent); which interpreter a task uses is the caller's.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tack_diag::Diagnostic;
use tack_report::result::{b, s};
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;

/// What the host's shell said of an interpreter it could not run: its stdout, its stderr.
type Missing = Option<(String, String)>;

static CHECKED: Mutex<Option<HashMap<(String, String), Missing>>> = Mutex::new(None);

/// The task's failed output when the host has no `interpreter` (ansible's result for it),
/// else `None`. `interpreter` is the host's `ansible_python_interpreter` as written, one
/// program name even with spaces in it, as ansible runs it.
pub(crate) fn missing(input: &ActionInput<'_>, interpreter: &str) -> Option<ActionOutput> {
    // The link (a delegated task's is the delegate's) and the host it serves.
    let link = std::ptr::from_ref(input.conn).cast::<()>() as usize;
    let host = input.host_var("inventory_hostname").ok().flatten();
    let key = (format!("{link:x} {}", host.unwrap_or_default()), interpreter.to_string());
    let known = CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .get(&key)
        .cloned();
    let said = match known {
        Some(said) => said,
        None => {
            let said = ask(input, interpreter)?;
            CHECKED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(HashMap::new)
                .insert(key, said.clone());
            said
        }
    };
    let (stdout, stderr) = said?;
    Some(failed(input, interpreter, stdout, stderr))
}

/// Runs the interpreter through the host's `/bin/sh` as ansible's module command would,
/// only when `command -v` does not find it: `None` when the check itself
/// could not run (the module then runs and fails, or not, on its own).
fn ask(input: &ActionInput<'_>, interpreter: &str) -> Option<Missing> {
    ask_on(input.conn, interpreter)
}

/// [`missing`] for the interpreter the host's `ansible_python_interpreter` names, when it
/// names one (discovery finds only what the host has).
pub(crate) fn missing_named(input: &ActionInput<'_>) -> Option<ActionOutput> {
    match input.host_var("ansible_python_interpreter") {
        Ok(Some(python)) if !tack_links::interpreter::is_discovery_mode(&python) => {
            missing(input, &python)
        }
        _ => None,
    }
}

/// The failure a module run under `interpreter` on `conn`'s host gives when the host lacks
/// it (what ansible's module command answers), `None` when the host has it or the check could
/// not run: for the play's implicit fact gathering, which runs outside any action.
pub fn missing_on(conn: &dyn tack_links::Connection, interpreter: &str) -> Option<Mapping> {
    let (stdout, stderr) = ask_on(conn, interpreter)??;
    Some(failure_data(interpreter, &stdout, &stderr))
}

fn ask_on(conn: &dyn tack_links::Connection, interpreter: &str) -> Option<Missing> {
    // ansible quotes the interpreter as one word in the module's command (a value with
    // arguments is a program name with spaces in it).
    let program = interpreter;
    let word = tack_py::shlex::quote(interpreter);
    let command = format!(
        "command -v {word} >/dev/null 2>&1 || exec /bin/sh -c {}",
        tack_py::shlex::quote(&word),
    );
    let out = conn.exec_command(&command, std::path::Path::new("/")).ok()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // ansible's test of the module's output: the interpreter named with "not found".
    let said = |text: &str| {
        ["No such file or directory", "not found", "command not found"]
            .iter()
            .any(|why| text.contains(&format!("{program}: {why}")))
    };
    Some((out.rc == 127 && (said(&stderr) || said(&stdout))).then_some((stdout, stderr)))
}

/// ansible's `ansible_python_module_rlimit_nofile`: the open-files soft limit of every
/// module process (and what it starts), rendered for the task's host; `omit`, 0 or less asks
/// for none. [`crate::run`] checks it before any action that runs modules on the host: a value
/// that does not render, or is no integer, fails the task as ansible's `int()` of it does.
pub(crate) fn checked_rlimit(input: &ActionInput<'_>) -> Option<ActionOutput> {
    let failed = |message: String| {
        Some(crate::output::errored(Diagnostic::at(
            format!("Task failed: {message}"),
            input.task_origin.clone(),
        )))
    };
    let name = "ansible_python_module_rlimit_nofile";
    let binding = input.scope.get(name)?;
    match input.templar.render(binding.node(), input.scope) {
        Err(e) if e.is_omitted() => None,
        // The template's own error, with where it was written, under the task's.
        Err(e) => Some(crate::output::errored(Diagnostic::caused_by(
            "Task failed.",
            input.task_origin.clone(),
            e.to_diagnostic(),
        ))),
        Ok(rendered) => {
            let text = tack_yaml::pyrepr::str(&rendered.value.value);
            match text.trim().parse::<i64>() {
                Ok(_) => None,
                Err(_) => failed(format!("invalid literal for int() with base 10: '{text}'")),
            }
        }
    }
}

/// ansible's `ansible_worker_session_isolation` for one task, when its variable sets one (a
/// value that does not render leaves the run's setting): ansible gives that task's worker a
/// session of its own or not, so the processes the local connection starts for it have the
/// terminal or not (`tack_agent::session::with_isolation`). An ssh host's processes never
/// have the controller's terminal, either way.
pub(crate) fn session_isolation(input: &ActionInput<'_>) -> Option<bool> {
    let binding = input.scope.get("ansible_worker_session_isolation")?;
    input.templar.render(binding.node(), input.scope).ok().map(|r| r.value.value.boolean_loose())
}

fn failed(
    input: &ActionInput<'_>,
    interpreter: &str,
    stdout: String,
    stderr: String,
) -> ActionOutput {
    let msg = format!("The module interpreter '{interpreter}' was not found.");
    let mut out = ActionOutput::new(failure_data(interpreter, &stdout, &stderr));
    out.error = Some(Diagnostic::caused_by(
        "Task failed: Action failed.",
        input.task_origin.clone(),
        Diagnostic::new(msg).with_help(MISSING_HELP),
    ));
    out
}

/// A missing interpreter's module failure, as ansible's executor reads the module command's
/// answer.
fn failure_data(interpreter: &str, stdout: &str, stderr: &str) -> Mapping {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("exception"), s("(traceback unavailable)"));
    data.insert(s("failed"), b(true));
    data.insert(s("module_stderr"), s(stderr));
    data.insert(s("module_stdout"), s(stdout));
    data.insert(s("msg"), s(&format!("The module interpreter '{interpreter}' was not found.")));
    data.insert(s("rc"), Node::bare(Value::Int(127)));
    data
}

/// What ansible says after a missing interpreter's message.
const MISSING_HELP: &str = "Consider overriding the configured interpreter path for this host. \
                            See stdout/stderr for the returned output.";

/// `failure` with ansible's help when it is a missing interpreter's (a fact module's failure,
/// shown as a sub-event of the fact gathering's, keeps only its message).
pub(crate) fn with_help(failure: Diagnostic) -> Diagnostic {
    let missing = failure.message.starts_with("The module interpreter '")
        && failure.message.ends_with("' was not found.");
    if missing { failure.with_help(MISSING_HELP) } else { failure }
}
