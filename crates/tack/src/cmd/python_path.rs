//! Which controller interpreter the Python path uses (`tack_actions::python_path`), settled
//! before a run is checked: `--ansible-python PATH` (or `TACK_ANSIBLE_PYTHON`), else the
//! `interpreter_python` setting, else the `ansible_python_interpreter` of `localhost` or of
//! every `local` host (those run on the controller), else the interpreter an
//! `ansible-playbook` or `ansible` on `PATH` runs with (its `#!` line: a venv's or pipx's
//! Python, or `env python3` found on `PATH`; tack's own names for itself are passed over),
//! else `python3` on `PATH`.
//!
//! Owns only the order of the candidates; the probe is the engine's.

use std::path::{Path, PathBuf};

use tack_actions::python_path;
use tack_diag::{Diagnostic, ErrorClass};

use crate::session::Session;

/// The environment variable that names the interpreter as `--ansible-python` does.
const ENV: &str = "TACK_ANSIBLE_PYTHON";

pub(crate) fn configure(
    option: Option<&Path>,
    session: &Session,
    plan: bool,
) -> Result<(), Diagnostic> {
    configure_settings(session, plan)?;
    let from_env = std::env::var_os(ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    // An explicit interpreter is checked now (a bad one is an options error); the search
    // waits until a task needs it.
    let Some(explicit) = option.map(Path::to_path_buf).or(from_env) else {
        python_path::configure_lazily(candidates(session));
        return Ok(());
    };
    let found = python_path::find(Some(&explicit), &[]).map_err(|e| {
        let text =
            if option.is_some() { e.to_string() } else { format!("{ENV}={}: {}", e.path, e.why) };
        Diagnostic::new(text).with_class(ErrorClass::Options)
    })?;
    python_path::configure(found);
    Ok(())
}

/// The settings the Python path reads: the module debugging settings (`keep_remote_files`,
/// AnsiballZ's extensions), `display_traceback` (a module's error summary shows its
/// traceback) and the sh shell's `remote_tmp`.
fn configure_settings(session: &Session, plan: bool) -> Result<(), Diagnostic> {
    let config = &session.config;
    let keep = config.get("DEFAULT_KEEP_REMOTE_FILES").and_then(|v| v.as_bool()) == Some(true);
    let settings = [
        ("_ANSIBALLZ_PYDEVD_CONFIG", "_ansible_ansiballz_pydevd_config"),
        ("_ANSIBALLZ_DEBUGPY_CONFIG", "_ansible_ansiballz_debugpy_config"),
        ("_ANSIBALLZ_COVERAGE_CONFIG", "_ansible_ansiballz_coverage_config"),
    ];
    let extensions = settings
        .into_iter()
        .filter_map(|(setting, variable)| {
            let text = config.get(setting)?.as_str()?.to_string();
            Some((variable, text))
        })
        .collect();
    let tracebacks = config.get("DISPLAY_TRACEBACK");
    let display_traceback = tracebacks
        .as_ref()
        .and_then(|v| v.as_str_list())
        .unwrap_or_default()
        .into_iter()
        .map(str::to_string)
        .collect();
    let remote_tmp = config.remote_tmp().map_err(|e| Diagnostic::new(e.to_string()))?;
    let remote_tmp = remote_tmp.map(str::to_string);
    python_path::configure_settings(python_path::PathSettings {
        debugging: python_path::DebugSettings { keep_remote_files: keep, extensions },
        display_traceback,
        remote_tmp,
        planning: plan,
    });
    Ok(())
}

/// `ansible_playbook_python`: the interpreter named by `--ansible-python` or
/// `TACK_ANSIBLE_PYTHON`, else the one behind the `ansible-playbook` (or `ansible`) on
/// `PATH`, found without starting anything.
pub(crate) fn playbook_python(option: Option<&Path>) -> Option<String> {
    if let Some(path) = option {
        return Some(path.display().to_string());
    }
    if let Some(path) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path).display().to_string());
    }
    behind_ansible_on_path().into_iter().next()
}

/// The interpreters behind the first `ansible-playbook` and `ansible` on `PATH` that are
/// not this program, as their `#!` lines name them.
pub(crate) fn behind_ansible_on_path() -> Vec<String> {
    let me = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    let mut out = Vec::new();
    for name in ["ansible-playbook", "ansible"] {
        let found = dirs.iter().map(|d| d.join(name)).find(|p| {
            p.is_file() && std::fs::canonicalize(p).ok().is_some_and(|real| Some(real) != me)
        });
        if let Some(python) = found.and_then(|script| shebang_python(&script, &dirs))
            && !out.contains(&python)
        {
            out.push(python);
        }
    }
    out
}

/// The interpreter a script's `#!` line runs it with; `env NAME` (with or without `-S`) is
/// found on `dirs` as `env` would find it.
fn shebang_python(script: &Path, dirs: &[PathBuf]) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 512];
    let n = std::fs::File::open(script).and_then(|mut f| f.read(&mut head)).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    let line = text.lines().next()?.strip_prefix("#!")?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    if interpreter.rsplit('/').next() != Some("env") {
        return Some(interpreter.to_string());
    }
    let program = words.find(|w| !w.starts_with('-'))?;
    dirs.iter().map(|d| d.join(program)).find(|p| p.is_file()).map(|p| p.display().to_string())
}

fn candidates(session: &Session) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(python) = session.config.interpreter_python() {
        out.push(python.to_string());
    }
    let inventory = &session.inventory;
    let var = |host, name: &str| {
        let vars = inventory.host_vars(&session.loader, host, &[]).ok()?;
        vars.get(name).and_then(|n| n.as_str().map(str::to_string))
    };
    if let Some(python) =
        inventory.get_host("localhost").and_then(|h| var(h, "ansible_python_interpreter"))
    {
        out.push(python);
    }
    // Every `local` host's, in inventory order: one that names discovery names no path.
    for host in inventory.select("all").unwrap_or_default() {
        if var(host, "ansible_connection").as_deref() == Some("local")
            && let Some(python) = var(host, "ansible_python_interpreter")
            && !out.contains(&python)
        {
            out.push(python);
        }
    }
    out.extend(behind_ansible_on_path());
    out.push("python3".to_string());
    out
}
