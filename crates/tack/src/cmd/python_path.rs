//! Which controller interpreter the Python path uses (`tack_actions::python_path`), settled
//! before a run is checked: `--ansible-python PATH`, else the `interpreter_python` setting,
//! else the `ansible_python_interpreter` of `localhost` or of the first `local` host (those
//! run on the controller), else `python3` on `PATH`.
//!
//! Owns only the order of the candidates; the probe is the engine's.

use std::path::Path;

use tack_actions::python_path;
use tack_diag::{Diagnostic, ErrorClass};

use crate::session::Session;

pub(crate) fn configure(option: Option<&Path>, session: &Session) -> Result<(), Diagnostic> {
    // An explicit interpreter is checked now (a bad one is an options error); the search
    // waits until a task needs it.
    if option.is_none() {
        python_path::configure_lazily(candidates(session));
        return Ok(());
    }
    let found = python_path::find(option, &[])
        .map_err(|e| Diagnostic::new(e.to_string()).with_class(ErrorClass::Options))?;
    python_path::configure(found);
    Ok(())
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
    for host in inventory.select("all").unwrap_or_default() {
        if var(host, "ansible_connection").as_deref() == Some("local")
            && let Some(python) = var(host, "ansible_python_interpreter")
        {
            out.push(python);
            break;
        }
    }
    out.push("python3".to_string());
    out
}
