//! `dnf`, as ansible-core 2.21's action plugin runs it: the backend named by `use` or
//! `use_backend` (never both); `auto` and `yum` read the host's `ansible_facts.pkg_mgr`, and
//! a name still not one of the five valid backends asks a `setup` filtered to
//! `ansible_pkg_mgr` (whose answer the result carries as `ansible_facts.pkg_mgr` unless the
//! task is delegated). `yum4`/`dnf4` run the `dnf` module, `dnf5` the `dnf5` module, both
//! through ansible-core's own module code (the Python path); `yum` and `yum4`'s module is
//! not one ansible-core has, which fails in ansible's words.
//!
//! Owns the choice of backend; the module's run is the Python path's.

use serde_json::Value as Json;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use crate::shell_run;
use tack_report::result::s;

const VALID_BACKENDS: &[&str] = &["yum", "yum4", "dnf", "dnf4", "dnf5"];

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if input.args.get("use").is_some() && input.args.get("use_backend").is_some() {
        return shell_run::action_fail(
            input,
            "parameters are mutually exclusive: ('use', 'use_backend')",
        );
    }
    let mut backend = input
        .text("use")
        .or_else(|| input.text("use_backend"))
        .unwrap_or_else(|| "auto".to_string());
    if (backend == "yum" || backend == "auto")
        && let Some(known) = super::host_fact::known(input, "pkg_mgr")
    {
        backend = tack_yaml::pyrepr::str(&known.value);
    }
    let mut facts = None;
    if !VALID_BACKENDS.contains(&backend.as_str()) {
        let answer = match super::host_fact::ask(input, "ansible_pkg_mgr") {
            Ok(answer) => answer,
            Err(e) => {
                let msg = format!(
                    "Failed to fetch ansible_pkg_mgr to determine the dnf action backend: {e}"
                );
                return shell_run::action_fail(input, &msg);
            }
        };
        if answer.get("failed").and_then(Json::as_bool) == Some(true) {
            let msg = answer.get("msg").and_then(Json::as_str).unwrap_or("None");
            let msg = format!(
                "Failed to fetch ansible_pkg_mgr to determine the dnf action backend: {msg}"
            );
            return shell_run::action_fail(input, &msg);
        }
        backend = super::host_fact::answered(&answer, "ansible_pkg_mgr")
            .and_then(Json::as_str)
            .unwrap_or("auto")
            .to_string();
        // A delegate's manager would land among the task host's facts.
        if !input.delegated && backend != "auto" {
            let mut pkg = Mapping::new();
            pkg.insert(s("pkg_mgr"), s(&backend));
            facts = Some(Node::bare(Value::Map(pkg)));
        }
    }
    let with_facts = |mut out: ActionOutput| {
        if let Some(facts) = &facts {
            out.data.insert(s("ansible_facts"), facts.clone());
        }
        out
    };
    if !VALID_BACKENDS.contains(&backend.as_str()) {
        // ansible's message is a tuple of two strings, shown as Python shows one.
        let first = "Could not detect which major revision of dnf is in use, which is required \
                     to determine module backend.";
        let second = "You should manually specify use_backend to tell the module whether to use \
                      the dnf4 or dnf5 backend})";
        let repr = format!("('{first}', '{second}')");
        let msg = Node::bare(Value::Seq(vec![s(first), s(second)]));
        let mut out = ActionOutput::action_failed(Mapping::new(), msg, input.task_origin.clone());
        out.data.insert(s("changed"), tack_report::result::b(false));
        out.error = Some(tack_diag::Diagnostic::at(
            format!("Task failed: Action failed: {repr}"),
            input.task_origin.clone(),
        ));
        return with_facts(out);
    }
    let module: &'static str = match backend.as_str() {
        "dnf" | "yum4" | "dnf4" => "dnf",
        "dnf5" => "dnf5",
        other => {
            let msg = format!("Could not find a dnf module backend for ansible.legacy.{other}.");
            let mut data = Mapping::new();
            data.insert(s("changed"), tack_report::result::b(false));
            return with_facts(ActionOutput::action_failed(
                data,
                s(&msg),
                input.task_origin.clone(),
            ));
        }
    };
    let mut args = input.args.clone();
    args.remove("use");
    args.remove("use_backend");
    let stripped = input.with_args(&args);
    if input.verbosity >= 4 {
        input.trace.note(format!(
            "Running ansible.legacy.{module} as the backend for the dnf action plugin"
        ));
    }
    with_facts(crate::python_path::action::run(&stripped, module))
}
