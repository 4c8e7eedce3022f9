//! `package`, as ansible's action plugin runs it: the backend module named by `use`, else
//! by the host's `ansible_package_use` variable, else by its `ansible_facts.pkg_mgr`, else
//! by a `setup` filtered to `ansible_pkg_mgr` (run for this task only, its answer never kept
//! as a fact); the backend then runs with the task's arguments, `use` taken out.
//!
//! tack has one backend, `apt`. A name ansible-core resolves to another module (`dnf`,
//! `yum`, ...) fails the task by name; a name it does not resolve fails with ansible's own
//! message. It never reads the host but through the modules it runs.

use serde_json::{Map, Value as Json};
use tack_agent::Invocation;

use super::{ActionInput, ActionOutput, shell_run};

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
    let from_facts = input.scope.get("ansible_facts").and_then(|b| {
        b.node()
            .as_map()
            .and_then(|m| m.get("pkg_mgr"))
            .filter(|n| n.value.is_truthy())
            .map(|n| tack_yaml::pyrepr::str(&n.value))
    });
    if let Some(m) = from_facts {
        return Ok(m);
    }
    let mut args = Map::new();
    args.insert("filter".into(), Json::String("ansible_pkg_mgr".into()));
    args.insert("gather_subset".into(), Json::String("!all".into()));
    let invocation = Invocation { args, ..Default::default() };
    let facts = input.conn.run_module("setup", &invocation).map_err(|e| {
        format!("Failed to fetch ansible_pkg_mgr to determine the package action backend: {e}")
    })?;
    if facts.get("failed").and_then(Json::as_bool) == Some(true) {
        let msg = facts.get("msg").and_then(Json::as_str).unwrap_or("None");
        return Err(format!(
            "Failed to fetch ansible_pkg_mgr to determine the package action backend: {msg}"
        ));
    }
    facts
        .get("ansible_facts")
        .and_then(|f| f.get("ansible_pkg_mgr"))
        .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
        .ok_or_else(|| "Could not detect a package manager. Try using the \"use\" option.".into())
}

pub fn run(input: &ActionInput<'_>) -> ActionOutput {
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
    let short = module
        .strip_prefix("ansible.builtin.")
        .or_else(|| module.strip_prefix("ansible.legacy."))
        .unwrap_or(&module);
    if short != "apt" {
        if !tack_playbook::builtin_resolves(&module) {
            return shell_run::action_fail(
                input,
                &format!("Could not find a matching action for the \"{module}\" package manager."),
            );
        }
        return shell_run::action_fail(
            input,
            &format!(
                "this host's package manager is '{module}', and tack has no '{module}' module \
                 yet (only 'apt')"
            ),
        );
    }
    let mut args = input.args.clone();
    args.remove("use");
    let stripped = input.with_args(&args);
    // ansible runs a builtin manager's module by its `ansible.legacy.` name, any other
    // spelling as written.
    let name = match module.as_str() {
        "ansible.builtin.apt" => "ansible.builtin.apt",
        m if BUILTIN_PKG_MGRS.contains(&m) => "ansible.legacy.apt",
        _ => "ansible.legacy.apt",
    };
    super::module::run(&stripped, name)
}
