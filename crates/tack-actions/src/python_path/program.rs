//! A `library/` module that is a program of its own rather than new-style Python: ansible's
//! `old` style (arguments as `key=value` words in a file), `WANT_JSON` (arguments as JSON in
//! a file) and binary modules. As ansible's action base runs them: the file is staged on the
//! host (its `#!` line pointed at the host's interpreter for it), the arguments file beside
//! it, and `<interpreter> <module> <arguments file>` run through the host's shell with the
//! task's environment in front; both files are removed as soon as it returns. The result is
//! read out of what it printed as a Python module's is. As an `async` job the agent runs the
//! same command from its own copies of the two files.
//!
//! Owns the staging, the arguments file and the command; it must not build payloads.

use serde_json::{Map, Value};
use tack_diag::Diagnostic;
use tack_playbook::ast::LibraryModule;

use super::payload::Style;
use crate::input::ActionInput;
use crate::module_result::from_result;
use crate::output::{ActionOutput, errored};
use crate::staging::Staged;

pub(super) fn run(
    input: &ActionInput<'_>,
    module: &LibraryModule,
    style: Style,
    args: &Map<String, Value>,
    python: &str,
) -> ActionOutput {
    let fail = |msg: String| errored(Diagnostic::at(msg, input.task_origin.clone()));
    let source = match std::fs::read(&module.path) {
        Ok(bytes) => bytes,
        Err(e) => {
            return fail(format!("Task failed: could not read {}: {e}", module.path.display()));
        }
    };
    let (source, shebang) = if style == Style::Binary {
        (source, None)
    } else {
        match shebang(input, source, python) {
            Ok(pair) => pair,
            Err(e) => return fail(e),
        }
    };
    let arguments = match style {
        Style::Old => old_style_args(args),
        _ => Value::Object(args.clone()).to_string(),
    };
    let file = module.path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = format!("AnsiballZ_{}", file.unwrap_or_default());
    let staged = match Staged::put(input.conn, &source, &name, true) {
        Ok(staged) => staged,
        Err(e) if crate::output::link_lost(&e) => {
            return crate::output::link_errored(&e, input.task_origin.clone());
        }
        Err(e) => return fail(format!("Task failed: could not stage the module: {e}")),
    };
    let args_file = match Staged::put(input.conn, arguments.as_bytes(), "args", false) {
        Ok(staged) => staged,
        Err(e) if crate::output::link_lost(&e) => {
            return crate::output::link_errored(&e, input.task_origin.clone());
        }
        Err(e) => return fail(format!("Task failed: could not stage the module's arguments: {e}")),
    };
    if let Some(task) = input.async_task {
        let mut job = crate::async_job::foreign_job(input, task, &name);
        job.program = Some(Box::new(tack_connect::ProgramJob {
            program: staged.path().to_string(),
            arguments: args_file.path().to_string(),
            interpreter: shebang,
        }));
        // The job copied both files before it answered; they go when this returns.
        return crate::async_job::run_job(input, task, job);
    }
    let mut words = Vec::new();
    if let Some(interpreter) = &shebang {
        words.push(interpreter.clone());
    }
    words.push(tack_py::shlex::quote(staged.path()));
    words.push(tack_py::shlex::quote(args_file.path()));
    let command = format!("{}{}", crate::shell_run::env_prefix(input), words.join(" "));
    let out = input.conn.exec_command(&command, &crate::shell_run::cwd(input));
    drop(args_file);
    drop(staged);
    match out {
        Ok(out) => {
            let printed = tack_agent::python::PythonOutput {
                rc: out.rc,
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                tag: String::new(),
            };
            match super::action::read_checked(input, &printed) {
                Ok(result) => from_result(input, &result, true),
                Err(refused) => *refused,
            }
        }
        Err(e) => crate::output::link_errored(&e, input.task_origin.clone()),
    }
}

/// ansible's `_get_shebang` for a program: a `#!` line naming `python` runs with the host's
/// Python; one naming another interpreter with `ansible_<name>_interpreter` when the host
/// sets it. Returns the bytes to stage (the first line rewritten when the interpreter
/// changed) and the interpreter with its arguments, which the command names first; `None`
/// without a `#!` line (the program is run as it is).
fn shebang(
    input: &ActionInput<'_>,
    mut source: Vec<u8>,
    python: &str,
) -> Result<(Vec<u8>, Option<String>), String> {
    let first_end = source.iter().position(|b| *b == b'\n').unwrap_or(source.len());
    let first = String::from_utf8_lossy(&source[..first_end]).into_owned();
    let Some(line) = first.strip_prefix("#!") else { return Ok((source, None)) };
    let mut parts = line.trim().splitn(2, char::is_whitespace);
    let interpreter = parts.next().unwrap_or_default().to_string();
    let rest = parts.next().map(str::trim).unwrap_or_default().to_string();
    let base = interpreter.rsplit('/').next().unwrap_or_default().trim().to_string();
    let chosen = if base == "python" {
        Some(python.to_string())
    } else {
        input.host_var(&format!("ansible_{base}_interpreter"))?
    };
    let interpreter = match chosen {
        Some(chosen) if chosen != interpreter => {
            let line =
                if rest.is_empty() { format!("#!{chosen}") } else { format!("#!{chosen} {rest}") };
            source.splice(..first_end, line.into_bytes());
            chosen
        }
        _ => interpreter,
    };
    let command = if rest.is_empty() { interpreter } else { format!("{interpreter} {rest}") };
    Ok((source, Some(command)))
}

/// ansible's arguments file for an old-style module: `key=value ` for each argument, the
/// value as Python's `str` gives it, quoted for a shell.
fn old_style_args(args: &Map<String, Value>) -> String {
    let mut out = String::new();
    for (k, v) in args {
        let text = tack_yaml::pyrepr::str(&crate::json::from_json(v).value);
        out.push_str(&format!("{k}={} ", tack_py::shlex::quote(&text)));
    }
    out
}
