//! `package`, as ansible's action plugin runs it: the backend module named by `use`, else
//! by the host's `ansible_package_use` variable, else by its `ansible_facts.pkg_mgr`, else
//! by a `setup` filtered to `ansible_pkg_mgr` (run for this task only, its answer never kept
//! as a fact); the backend then runs with the task's arguments, `use` taken out.
//!
//! `apt` runs natively; another module ansible-core has (`dnf`, `dnf5`) runs through
//! ansible-core's own module code (the Python path); a name it does not resolve (`yum`,
//! `zypper`: modules of collections) fails with ansible's own message. It never reads the
//! host but through the modules it runs.

use serde_json::Value as Json;

use crate::input::ActionInput;
use crate::output::ActionOutput;
use crate::shell_run;

/// The package managers ansible's `pkg_mgr` fact knows (`PKG_MGRS`): a backend named so
/// runs as `ansible.legacy.<name>`.
const BUILTIN_PKG_MGRS: &[&str] = &[
    "yum",
    "dnf",
    "dnf5",
    "apt_rpm",
    "zypper",
    "openbsd_pkg",
    "pkgng",
    "pacman",
    "portage",
    "pkg5",
    "pkgin",
    "xbps",
    "apk",
    "svr4pkg",
    "swdepot",
    "urpmi",
    "homebrew",
    "macports",
    "pkgutil",
    "sorcery",
    "swupd",
    "installp",
    "opkg",
    "apt",
];

/// Why no backend was chosen: ansible's `AnsibleActionFail` message.
fn backend(input: &ActionInput<'_>) -> Result<String, String> {
    let named = input
        .args
        .get("use")
        .map(|n| tack_yaml::pyrepr::str(&n.value))
        .unwrap_or_else(|| "auto".into());
    if named != "auto" {
        return Ok(named);
    }
    let var = input
        .scope
        .get("ansible_package_use")
        .map(|b| b.node())
        .filter(|n| n.value.is_truthy())
        .map(|n| tack_yaml::pyrepr::str(&n.value));
    if let Some(v) = var {
        return Ok(v);
    }
    let from_facts = super::host_fact::known(input, "pkg_mgr")
        .filter(|n| n.value.is_truthy())
        .map(|n| tack_yaml::pyrepr::str(&n.value));
    if let Some(m) = from_facts {
        return Ok(m);
    }
    let facts = super::host_fact::ask(input, "ansible_pkg_mgr").map_err(|e| {
        format!("Failed to fetch ansible_pkg_mgr to determine the package action backend: {e}")
    })?;
    if facts.get("failed").and_then(Json::as_bool) == Some(true) {
        let msg = facts.get("msg").and_then(Json::as_str).unwrap_or("None");
        return Err(format!(
            "Failed to fetch ansible_pkg_mgr to determine the package action backend: {msg}"
        ));
    }
    super::host_fact::answered(&facts, "ansible_pkg_mgr")
        .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
        .ok_or_else(|| "Could not detect a package manager. Try using the \"use\" option.".into())
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let module = match backend(input) {
        Ok(m) => m,
        Err(msg) => return shell_run::action_fail(input, &msg),
    };
    if module.is_empty() || module == "auto" {
        return shell_run::action_fail(
            input,
            "Could not detect which package manager to use. Try gathering facts or setting the \
             \"use\" option.",
        );
    }
    let short =
        tack_py::ansible::short_name(&module, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    let native = tack_agent::modules::native_name(short).filter(|n| *n == "apt");
    let backend = match (native, crate::python_path::host_module(short)) {
        // ansible runs a builtin manager's module by its `ansible.legacy.` name (which the
        // module's messages show), any other spelling as written.
        (Some(_), _) if module == "ansible.builtin.apt" => Backend::Native("ansible.builtin.apt"),
        (Some(_), _) => Backend::Native("ansible.legacy.apt"),
        (None, Some(name)) => Backend::Python(name),
        // A builtin spelling ansible-core has no module for (`yum` is only an action's
        // redirect), or a name nothing resolves.
        (None, None)
            if tack_py::ansible::is_core_spelling(&module)
                || !tack_playbook::builtin_resolves(&module) =>
        {
            return shell_run::action_fail(
                input,
                &format!("Could not find a matching action for the \"{module}\" package manager."),
            );
        }
        (None, None) => {
            return shell_run::action_fail(
                input,
                &format!(
                    "this host's package manager is '{module}', and tack cannot run the \
                     '{module}' module yet"
                ),
            );
        }
    };
    let mut args = input.args.clone();
    args.remove("use");
    let stripped = input.with_args(&args);
    if input.verbosity >= 4 {
        // ansible runs a builtin manager's module by its `ansible.legacy.` name, any other
        // spelling as written.
        let shown = if BUILTIN_PKG_MGRS.contains(&module.as_str()) {
            format!("ansible.legacy.{module}")
        } else {
            module.clone()
        };
        input.trace.note(format!("Running {shown}"));
    }
    match backend {
        Backend::Native(name) => super::module::run(&stripped, name),
        Backend::Python(name) => crate::python_path::action::run(&stripped, name),
    }
}

/// Where the chosen module's code comes from.
enum Backend {
    Native(&'static str),
    /// ansible-core's own module code.
    Python(&'static str),
}
