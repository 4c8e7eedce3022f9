//! `script`, as ansible's action plugin runs it: the local script (found under `files/`, the
//! role's first, then the play's directory) staged on the host over its connection,
//! executable by its owner only, and run through the shell with its arguments, in
//! `chdir` and through `executable` when given; `creates`/`removes` tested on the host first.
//! The staged copy is removed as soon as the command returns. A script path a managed host
//! chose is never read.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Value};

use super::copy::{find, raised};
use super::staging::Staged;
use crate::input::ActionInput;
use crate::output::ActionOutput;
use crate::shell_run;
use tack_report::result::{b, s};

fn failed(msg: &str, input: &ActionInput<'_>) -> ActionOutput {
    shell_run::action_fail(input, msg)
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if let Some(refused) = input.refuse_host_named(&["_raw_params", "cmd"], "sent") {
        return refused;
    }
    let text = |k: &str| {
        input
            .args
            .get(k)
            .filter(|n| !matches!(n.value, Value::Null))
            .map(|n| tack_yaml::pyrepr::str(&n.value))
    };
    let (raw, cmd) = (text("_raw_params"), text("cmd"));
    let params = match (raw, cmd) {
        (Some(_), Some(_)) => {
            return failed("parameters are mutually exclusive: _raw_params, cmd", input);
        }
        (None, None) => return failed("one of the following is required: _raw_params, cmd", input),
        (Some(p), None) | (None, Some(p)) => p,
    };
    if let Some(creates) = text("creates").filter(|c| !c.is_empty())
        && shell_run::exists(input, &creates)
    {
        return shell_run::skipped(&format!("{creates} exists, matching creates option"), None);
    }
    if let Some(removes) = text("removes").filter(|r| !r.is_empty())
        && !shell_run::exists(input, &removes)
    {
        return shell_run::skipped(
            &format!("{removes} does not exist, matching removes option"),
            None,
        );
    }
    let chdir = text("chdir").filter(|c| !c.is_empty());
    if let Some(dir) = &chdir
        && !dir.starts_with('/')
    {
        return failed(
            &format!("chdir {dir} must be an absolute path for a Unix-aware remote node"),
            input,
        );
    }
    let parts = match tack_py::shlex::split(params.trim()) {
        Ok(parts) if !parts.is_empty() => parts,
        Ok(_) => return failed("no script was named", input),
        Err(e) => return failed(&e.to_string(), input),
    };
    let source = match find(input.search, "files", &parts[0]) {
        Ok(path) => path,
        Err(e) => {
            // ansible re-raises the search's error as the action's own, without its help.
            let text = e.brief();
            let mut out = failed(&text, input);
            out.error = Some(Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                Diagnostic::new(text).while_handling(),
            ));
            return out;
        }
    };
    if input.check_mode {
        if text("creates").is_some() || text("removes").is_some() {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(true));
            return ActionOutput::new(data);
        }
        return shell_run::skipped("Check mode is not supported for this task.", Some(false));
    }
    if let Some(refusal) = super::staging::too_big(input.conn, &source) {
        return failed(&format!("could not stage the script: {refusal}"), input);
    }
    // A whole-file vault runs decrypted, as ansible's loader hands it over (its script
    // plugin has no `decrypt` option).
    let unreadable = |e: std::io::Error| {
        let cause = Diagnostic::new(format!("Could not read '{}': {e}", source.display()));
        raised(cause, input.task_origin.clone())
    };
    let bytes = match super::copy::real_file(input, &source, true, unreadable) {
        Ok(b) => b,
        Err(out) => return out,
    };
    let name = source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Executable by its owner only, in a directory no one else may enter.
    let staged = match Staged::put(input.conn, &bytes, &name, true) {
        Ok(staged) => staged,
        Err(e) if crate::output::link_lost(&e) => {
            return crate::output::link_errored(&e, input.task_origin.clone());
        }
        Err(e) => return failed(&format!("could not stage the script: {e}"), input),
    };
    let staged_path = staged.path().to_string();
    let target = params.trim().replace(&parts[0], &staged_path);
    // ansible's script plugin puts the task's environment in front of the command.
    let env = crate::shell_run::env_prefix(input);
    let mut cmd = match text("executable").filter(|e| !e.is_empty()) {
        Some(exe) => format!("{env} {exe} {target}"),
        None => format!("{env} {target}"),
    };
    if let Some(dir) = chdir {
        cmd = format!("cd {dir} && {cmd}");
    }
    let out = shell_run::run(input, &cmd);
    drop(staged);
    out
}
