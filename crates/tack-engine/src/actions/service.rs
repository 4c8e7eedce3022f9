//! `service`, as ansible's action plugin runs it: the module named by `use` (lower-cased),
//! else by the host's `ansible_facts.service_mgr`, else by a `setup` filtered to
//! `ansible_service_mgr`; a manager without a module of its own runs the generic `service`
//! module, with `use` taken out of the arguments (and, for `systemd`, the arguments it does
//! not take, each with ansible's warning). A manager ansible-core has no module for falls
//! back to `service`; `sysvinit` runs through ansible-core's own module code (the Python
//! path).

use serde_json::{Map, Value as Json};
use tack_agent::Invocation;

use super::{ActionInput, ActionOutput};

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
    let from_facts = input.scope.get("ansible_facts").and_then(|b| {
        b.node()
            .as_map()
            .and_then(|m| m.get("service_mgr"))
            .map(|n| tack_yaml::pyrepr::str(&n.value))
    });
    if let Some(m) = from_facts {
        return m;
    }
    let mut args = Map::new();
    args.insert("gather_subset".into(), Json::String("!all".into()));
    args.insert("filter".into(), Json::String("ansible_service_mgr".into()));
    let invocation = Invocation { args, check_mode: false, diff: false, ..Default::default() };
    input
        .conn
        .run_module("setup", &invocation)
        .ok()
        .and_then(|r| {
            r.get("ansible_facts")
                .and_then(|f| f.get("ansible_service_mgr"))
                .and_then(Json::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| "auto".into())
}

pub fn run(input: &ActionInput<'_>) -> ActionOutput {
    let named = manager(input);
    // A manager ansible-core has no module for (or none found) runs the generic `service`.
    let native = tack_agent::modules::native_name(&named);
    let python = crate::python_path::host_module(&named);
    let module = if named.is_empty() || named == "auto" || (native.is_none() && python.is_none()) {
        "service".to_string()
    } else {
        named
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
        crate::transport::record(crate::transport::Use::Note(format!("Running {shown}")));
    }
    match (module.as_str(), tack_agent::modules::native_name(&module)) {
        ("systemd", _) => super::module::run(&stripped, "ansible.legacy.systemd"),
        (_, Some(native)) => super::module::run(&stripped, native),
        (_, None) => match crate::python_path::host_module(&module) {
            Some(name) => crate::python_path::action::run(&stripped, name),
            None => super::module::run(&stripped, "service"),
        },
    }
}
