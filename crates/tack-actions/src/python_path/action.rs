//! A task whose module takes the Python path: its arguments with the internal `_ansible_*`
//! keys ansible's action base adds, the run's payload for the module, the host's interpreter,
//! and the result read out of what the module printed the way ansible's controller reads it
//! (the first JSON object in its stdout, internal keys removed), then handed to the same
//! result road as a native module's (`crate::module_result::from_result`).
//!
//! Owns the module's arguments as sent and the reading of its output; it must not build
//! payloads (`payload`) or decide which modules come here (`module_name`).

use serde_json::{Map, Value};
use tack_agent::python::{PythonOutput, PythonRun};
use tack_diag::Diagnostic;
use tack_playbook::ast::LibraryModule;

use super::payload;
use crate::input::ActionInput;
use crate::module_result::from_result;
use crate::output::{ActionOutput, errored};

use crate::json;

/// Runs ansible-core's module `name`.
pub(crate) fn run(input: &ActionInput<'_>, name: &'static str) -> ActionOutput {
    shown(input, answer(input, payload::Source::Builtin(name)))
}

/// Runs the module a `library/` directory ships.
pub(crate) fn run_library(input: &ActionInput<'_>, module: &LibraryModule) -> ActionOutput {
    shown(input, answer(input, payload::Source::Library(module)))
}

/// The task's output from the module's answer: its `exception` as ansible's controller
/// shows it (`super::error_summary`), once the error line has been made from it.
fn shown(
    input: &ActionInput<'_>,
    answer: Result<tack_agent::ModuleResult, Box<ActionOutput>>,
) -> ActionOutput {
    match answer {
        Ok(result) => {
            let mut out = from_result(input, &result, true);
            super::error_summary::project(&mut out.data, super::tracebacks_shown());
            out
        }
        Err(output) => *output,
    }
}

/// What ansible-core's module `name` answered, as its result dictionary (what an action
/// plugin that runs a module by name reads); `Err` with the task's output when it did not
/// run in the foreground (a failure, an `async` job).
pub(crate) fn builtin_answer(
    input: &ActionInput<'_>,
    name: &'static str,
) -> Result<tack_agent::ModuleResult, Box<ActionOutput>> {
    answer(input, payload::Source::Builtin(name))
}

/// [`builtin_answer`] for a module a `library/` directory ships (`Err` too for a program of
/// its own, old-style, `WANT_JSON` or binary).
pub(crate) fn library_answer(
    input: &ActionInput<'_>,
    module: &LibraryModule,
) -> Result<tack_agent::ModuleResult, Box<ActionOutput>> {
    answer(input, payload::Source::Library(module))
}

fn answer(
    input: &ActionInput<'_>,
    source: payload::Source<'_>,
) -> Result<tack_agent::ModuleResult, Box<ActionOutput>> {
    let fail = |msg: String| Box::new(errored(Diagnostic::at(msg, input.task_origin.clone())));
    let name = match source {
        payload::Source::Builtin(name) => name,
        payload::Source::Library(module) => module.name.as_str(),
    };
    if let payload::Source::Library(module) = source
        && let Some(refusal) = module.collection.as_ref().and_then(|c| c.refusal.as_ref())
    {
        return Err(fail(refusal.clone()));
    }
    let Some(core) = super::core() else {
        // Refused before the run; an included file's task can only be caught here.
        let what = match source {
            payload::Source::Builtin(_) => format!("tack has no native module '{name}'"),
            payload::Source::Library(m) => {
                format!(
                    "the module '{name}' ({}) runs through ansible's module code",
                    m.path.display()
                )
            }
        };
        return Err(fail(format!("{what}: {}", super::why_not())));
    };
    let payload = match payload::get(core, source) {
        Ok(p) => p,
        Err(e) => return Err(fail(format!("Task failed: {e}"))),
    };
    // ansible's order: the host's variable, then the configured or discovered interpreter;
    // a run without either (the engine unconfigured) uses the controller's ansible-core.
    let interpreter = match input.host_var("ansible_python_interpreter") {
        Ok(Some(python)) if !tack_links::interpreter::is_discovery_mode(&python) => {
            if let Some(failed) = crate::interpreter_check::missing(input, &python) {
                return Err(Box::new(failed));
            }
            python
        }
        Ok(_) => match input.python {
            Some(python) => python.to_string(),
            None => core.python.display().to_string(),
        },
        Err(e) => return Err(fail(e)),
    };
    let remote_tmp = match input.host_var("ansible_remote_tmp") {
        Ok(tmp) => tmp
            .or_else(|| super::settings().remote_tmp.clone())
            .unwrap_or_else(|| "~/.ansible/tmp".to_string()),
        Err(e) => return Err(fail(e)),
    };
    let mut args = json::map_to_json(input.args);
    internal_args(&mut args, input, name, &core.version, &remote_tmp, &payload.internal);
    if let payload::Source::Library(module) = source
        && payload.style != payload::Style::Python
    {
        return Err(Box::new(super::program::run(
            input,
            module,
            payload.style,
            &args,
            &interpreter,
        )));
    }
    match super::debugging::for_task(input) {
        Ok(Some(debugging)) => {
            return debug_run(input, source, core, &debugging, args, &interpreter, &remote_tmp);
        }
        Ok(None) => {}
        Err(e) => return Err(fail(e)),
    }
    let mut params = Map::new();
    params.insert("ANSIBLE_MODULE_ARGS".into(), Value::Object(args));
    let params = Value::Object(params).to_string();
    if let Some(task) = input.async_task {
        return Err(Box::new(run_as_job(input, task, name, &payload, interpreter, params)));
    }
    let run = PythonRun {
        hash: payload.hash.clone(),
        fqn: payload.fqn.clone(),
        profile: payload.profile.clone(),
        interpreter,
        params,
        environment: input.environment.clone(),
        rlimit_nofile: input.rlimit_nofile(),
    };
    // Over the task's own link: on the host, as its become user when there is one.
    match input.conn.run_python(&payload.zip, &run) {
        Ok(out) => {
            super::bytecode::host_named(&out.tag);
            read_checked(input, &out)
        }
        Err(e) => Err(Box::new(crate::output::link_errored(&e, input.task_origin.clone()))),
    }
}

/// The module run from ansible's own AnsiballZ file, as the module debugging settings ask
/// (`super::debugging`).
fn debug_run(
    input: &ActionInput<'_>,
    source: payload::Source<'_>,
    core: &super::AnsibleCore,
    debugging: &super::debugging::Debugging,
    mut args: Map<String, Value>,
    interpreter: &str,
    remote_tmp: &str,
) -> Result<tack_agent::ModuleResult, Box<ActionOutput>> {
    let fail = |msg: String| Box::new(errored(Diagnostic::at(msg, input.task_origin.clone())));
    if input.async_task.is_some() {
        return Err(fail(format!(
            "tack does not support {} for a task run with async",
            debugging.named()
        )));
    }
    let link_failed = |e: tack_links::ConnectionError| {
        Box::new(crate::output::link_errored(&e, input.task_origin.clone()))
    };
    let prefix = super::debugging::environment_prefix(input).map_err(fail)?;
    let dir = super::debugging::make_dir(input, remote_tmp).map_err(link_failed)?;
    args.insert("_ansible_tmpdir".into(), Value::String(dir.clone()));
    args.insert("_ansible_keep_remote_files".into(), Value::Bool(debugging.keep_remote_files));
    let mut task_vars = debugging.extensions.clone();
    task_vars.insert("ansible_python_interpreter".into(), Value::String(interpreter.to_string()));
    let spec = serde_json::json!({
        "args": args,
        "task_vars": task_vars,
        "environment": input.environment,
        "remote_is_local": input.local_connection,
    });
    let (wrapper, file_name) = match payload::wrapper(core, source, spec) {
        Ok(built) => built,
        Err(e) => {
            let _ = input.conn.exec_command(
                &format!("rm -f -r {}/ > /dev/null 2>&1", tack_py::shlex::quote(&dir)),
                std::path::Path::new("/"),
            );
            return Err(fail(format!("Task failed: {e}")));
        }
    };
    let out = super::debugging::run_wrapper(
        input,
        debugging,
        (&wrapper, &file_name),
        (&prefix, interpreter),
        &dir,
    )
    .map_err(link_failed)?;
    read_checked(input, &out)
}

/// The module as an `async` job: its payload staged on the host for the job to copy, then
/// started and polled as a native module's job is.
fn run_as_job(
    input: &ActionInput<'_>,
    task: &crate::input::AsyncTask<'_>,
    name: &str,
    payload: &payload::Payload,
    interpreter: String,
    params: String,
) -> ActionOutput {
    let staged = match input.conn.stage(&payload.zip, &format!("{}.zip", payload.hash), false) {
        Ok(staged) => staged,
        Err(e) => return crate::output::link_errored(&e, input.task_origin.clone()),
    };
    let mut job = crate::async_job::foreign_job(input, task, name);
    job.python = Some(Box::new(tack_connect::PythonJob {
        payload: staged.path().to_string(),
        fqn: payload.fqn.clone(),
        profile: payload.profile.clone(),
        interpreter,
        params,
    }));
    let output = crate::async_job::run_job(input, task, job);
    // The job copied the payload before it answered.
    let _ = input.conn.unstage(staged);
    output
}

/// ansible's `_update_module_args`: what every module is told besides its arguments.
fn internal_args(
    args: &mut Map<String, Value>,
    input: &ActionInput<'_>,
    name: &str,
    version: &str,
    remote_tmp: &str,
    configured: &Map<String, Value>,
) {
    // An action plugin may ask for it (`ignore_unknown_opts`); no task can.
    let ignore = args.get("_ansible_ignore_unknown_opts").cloned().unwrap_or(Value::Bool(false));
    let mut set = |k: &str, v: Value| {
        args.insert(k.to_string(), v);
    };
    set("_ansible_check_mode", Value::Bool(input.check_mode));
    // The engine masks a no_log task's result itself; the module's own use of this key is
    // what it writes to the host's syslog.
    set("_ansible_no_log", Value::Bool(false));
    set("_ansible_diff", Value::Bool(input.diff));
    set("_ansible_verbosity", Value::from(input.verbosity));
    set("_ansible_version", Value::String(version.to_string()));
    set("_ansible_module_name", Value::String(name.to_string()));
    set("_ansible_socket", Value::Null);
    set("_ansible_shell_executable", Value::String("/bin/sh".into()));
    // As with pipelining: no per-task directory; the module makes its own under remote_tmp
    // when it needs one and removes it when it exits.
    set("_ansible_tmpdir", Value::Null);
    set("_ansible_remote_tmp", Value::String(remote_tmp.to_string()));
    set("_ansible_ignore_unknown_opts", ignore);
    set("_ansible_inject_invocation", Value::Bool(input.inject_invocation()));
    for (k, v) in configured {
        args.insert(k.clone(), v.clone());
    }
}

/// ansible's `_parse_returned_data`: the first JSON object the module printed, without the
/// internal keys; a module that printed none fails the task with what it did print.
pub(crate) fn read_result(out: &PythonOutput) -> tack_agent::ModuleResult {
    if let Some(mut result) = first_object(&out.stdout) {
        result.retain(|k, _| !k.starts_with("_ansible_"));
        return result;
    }
    let mut result = Map::new();
    result.insert("failed".into(), Value::Bool(true));
    result.insert(
        "msg".into(),
        Value::String(
            "Module result deserialization failed. See stdout/stderr for the returned output."
                .into(),
        ),
    );
    result.insert("module_stdout".into(), Value::String(out.stdout.clone()));
    result.insert("module_stderr".into(), Value::String(out.stderr.clone()));
    result.insert("rc".into(), Value::from(out.rc));
    result
}

/// [`read_result`], or the task's failure when the module's answer holds a string UTF-8
/// cannot encode, which ansible's decoder refuses (`super::strict_utf8`).
pub(crate) fn read_checked(
    input: &ActionInput<'_>,
    out: &PythonOutput,
) -> Result<tack_agent::ModuleResult, Box<ActionOutput>> {
    let result = read_result(out);
    let unparsed = result.contains_key("module_stdout");
    let invalid =
        object_text(&out.stdout).filter(|_| unparsed).and_then(super::strict_utf8::first_invalid);
    let Some(invalid) = invalid else { return Ok(result) };
    let cause = Diagnostic::caused_by(
        "Refusing to deserialize an invalid UTF8 string value.",
        None,
        Diagnostic::new(invalid),
    )
    .with_help("This check can be disabled with the `MODULE_STRICT_UTF8_RESPONSE` setting.");
    Err(Box::new(errored(Diagnostic::caused_by("Task failed.", input.task_origin.clone(), cause))))
}

/// The text from the first line that starts with `{`.
fn object_text(stdout: &str) -> Option<&str> {
    let mut offset = 0;
    for line in stdout.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(&stdout[offset..]);
        }
        offset += line.len();
    }
    None
}

/// The JSON object starting at the first line that starts with `{`.
fn first_object(stdout: &str) -> Option<Map<String, Value>> {
    let mut values = serde_json::Deserializer::from_str(object_text(stdout)?).into_iter();
    match values.next() {
        Some(Ok(Value::Object(map))) => Some(map),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(stdout: &str) -> PythonOutput {
        PythonOutput { rc: 0, stdout: stdout.into(), stderr: "warn".into(), tag: String::new() }
    }

    #[test]
    fn the_result_is_the_first_object_printed_without_internal_keys() {
        let r = read_result(&out("noise\n{\"changed\": true, \"_ansible_no_log\": false}\ntail\n"));
        assert_eq!(Value::Object(r), serde_json::json!({"changed": true}));
    }

    #[test]
    fn no_object_fails_with_what_was_printed() {
        let r = read_result(&out("Traceback\n"));
        assert_eq!(r["failed"], true);
        assert_eq!(r["module_stdout"], "Traceback\n");
        assert_eq!(r["module_stderr"], "warn");
        assert_eq!(r["rc"], 0);
    }
}
