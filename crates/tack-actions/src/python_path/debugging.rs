//! ansible's settings for debugging a module on its host: `keep_remote_files` (the module's
//! AnsiballZ file stays in its remote temporary directory, to be run again, `explode`d or
//! read) and AnsiballZ's extensions (a debugger, pydevd or debugpy, or coverage attached to
//! module code: the `_ANSIBALLZ_*_CONFIG` settings, or their `_ansible_ansiballz_*_config`
//! variables, which win).
//!
//! A task they apply to runs its module as ansible does, not from tack's payload: ansible's
//! own builder (`modify_module`) makes the AnsiballZ file with the task's arguments and these
//! settings, the file is put in a fresh `ansible-tmp-*` directory under the remote temporary
//! directory, and the host's interpreter runs it; the directory goes afterwards unless files
//! are kept. A native module swaps to ansible's module code for such a task
//! ([`crate::module`]); an action tack runs with its own code on the host has no module file
//! to keep or debug, and is refused by name ([`refusal`]).
//!
//! Owns the settings and that run; the payload builder makes the file, the connection puts it.

use std::path::Path;

use serde_json::{Map, Value};
use tack_agent::python::PythonOutput;

use crate::input::ActionInput;

/// The extensions AnsiballZ knows, by their variables (the `_ANSIBALLZ_*_CONFIG` settings').
const EXTENSION_VARIABLES: [&str; 3] = [
    "_ansible_ansiballz_pydevd_config",
    "_ansible_ansiballz_debugpy_config",
    "_ansible_ansiballz_coverage_config",
];

/// The run's settings, as configured (`ansible.cfg`, `ANSIBLE_*`).
#[derive(Debug, Clone, Default)]
pub struct DebugSettings {
    /// `keep_remote_files`.
    pub keep_remote_files: bool,
    /// Each extension's configured value (JSON text), by its variable's name.
    pub extensions: Vec<(&'static str, String)>,
}

/// What applies to one task.
#[derive(Debug, Clone)]
pub(crate) struct Debugging {
    pub keep_remote_files: bool,
    /// The extensions' values by variable name, as ansible's builder reads them from the
    /// task's variables.
    pub extensions: Map<String, Value>,
}

impl Debugging {
    /// The settings in the words a refusal uses.
    pub(crate) fn named(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        if self.keep_remote_files {
            names.push("keep_remote_files");
        }
        names.extend(self.extensions.keys().map(String::as_str));
        names.join(", ")
    }
}

/// The settings that apply to `input`'s task, if any: a variable's value over the setting's.
pub(crate) fn for_task(input: &ActionInput<'_>) -> Result<Option<Debugging>, String> {
    for_scope(input.templar, input.scope)
}

/// The refusal of fact gathering on a host whose variables are `scope`, under these
/// settings: tack gathers with its own code.
pub fn gathering_refusal(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
) -> Option<String> {
    match for_scope(templar, scope) {
        Ok(Some(debugging)) => Some(format!(
            "tack does not support {} for fact gathering: tack gathers facts with its own code \
             on the host, which leaves no module file to keep or debug",
            debugging.named()
        )),
        Ok(None) => None,
        Err(e) => Some(e),
    }
}

fn for_scope(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
) -> Result<Option<Debugging>, String> {
    let settings = &super::settings().debugging;
    let mut extensions = Map::new();
    for name in EXTENSION_VARIABLES {
        let value = match scope.get(name) {
            Some(binding) => match templar.render(binding.node(), scope) {
                Ok(rendered) => Some(crate::json::to_json(&rendered.value)),
                Err(e) if e.is_omitted() => None,
                Err(e) => return Err(e.message),
            },
            None => settings
                .extensions
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| Value::String(text.clone())),
        };
        if let Some(value) = value.filter(|v| !v.is_null()) {
            extensions.insert(name.to_string(), value);
        }
    }
    // A plan leaves nothing on its hosts, kept module files included.
    let keep_remote_files = settings.keep_remote_files && !super::settings().planning;
    if !keep_remote_files && extensions.is_empty() {
        return Ok(None);
    }
    Ok(Some(Debugging { keep_remote_files, extensions }))
}

/// The refusal of an action tack runs with its own code on the host, under these settings
/// (`keeping_only`: under `keep_remote_files` alone, for an action that runs no module).
pub(crate) fn refusal(input: &ActionInput<'_>, action: &str, keeping_only: bool) -> Option<String> {
    let debugging = match for_task(input) {
        Ok(Some(debugging)) if !keeping_only || debugging.keep_remote_files => debugging,
        Ok(_) => return None,
        Err(e) => return Some(e),
    };
    Some(format!(
        "tack does not support {} for the '{action}' action: tack runs it with its own code on \
         the host, which leaves no module file to keep or debug",
        debugging.named()
    ))
}

/// The task's environment as the assignments that go before the module's command
/// (`shell_run::env_prefix`), once every name is one the shell takes as an assignment (any
/// other would run as part of the command).
pub(crate) fn environment_prefix(input: &ActionInput<'_>) -> Result<String, String> {
    for key in input.environment.keys() {
        let name = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name {
            return Err(format!(
                "the environment variable name {} cannot be given to the module's command",
                tack_yaml::pyrepr::str_repr(key)
            ));
        }
    }
    Ok(crate::shell_run::env_prefix(input))
}

/// The module run as ansible runs it from its AnsiballZ file `wrapper` (named `file_name`):
/// in `dir` (fresh, under `remote_tmp`), by `interpreter`, after the task's environment
/// (`prefix`, from [`environment_prefix`]); `dir` goes afterwards unless files are kept,
/// whatever became of the run.
pub(crate) fn run_wrapper(
    input: &ActionInput<'_>,
    debugging: &Debugging,
    (wrapper, file_name): (&[u8], &str),
    (prefix, interpreter): (&str, &str),
    dir: &str,
) -> Result<PythonOutput, tack_links::ConnectionError> {
    use tack_py::shlex::quote;
    let cwd = Path::new("/");
    let path = format!("{dir}/{file_name}");
    let command = format!("{prefix}{} {}", quote(interpreter), quote(&path));
    let out = input
        .conn
        .place(wrapper, &path, true)
        .and_then(|()| input.conn.exec_command(&command, cwd));
    if !debugging.keep_remote_files {
        let _ = input.conn.exec_command(&format!("rm -f -r {}/ > /dev/null 2>&1", quote(dir)), cwd);
    }
    let out = out?;
    Ok(PythonOutput {
        rc: out.rc,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        tag: String::new(),
    })
}

/// Makes the task's remote temporary directory as ansible's shell does (`ansible-tmp-` with
/// the time, the process and a random number, under `remote_tmp`, private to the user):
/// its path.
pub(crate) fn make_dir(
    input: &ActionInput<'_>,
    remote_tmp: &str,
) -> Result<String, tack_links::ConnectionError> {
    use tack_py::shlex::quote;
    // ansible's `_remote_expand_user`; a `~` it could not resolve (a name that is no user's
    // or not one of a user name's characters) is no directory to make.
    let root = crate::shell_run::remote_expand_user(input, remote_tmp);
    if root.starts_with('~') {
        return Err(tack_links::ConnectionError::Exec(format!(
            "remote_tmp {} names no user tack can ask the host about",
            tack_yaml::pyrepr::str_repr(remote_tmp)
        )));
    }
    let root = root.trim_end_matches('/').to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let random = {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish() >> 16
    };
    let dir = format!("{root}/ansible-tmp-{now}-{}-{random}", std::process::id());
    let command = format!("( umask 77 && mkdir -p {} && mkdir {} )", quote(&root), quote(&dir));
    let out = input.conn.exec_command(&command, Path::new("/"))?;
    if out.rc != 0 {
        return Err(tack_links::ConnectionError::Exec(format!(
            "could not make the remote temporary directory {dir}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(dir)
}
