//! The actions that run on the controller without touching a host (`debug`, `set_fact`,
//! `assert`, `fail`, `include_vars`, `add_host`, `group_by`, `pause`, `set_stats`,
//! `validate_argument_spec`), and the
//! action plugins that decide on the controller what the host does (`copy`, `template`,
//! `raw`, `script`, `fetch`, `assemble`, `service`, `package`, `wait_for_connection`): each takes its
//! rendered arguments and the task's variables and returns the task's result, as ansible's
//! action plugins of the same names do.
//!
//! Actions never print and never decide what runs next; the executor does both (`add_host`
//! and `group_by` change only the run's [`tack_inventory::live::LiveInventory`]).

pub mod argspec;
mod assemble;
mod assert;
pub mod async_job;
mod bounded;
mod bytes_args;
pub mod catalogue;
pub mod copy;
mod copy_diff;
mod copy_tree;
mod debug;
mod dnf;
mod fail;
mod fetch;
mod fetch_write;
pub mod gather_facts;
mod host_fact;
mod include_vars;
mod include_vars_dir;
pub mod interpreter_check;
mod inventory;
pub mod json;
pub mod module;
mod module_result;
mod module_tags;
mod package;
pub mod pause;
pub mod python_actions;
pub mod python_cache;
pub mod python_callbacks;
pub mod python_connection;
pub mod python_inventory;
mod python_lines;
pub mod python_path;
pub mod python_plugins;
pub mod python_strategy;
mod raw;
mod reboot;
mod script;
mod service;
mod set_fact;
mod set_stats;
mod shell_run;
mod staging;
pub mod terminal;
mod unarchive;
mod uri;
mod validate_argument_spec;

mod action;
mod input;
mod output;

pub use action::Action;
pub use catalogue::{Facts, InPlan, Plugin};
pub use input::{ActionInput, AsyncTask, SearchPath};
pub use output::{ActionOutput, errored, raised};

use tack_diag::Diagnostic;

/// Runs `action` with `input`.
pub fn run(action: Action, input: &ActionInput<'_>) -> ActionOutput {
    // Every action that runs modules on the host would run them under this limit in
    // ansible (`raw` and `script` run none).
    if action.touches_host()
        && !action.is("raw")
        && !action.is("script")
        && let Some(failed) = interpreter_check::checked_rlimit(input)
    {
        return failed;
    }
    if action.touches_host()
        && let Some(isolated) = interpreter_check::session_isolation(input)
    {
        return tack_agent::session::with_isolation(isolated, || dispatch(action, input));
    }
    dispatch(action, input)
}

fn dispatch(action: Action, input: &ActionInput<'_>) -> ActionOutput {
    // Under the module debugging settings a module runs from ansible's own file; an action
    // whose modules tack runs with its own code has none to keep or debug.
    // (`script` puts a file on the host, which ansible keeps too, but runs no module.)
    let own_code = match action {
        Action::Plugin(plugin) if plugin.touches_host && plugin.name != "raw" => {
            Some((plugin.name, plugin.name == "script"))
        }
        Action::PythonAction(_) => Some((input.action_name, false)),
        _ => None,
    };
    if let Some((name, keeping_only)) = own_code
        && let Some(refusal) = crate::python_path::debugging::refusal(input, name, keeping_only)
    {
        return errored(Diagnostic::at(refusal, input.task_origin.clone()));
    }
    if let Some(refused) = bytes_args::refused(action, input) {
        return errored(Diagnostic::at(refused, input.task_origin.clone()));
    }
    match action {
        Action::Plugin(plugin) => catalogue::run(plugin, input),
        Action::Module("uri") if !module::debugged(input) => bounded::bounded(input, uri::run),
        Action::Module(name) => module::run(input, name),
        Action::Python(name) => crate::python_path::action::run(input, name),
        Action::Library(module) => crate::python_path::action::run_library(input, module),
        Action::PythonAction(plugin) => crate::python_actions::run(input, plugin),
        // The task runner fails the task before any action runs (it knows the name).
        Action::Unresolvable => errored(Diagnostic::at(
            "Cannot resolve the action to an action or module.",
            input.task_origin.clone(),
        )),
        // The task runner renders the name and runs what it resolves to instead.
        Action::Templated => errored(Diagnostic::at(
            "The action's name was not rendered before it ran.",
            input.task_origin.clone(),
        )),
    }
}
