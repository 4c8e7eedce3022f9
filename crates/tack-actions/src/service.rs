//! `service`, as ansible's action plugin runs it: the module named by `use` (lower-cased),
//! else by the host's `ansible_facts.service_mgr`, else by a `setup` filtered to
//! `ansible_service_mgr`; a manager without a module of its own runs the generic `service`
//! module, with `use` taken out of the arguments (and, for `systemd`, the arguments it does
//! not take, each with ansible's warning). A manager ansible-core has no module for falls
//! back to `service`; `sysvinit` runs through ansible-core's own module code (the Python
//! path).

use crate::input::ActionInput;
use crate::output::ActionOutput;

/// The managers whose modules ansible-core runs by their `ansible.legacy.` names.
const BUILTIN_SVC_MGR_MODULES: &[&str] = &["openwrt_init", "service", "systemd", "sysvinit"];

/// What ansible drops, with a warning, from a `service` task handed to `systemd`.
const SYSTEMD_UNUSED: &[&str] = &["pattern", "runlevel", "sleep", "arguments", "args"];

fn manager(input: &ActionInput<'_>) -> String {
    let named = input
        .args
        .get("use")
        .map(|n| tack_yaml::pyrepr::str(&n.value).to_lowercase())
        .unwrap_or_else(|| "auto".into());
    if named != "auto" {
        return named;
    }
    if let Some(known) = super::host_fact::known(input, "service_mgr") {
        return tack_yaml::pyrepr::str(&known.value);
    }
    // A setup that fails leaves the choice to the generic module.
    super::host_fact::ask(input, "ansible_service_mgr")
        .ok()
        .and_then(|r| {
            super::host_fact::answered(&r, "ansible_service_mgr")?.as_str().map(str::to_string)
        })
        .unwrap_or_else(|| "auto".into())
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let named = manager(input);
    // A manager ansible-core has no module for (or none found) runs the generic `service`.
    let (module, native, python) =
        match (tack_agent::modules::native_name(&named), crate::python_path::host_module(&named)) {
            (None, None) => ("service".to_string(), Some("service"), None),
            (native, python) => (named, native, python),
        };
    let mut args = input.args.clone();
    args.remove("use");
    let systemd = module == "systemd";
    if systemd {
        for unused in SYSTEMD_UNUSED {
            if args.remove(unused).is_some() {
                tack_diag::warn(&tack_diag::Diagnostic::new(format!(
                    "Ignoring \"{unused}\" as it is not used in \"systemd\""
                )));
            }
        }
    }
    let stripped = input.with_args(&args);
    // ansible runs its own managers' modules by their `ansible.legacy.` names.
    let shown = if BUILTIN_SVC_MGR_MODULES.contains(&module.as_str()) {
        format!("ansible.legacy.{module}")
    } else {
        module.clone()
    };
    // ansible's `-vvvv` note of the module it picked, in order with the connection's lines.
    if input.verbosity >= 4 {
        input.trace.note(format!("Running {shown}"));
    }
    match (systemd, native, python) {
        (true, _, _) => super::module::run(&stripped, "ansible.legacy.systemd"),
        (false, Some(native), _) => super::module::run(&stripped, native),
        (false, None, Some(name)) => crate::python_path::action::run(&stripped, name),
        (false, None, None) => super::module::run(&stripped, "service"),
    }
}
