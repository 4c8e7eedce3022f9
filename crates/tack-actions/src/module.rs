//! A native module run on the task's host: the rendered arguments go over the host's
//! connection as JSON, and the module's result dictionary comes back as the task's result.

use tack_agent::Invocation;
use tack_diag::Diagnostic;

use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;

pub fn run(input: &ActionInput<'_>, name: &'static str) -> ActionOutput {
    let invocation =
        Invocation { timeout: input.timeout, ..input.invocation(json::map_to_json(input.args)) };
    if name == "async_status" {
        return crate::async_job::status_action(input);
    }
    // Without a virtualenv or an executable, ansible's `pip` runs its own interpreter's pip
    // (`python -m pip`), which only ansible's module code on the host's Python can do.
    let given = |key: &str| input.args.get(key).is_some_and(|v| !v.is_null());
    if name == "pip" && !given("virtualenv") && !given("executable") {
        return crate::python_path::action::run(input, "pip");
    }
    // What tack's native apt does not do (it refuses each by name) is ansible's own module's
    // to do, where the controller has ansible-core to run it.
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    if short == "apt" && apt_beyond_native(input) && crate::python_path::core().is_some() {
        return crate::python_path::action::run(input, "apt");
    }
    // tack's own fetches speak http:// and file://; a URL of another scheme (https://,
    // ftp://) is ansible's module's to fetch, where the controller has ansible-core.
    if let Some(module) = ["get_url", "uri"].into_iter().find(|m| *m == short)
        && url_beyond_native(input)
        && crate::python_path::core().is_some()
    {
        return crate::python_path::action::run(input, module);
    }
    // ansible's every module runs under the host's interpreter, so it fails where the host
    // lacks the one it names; tack's native module does the same, for the same result.
    if let Ok(Some(python)) = input.host_var("ansible_python_interpreter")
        && !tack_links::interpreter::is_discovery_mode(&python)
        && let Some(failed) = crate::interpreter_check::missing(input, &python)
    {
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

/// Whether an apt task asks what the native module refuses (`tack_agent`'s `apt::refused`):
/// a `.deb` file, an upgrade of the whole system (`upgrade`, or `name: '*'` with
/// `state: latest`), `clean`, `autoclean`, `state: build-dep` or `fixed`.
fn apt_beyond_native(input: &ActionInput<'_>) -> bool {
    use tack_yaml::Value;
    let arg =
        |key: &str| input.args.get(key).map(|n| &n.value).filter(|v| !matches!(v, Value::Null));
    let text = |key: &str| arg(key).map(|v| tack_yaml::pyrepr::str(v).to_lowercase());
    // Its choices are `dist`, `full`, `safe`, `yes` and `no`; a boolean is `yes` or `no`.
    let upgrade = arg("upgrade").is_some_and(|v| match v {
        Value::Bool(b) => *b,
        other => tack_yaml::pyrepr::str(other).to_lowercase() != "no",
    });
    let flag = |key: &str| arg(key).is_some_and(Value::boolean_loose);
    let state = text("state");
    let names: Vec<String> = ["name", "package", "pkg"]
        .iter()
        .filter_map(|key| arg(key))
        .flat_map(|v| match v {
            Value::Seq(items) => items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect(),
            other => {
                tack_yaml::pyrepr::str(other).split(',').map(str::to_string).collect::<Vec<_>>()
            }
        })
        .map(|n| n.trim().to_string())
        .collect();
    arg("deb").is_some()
        || upgrade
        || flag("clean")
        || flag("autoclean")
        || matches!(state.as_deref(), Some("build-dep" | "fixed"))
        || state.as_deref() == Some("latest") && names.iter().any(|n| n == "*")
}

/// Whether the task's `url` has a scheme tack's native fetch does not speak (it fetches
/// `http://` and `file://` URLs).
fn url_beyond_native(input: &ActionInput<'_>) -> bool {
    let Some(url) = input.args.get("url").filter(|n| !matches!(n.value, tack_yaml::Value::Null))
    else {
        return false;
    };
    let url = tack_yaml::pyrepr::str(&url.value).trim().to_lowercase();
    match url.split_once("://") {
        Some((scheme, _)) => !["http", "file"].contains(&scheme),
        None => false,
    }
}
