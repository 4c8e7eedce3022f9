//! What `raw` and `script` share: a command run through the host's shell
//! (`_low_level_execute_command`) and the result ansible builds from it (`rc`, `stdout`,
//! `stderr` and their lines, `changed: true`, and `non-zero return code` on failure).

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// The directory a local host's commands run in: the play's (the loader's base directory).
pub(crate) fn cwd(input: &ActionInput<'_>) -> std::path::PathBuf {
    input.search.basedir.clone()
}

fn lines(text: &str) -> Node {
    let list = tack_py::text::splitlines(text)
        .into_iter()
        .map(|l| Node::bare(Value::Str(l.to_string())))
        .collect();
    Node::bare(Value::Seq(list))
}

/// ansible's `_compute_environment_string`: the task's environment as `NAME=value` words
/// (values quoted for the shell) to put in front of a command, each followed by a space.
pub(crate) fn env_prefix(input: &ActionInput<'_>) -> String {
    input.environment.iter().map(|(k, v)| format!("{k}={} ", tack_py::shlex::quote(v))).collect()
}

/// Runs `cmd` and returns the task's result, failed when the command exits non-zero.
pub(crate) fn run(input: &ActionInput<'_>, cmd: &str) -> ActionOutput {
    let out = match input.conn.exec_command(cmd, &cwd(input)) {
        Ok(out) => out,
        Err(e) => return crate::output::link_errored(&e, input.task_origin.clone()),
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut data = Mapping::new();
    data.insert(s("rc"), Node::bare(Value::Int(i64::from(out.rc))));
    data.insert(s("stdout_lines"), lines(&stdout));
    data.insert(s("stdout"), s(&stdout));
    data.insert(s("stderr_lines"), lines(&stderr));
    data.insert(s("stderr"), s(&stderr));
    data.insert(s("changed"), b(true));
    let mut output = ActionOutput::new(data);
    if out.rc != 0 {
        output.data.insert(s("msg"), s("non-zero return code"));
        output.data.insert(s("failed"), b(true));
        output.data.insert(s("exception"), s("(traceback unavailable)"));
        output.error = Some(Diagnostic::at(
            "Task failed: Action failed: non-zero return code",
            input.task_origin.clone(),
        ));
    }
    output
}

/// Whether `path` exists on the host (`test -e`, as ansible's shell plugin asks).
pub(crate) fn exists(input: &ActionInput<'_>, path: &str) -> bool {
    let cmd = format!("test -e {}", tack_py::shlex::quote(path));
    input.conn.exec_command(&cmd, &cwd(input)).is_ok_and(|o| o.rc == 0)
}

/// ansible's `_remote_expand_user`: a leading `~user` resolved by the host's shell (`echo
/// ~user`); a bare `~` is the link's user's (`~<remote_user>`, or `~<become_user>` on a
/// become link, as ansible names it), so their passwd home, not `$HOME`; anything else as
/// written. A shell that answers nothing leaves the path as it was.
pub(crate) fn remote_expand_user(input: &ActionInput<'_>, path: &str) -> String {
    if !path.starts_with('~') {
        return path.to_string();
    }
    let (head, tail) = match path.split_once('/') {
        Some((head, tail)) => (head, Some(tail)),
        None => (path, None),
    };
    let cwd = std::path::Path::new("/");
    let ask = |cmd: &str| {
        input
            .conn
            .exec_command(cmd, cwd)
            .ok()
            .filter(|o| o.rc == 0)
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout).trim().lines().last().map(str::to_string)
            })
            .filter(|h| !h.is_empty())
    };
    let user = match &head[1..] {
        "" => ask("id -un").unwrap_or_default(),
        named => named.to_string(),
    };
    // A user name, never shell text.
    if !user.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
        return path.to_string();
    }
    let home = ask(&format!("echo ~{user}")).filter(|h| !h.starts_with('~'));
    match (home, tail) {
        (Some(home), Some(tail)) => format!("{}/{tail}", home.trim_end_matches('/')),
        (Some(home), None) => home,
        (None, _) => path.to_string(),
    }
}

/// A skipped result with ansible's message (`AnsibleActionSkip`).
pub(crate) fn skipped(msg: &str, changed: Option<bool>) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(changed.unwrap_or(false)));
    data.insert(s("skipped"), b(true));
    data.insert(s("msg"), s(msg));
    let mut out = ActionOutput::new(data);
    // Raised, so `until`, retries, `changed_when` and `failed_when` never see it.
    out.raised = true;
    out
}

/// ansible's `AnsibleActionFail(msg)` raised by an action plugin: a failed, unchanged result
/// whose message the error line repeats after `Task failed:`.
pub(crate) fn action_fail(input: &ActionInput<'_>, msg: &str) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(msg));
    data.insert(s("exception"), s("(traceback unavailable)"));
    let mut out = ActionOutput::new(data);
    out.error = Some(Diagnostic::at(format!("Task failed: {msg}"), input.task_origin.clone()));
    out
}
