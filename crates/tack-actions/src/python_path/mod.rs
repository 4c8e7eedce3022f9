//! The controller side of the Python path: a module tack has no native code for runs through
//! ansible-core's own module code when the controller has ansible-core (seed 002, issue 5).
//!
//! `find`: which interpreter has ansible-core (`--ansible-python`, else the configured
//! interpreter), settled once per run by the binary through [`configure`] before the run is
//! checked; `payload`: the per-module payloads, built once per run by our own
//! `build_payload.py` driving ansible's dependency finder, named by BLAKE3 and cached for
//! the run, and kept between runs by `payload_cache` while nothing they were made from
//! changed, with compiled code for the hosts' interpreters added by `bytecode`; `action`:
//! the task's run (ansible's internal `_ansible_*` arguments, the host's interpreter,
//! reading the result out of what the module printed).
//!
//! Owns which modules take this road ([`module_name`]) and why one cannot; it never runs a
//! module itself (the host's connection does) and never puts a task's arguments in a
//! payload.

pub(crate) mod action;
mod bytecode;
pub mod debugging;
mod error_summary;
mod find;
mod payload;
mod payload_cache;
mod program;
mod strict_utf8;

use std::path::PathBuf;
use std::sync::OnceLock;

pub use debugging::DebugSettings;
pub use find::{FindError, find};
pub use payload_cache::keep_new_payloads;

/// The run's settings the Python path reads, as configured (`ansible.cfg`, `ANSIBLE_*`).
#[derive(Debug, Clone, Default)]
pub struct PathSettings {
    /// The module debugging settings (`debugging`).
    pub debugging: DebugSettings,
    /// `display_traceback` in the words ansible's controller reads (`always`, `never`, or
    /// the events it names): a module's error summary shows its traceback when `error` is on.
    pub display_traceback: Vec<String>,
    /// The sh shell's `remote_tmp`, where the host's `ansible_remote_tmp` does not say.
    pub remote_tmp: Option<String>,
    /// The run is a plan, which leaves nothing on its hosts: no module file is kept.
    pub planning: bool,
}

static SETTINGS: OnceLock<PathSettings> = OnceLock::new();

/// Settles the run's settings (the first call wins: one run per process).
pub fn configure_settings(settings: PathSettings) {
    let _ = SETTINGS.set(settings);
}

pub(crate) fn settings() -> &'static PathSettings {
    static DEFAULT: OnceLock<PathSettings> = OnceLock::new();
    SETTINGS.get().unwrap_or_else(|| DEFAULT.get_or_init(PathSettings::default))
}

/// Whether a module's error summary is shown as its traceback (else as ansible's
/// `(traceback unavailable)`).
pub(crate) fn tracebacks_shown() -> bool {
    let words = &settings().display_traceback;
    let has = |w: &str| words.iter().any(|x| x == w);
    has("always") || has("error") && !has("never")
}

/// The command that starts one of tack's Python workers on the controller (`script` run by
/// `python` with `-c`), reading the run's `ansible.cfg` (`config`) as ansible would.
///
/// A worker loads plugins without writing bytecode beside them (a plan changes nothing), and
/// its ansible never opens `log_path`: the display log is the controller's, which logs what
/// the worker hands back; ansible's logger would create the file on import (in a plan too).
/// (The inventory worker is not one of these: its plugins print, and log, for themselves.)
pub(crate) fn worker_command(
    python: &std::path::Path,
    script: &str,
    config: Option<&std::path::Path>,
) -> std::process::Command {
    let mut command = std::process::Command::new(python);
    command.arg("-c").arg(script);
    command.env("PYTHONDONTWRITEBYTECODE", "1");
    command.env("ANSIBLE_LOG_PATH", "/dev/null");
    if let Some(config) = config {
        command.env("ANSIBLE_CONFIG", config);
    }
    command
}

/// An interpreter on the controller that imports ansible-core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsibleCore {
    pub python: PathBuf,
    /// `ansible.__version__` as that interpreter imports it.
    pub version: String,
}

/// What the run found: ansible-core, or why none (the refusal's explanation).
#[derive(Debug, Clone)]
pub enum Found {
    Core(AnsibleCore),
    None(String),
}

static FOUND: OnceLock<Found> = OnceLock::new();

/// The candidates to probe when a run first needs ansible-core (see [`configure_lazily`]).
static CANDIDATES: OnceLock<Vec<String>> = OnceLock::new();

/// Settles the run's ansible-core (the first call wins: one run per process).
pub fn configure(found: Found) {
    let _ = FOUND.set(found);
}

/// Names the interpreters to try, in order, without starting any: a run whose modules are
/// all native never pays for the probe (an interpreter start, slow behind shims).
pub fn configure_lazily(candidates: Vec<String>) {
    let _ = CANDIDATES.set(candidates);
}

fn found() -> &'static Found {
    FOUND.get_or_init(|| {
        let candidates = CANDIDATES.get().map(Vec::as_slice).unwrap_or_default();
        // Without `--ansible-python` the search reports, it does not fail.
        find(None, candidates).unwrap_or_else(|e| Found::None(e.to_string()))
    })
}

/// The run's ansible-core, if any.
pub fn core() -> Option<&'static AnsibleCore> {
    match found() {
        Found::Core(core) => Some(core),
        Found::None(_) => None,
    }
}

/// Why no module can take the Python path in this run, as the refusal's last sentence.
pub fn why_not() -> String {
    match found() {
        Found::None(why) => why.clone(),
        Found::Core(_) => "ansible-core was found".to_string(),
    }
}

/// Where the run's ansible-core interpreter finds collections beyond the configured paths:
/// ansible-core's own internal ones (`ansible._protomatter`, in its package's `_internal`
/// directory, always searched by ansible's loader), then, when `scan_sys_path`
/// (`COLLECTIONS_SCAN_SYS_PATH`), the directories on its `sys.path` that hold an
/// `ansible_collections` package (how the `ansible` pip package ships its collections), in
/// `sys.path` order; none without ansible-core. Asked by starting the interpreter once.
pub fn interpreter_collections(scan_sys_path: bool) -> Vec<PathBuf> {
    let probe = format!(
        "import ansible, json, os, sys\n\
internal = os.path.join(os.path.dirname(ansible.__file__), '_internal')\n\
found = [internal] if os.path.isdir(os.path.join(internal, 'ansible_collections')) else []\n\
if {scan}:\n    found += [p for p in sys.path if p and os.path.isdir(os.path.join(p, 'ansible_collections'))]\n\
print(json.dumps(found))",
        scan = if scan_sys_path { "True" } else { "False" }
    );
    ask_paths(&probe)
}

/// The directory of the `ansible` package the run's ansible-core interpreter imports (where
/// its own modules and plugins are), when there is one. Asked by starting the interpreter.
pub fn ansible_package_dir() -> Vec<PathBuf> {
    ask_paths("import ansible, json, os\nprint(json.dumps([os.path.dirname(ansible.__file__)]))")
}

/// The paths `probe` prints as a JSON list when the run's ansible-core interpreter runs it;
/// none without ansible-core or when it fails.
fn ask_paths(probe: &str) -> Vec<PathBuf> {
    let Some(core) = core() else { return Vec::new() };
    let out = std::process::Command::new(&core.python)
        .args(["-c", probe])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(out) = out else { return Vec::new() };
    serde_json::from_slice::<Vec<String>>(&out.stdout)
        .map(|dirs| dirs.into_iter().map(PathBuf::from).collect())
        .unwrap_or_default()
}

/// Builtin names that are not modules a host runs (documentation stubs for keywords and
/// actions the engine handles itself, ansible's async wrapper).
const NOT_HOST_MODULES: &[&str] = &[
    "async_wrapper",
    "import_playbook",
    "import_role",
    "import_tasks",
    "include_role",
    "include_tasks",
    "meta",
];

/// The short name of the ansible-core module `name` names (short, `ansible.builtin.` or
/// `ansible.legacy.` spelling), when it is one tack runs through the Python path: a builtin
/// module with no native implementation and no controller action plugin of its own (those
/// need their plugin, which tack either has natively or refuses by name).
pub fn module_name(name: &str) -> Option<&'static str> {
    host_module(name).filter(|m| !tack_playbook::tables::BUILTIN_ACTIONS.contains(m))
}

/// The short name of the builtin module `name` names when the Python path can run it for an
/// action plugin that dispatches to it (`package`'s `dnf`, `dnf`'s `dnf5`): like
/// [`module_name`], but also a module whose task name is an action plugin of its own.
pub fn host_module(name: &str) -> Option<&'static str> {
    use tack_playbook::tables::BUILTIN_MODULES;
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    if short.contains('.')
        || tack_agent::modules::is_native(short)
        || NOT_HOST_MODULES.contains(&short)
    {
        return None;
    }
    BUILTIN_MODULES.iter().copied().find(|m| *m == short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_builtin_modules_tack_lacks_take_the_python_path() {
        assert_eq!(module_name("getent"), Some("getent"));
        assert_eq!(module_name("ansible.builtin.known_hosts"), Some("known_hosts"));
        assert_eq!(module_name("ansible.legacy.debconf"), Some("debconf"));
        // native, an action plugin, a keyword's stub, a collection's, unknown
        for name in ["ping", "unarchive", "include_tasks", "community.general.x", "nope"] {
            assert_eq!(module_name(name), None, "{name}");
        }
    }
}
