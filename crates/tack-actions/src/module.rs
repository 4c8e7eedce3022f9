//! A native module run on the task's host: the rendered arguments go over the host's
//! connection as JSON, and the module's result dictionary comes back as the task's result.

use tack_agent::Invocation;
use tack_diag::Diagnostic;

use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;

pub fn run(input: &ActionInput<'_>, name: &'static str) -> ActionOutput {
    let mut args = json::map_to_json(input.args);
    if name == "setup" {
        name_interpreter(input, &mut args);
    }
    let invocation = Invocation { timeout: input.timeout, ..input.invocation(args) };
    if name == "async_status" {
        return crate::async_job::status_action(input);
    }
    // Without a virtualenv or an executable, ansible's `pip` runs its own interpreter's pip
    // (`python -m pip`), which only ansible's module code on the host's Python can do.
    let given = |key: &str| input.args.get(key).is_some_and(|v| !v.is_null());
    if name == "pip" && !given("virtualenv") && !given("executable") {
        return crate::python_path::action::run(input, "pip");
    }
    // What a native module refuses by name but ansible's own module does (apt's upgrades,
    // a URL tack's client does not speak) is ansible's module's to do, where the controller
    // has ansible-core to run it.
    if tack_agent::modules::beyond_native(name, &invocation.args)
        && crate::python_path::core().is_some()
        && let Some(short) = tack_agent::modules::native_name(name)
    {
        return crate::python_path::action::run(input, short);
    }
    // Under the module debugging settings the module runs from ansible's own file, which
    // only ansible's module code has.
    if debugged(input) {
        return match crate::python_path::core().and(tack_agent::modules::native_name(name)) {
            Some(short) => crate::python_path::action::run(input, short),
            None => crate::output::errored(Diagnostic::at(
                format!(
                    "the '{name}' module runs from ansible's own module file under the module \
                     debugging settings, which needs ansible-core on the controller: {}",
                    crate::python_path::why_not()
                ),
                input.task_origin.clone(),
            )),
        };
    }
    // ansible's every module runs under the host's interpreter, so it fails where the host
    // lacks the one it names; tack's native module does the same, for the same result.
    if let Some(failed) = crate::interpreter_check::missing_named(input) {
        return failed;
    }
    if let Some(task) = input.async_task {
        return crate::async_job::run(input, task, name, &invocation);
    }
    match input.conn.run_module(name, &invocation) {
        Ok(result) if result.contains_key("timedout") => timed_out(input, &result),
        Ok(result) => crate::module_result::from_result(input, &result, true),
        Err(e) => crate::output::link_errored(&e, input.task_origin.clone()),
    }
}

/// The `python` facts are the interpreter's that runs the module in ansible: the host's
/// `ansible_python_interpreter`, else the configured or discovered one. tack's own `setup`
/// asks the one named in its `_ansible_python_interpreter` (`python3` on `PATH` without).
pub(crate) fn name_interpreter(
    input: &ActionInput<'_>,
    args: &mut serde_json::Map<String, serde_json::Value>,
) {
    let python = match input.host_var("ansible_python_interpreter") {
        Ok(Some(python)) if !tack_links::interpreter::is_discovery_mode(&python) => Some(python),
        _ => input.python.map(str::to_string),
    };
    if let Some(python) = python {
        args.insert("_ansible_python_interpreter".into(), serde_json::Value::String(python));
    }
}

/// Whether the module debugging settings apply to the task (a variable that cannot be
/// rendered counts: the Python path then fails the task with its error).
pub(crate) fn debugged(input: &ActionInput<'_>) -> bool {
    !matches!(crate::python_path::debugging::for_task(input), Ok(None))
}

/// ansible's result for a task its `timeout` stopped (a `TaskTimeoutError`, raised, so not
/// retried).
fn timed_out(input: &ActionInput<'_>, result: &tack_agent::ModuleResult) -> ActionOutput {
    let period = result.get("timedout").and_then(|t| t.get("period")).cloned();
    let period = period.and_then(|p| p.as_u64()).unwrap_or_default();
    task_timed_out(input, period, false)
}

/// The task's output when its `timeout` of `period` seconds ran out. `retrying`: it ran out
/// while an action plugin waited to try a step again (`reboot`'s back-off, inside ansible's
/// exception handler), which ansible shows as the task's error with the timeout as a cause
/// of its own.
pub(crate) fn task_timed_out(input: &ActionInput<'_>, period: u64, retrying: bool) -> ActionOutput {
    use tack_report::result::{b, s};
    let period = i64::try_from(period).unwrap_or(i64::MAX);
    let msg = format!("Task failed: Timed out after {period} second(s).");
    let mut timedout = tack_yaml::Mapping::new();
    timedout.insert(
        s("frame"),
        s("Configure `DISPLAY_TRACEBACK` to see a traceback on timeout errors."),
    );
    timedout.insert(s("period"), tack_yaml::Node::bare(tack_yaml::Value::Int(period)));
    let mut data = tack_yaml::Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("exception"), s("(traceback unavailable)"));
    data.insert(s("msg"), s(&msg));
    data.insert(s("timedout"), tack_yaml::Node::bare(tack_yaml::Value::Map(timedout)));
    data.insert(s("failed"), b(true));
    let mut out = ActionOutput::new(data);
    out.error = Some(if retrying {
        Diagnostic::caused_by(
            "Task failed.",
            input.task_origin.clone(),
            Diagnostic::new(format!("Timed out after {period} second(s).")).while_handling(),
        )
    } else {
        Diagnostic::at(msg, input.task_origin.clone())
    });
    out.raised = true;
    out
}
