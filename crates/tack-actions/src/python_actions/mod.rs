//! Action plugins written in Python (`action_plugins/` beside a playbook, in a role, or on the
//! configured `action_plugins` path), run as ansible runs them: ansible-core's own `Task`,
//! `PlayContext`, templar and loaders in a process of the run's ansible-core interpreter
//! running our `worker.py`, with what the plugin does on the host (a module by name, a
//! command through the host's shell, a file written there) asked of this side, which runs it
//! over the task's link as it runs its own modules.
//!
//! Processes are kept for the run, one per task running at once (started on first need,
//! handed back after each task), so a fleet pays an interpreter start per fork, not per host.
//!
//! Owns the processes, the wire format and the reading of a plugin's result into the task's;
//! which tasks come here is [`crate::Action`]'s.

mod host;
mod vars;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::{Map, Value as Json, json};
use tack_diag::Diagnostic;
use tack_report::result::s;

use crate::input::ActionInput;
use crate::output::{ActionOutput, errored};
use crate::python_plugins::{from_wire, to_wire, to_wire_placed};

/// Our worker script, after what every worker shares (`python_wire.py`).
const WORKER: &str = concat!(include_str!("../python_wire.py"), include_str!("worker.py"));

/// A task's action plugin: the name the task gives it and the file the task's search found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PythonAction {
    pub name: String,
    pub path: PathBuf,
    /// The collection module of the task's name when its routing names this plugin
    /// (`action_plugin`): `module_defaults` are then looked up by the module's name, not
    /// the plugin's (ansible's module context).
    pub module: Option<String>,
}

impl PythonAction {
    /// The name ansible resolves the plugin to: a collection's by its fully qualified name
    /// (whatever short name the task used through `collections:`), any other as written.
    pub fn resolved_name(&self) -> String {
        load_name(self)
    }
}

/// What every worker of the run is started with.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The configuration file the run read, so the worker's ansible reads the same.
    pub config_file: Option<PathBuf>,
    /// The first playbook's directory (the plugin's loader's base directory).
    pub basedir: PathBuf,
    /// Where collections are found, for the plugins that import from one.
    pub collections: Vec<PathBuf>,
    /// The playbook and role directories, whose plugin subdirectories ansible's loader
    /// searches (a task's connection plugin among them).
    pub dirs: Vec<PathBuf>,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

/// Settles the run's worker setup (the first call wins: one run per process).
pub fn configure(setup: Setup) {
    let _ = SETUP.set(setup);
}

/// Workers waiting for a task.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// What each plugin file's class says of free-form text (`supports_raw_params`).
static RAW_PARAMS: Mutex<Option<HashMap<PathBuf, bool>>> = Mutex::new(None);

/// A worker's process (`crate::python_lines`): an idle one ends when its input closes, one
/// that broke mid-conversation is killed at once (`grace` taken).
type Worker = crate::python_lines::Lines;

/// How long an idle worker gets to end by itself once its input closes.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends the run's idle workers (the binary calls it once the run is over).
pub fn shutdown() {
    let idle = std::mem::take(&mut *IDLE.lock().unwrap_or_else(PoisonError::into_inner));
    drop(idle);
}

/// A new worker, ansible-core loaded.
fn start_worker() -> Result<Worker, String> {
    {
        let Some(core) = crate::python_path::core() else {
            return Err(format!(
                "action plugins written in Python run through ansible-core on the controller: {}",
                crate::python_path::why_not()
            ));
        };
        let setup = SETUP.get().cloned().unwrap_or_else(|| Setup {
            basedir: std::env::current_dir().unwrap_or_default(),
            ..Setup::default()
        });
        let mut command =
            crate::python_path::worker_command(&core.python, WORKER, setup.config_file.as_deref());
        let mut worker =
            Worker::spawn(&mut command, "the action plugin worker", GRACE).map_err(|e| {
                format!("could not start {} for an action plugin: {e}", core.python.display())
            })?;
        let roots: Vec<String> =
            setup.collections.iter().map(|d| d.display().to_string()).collect();
        worker.send(&json!({
            "collections": roots,
            "basedir": setup.basedir.display().to_string(),
            "dirs": setup.dirs,
        }))?;
        let ready = worker.receive()?;
        if let Some(fatal) = ready.get("fatal").and_then(Json::as_str) {
            return Err(format!("the action plugin worker could not load ansible-core: {fatal}"));
        }
        Ok(worker)
    }
}

/// An idle worker, or a new one.
fn take() -> Result<Worker, String> {
    let idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner).pop();
    match idle {
        Some(worker) => Ok(worker),
        None => start_worker(),
    }
}

fn give_back(worker: Worker) {
    IDLE.lock().unwrap_or_else(PoisonError::into_inner).push(worker);
}

/// The directories the worker's loader is given for `plugin`: its own first (where the
/// task's search found it), so ansible's loader finds the same file; none for a
/// collection's.
fn dirs(plugin: &PythonAction) -> Vec<String> {
    // A collection's plugin is found by its name, through the collection loader.
    if collection_name(&plugin.path).is_some() {
        return Vec::new();
    }
    plugin.path.parent().map(|d| vec![d.display().to_string()]).unwrap_or_default()
}

/// The fully qualified name of a collection's action plugin file
/// (`.../ansible_collections/NS/COL/plugins/action/[SUB/]NAME.py` → `NS.COL.[SUB.]NAME`).
fn collection_name(path: &std::path::Path) -> Option<String> {
    let parts: Vec<&str> = path.iter().filter_map(|p| p.to_str()).collect();
    let at = parts.iter().rposition(|p| *p == "ansible_collections")?;
    let rest = parts.get(at + 1..)?;
    let [namespace, collection, "plugins", "action", resource @ ..] = rest else { return None };
    let (leaf, subdirs) = resource.split_last()?;
    let leaf = leaf.strip_suffix(".py")?;
    let mut name = vec![*namespace, *collection];
    name.extend(subdirs);
    name.push(leaf);
    Some(name.join("."))
}

/// The name the worker's loader finds the plugin by: a collection's by its fully qualified
/// name (whatever short name the task used), any other as the task wrote it.
fn load_name(plugin: &PythonAction) -> String {
    if let Some(name) = collection_name(&plugin.path) {
        return name;
    }
    // A module run through a `normal.py` of the play's (`ModuleSearch::normal_override`):
    // ansible's loader finds it as `ansible.legacy.normal`.
    let short = tack_py::ansible::short_name(
        &plugin.name,
        tack_py::ansible::CoreCollections::BuiltinOrLegacy,
    );
    if plugin.path.file_stem().is_some_and(|stem| stem == "normal") && short != "normal" {
        return "ansible.legacy.normal".to_string();
    }
    plugin.name.clone()
}

/// Whether the plugin's class takes free-form text (ansible's `supports_raw_params`), asked
/// of the worker once per file; a plugin that cannot be asked is let through, to fail with
/// its real error when it runs.
pub fn supports_raw_params(plugin: &PythonAction) -> bool {
    let mut cache = RAW_PARAMS.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(known) = cache.get(&plugin.path) {
        return *known;
    }
    let asked = (|| -> Result<bool, String> {
        let mut worker = take()?;
        worker.send(&json!({
            "op": "describe",
            "name": load_name(plugin),
            "path": plugin.path.display().to_string(),
            "dirs": dirs(plugin),
        }))?;
        let reply = worker.receive()?;
        give_back(worker);
        Ok(reply.get("raw_params").and_then(Json::as_bool).unwrap_or(false))
    })();
    let answer = asked.unwrap_or(true);
    cache.insert(plugin.path.clone(), answer);
    answer
}

/// Runs the task's action plugin on its host.
pub(crate) fn run(input: &ActionInput<'_>, plugin: &PythonAction) -> ActionOutput {
    let fail = |msg: String| errored(Diagnostic::at(msg, input.task_origin.clone()));
    let mut worker = match take() {
        Ok(worker) => worker,
        Err(why) => return fail(format!("Task failed: {why}")),
    };
    let request = match request(input, plugin) {
        Ok(request) => request,
        Err(why) => return fail(format!("Task failed: {why}")),
    };
    let vars = vars::ScopeVars { scope: input.scope, templar: input.templar };
    let answered = (|| -> Result<Map<String, Json>, String> {
        worker.send(&request)?;
        loop {
            let message = worker.receive()?;
            let op = message.get("op").and_then(Json::as_str).unwrap_or_default();
            let answer = match op {
                "result" | "raised" => return Ok(message),
                "display" => {
                    host::display(input, &message);
                    continue;
                }
                "var" => vars.answer(message.get("name").and_then(Json::as_str)),
                "names" => json!({ "op": "value", "names": vars.names() }),
                "module" => host::module(input, &message),
                "exec" => host::exec(input, &message),
                "put" => host::put(input, &message),
                other => return Err(format!("the action plugin worker asked for {other:?}")),
            };
            worker.send(&answer)?;
        }
    })();
    match answered {
        Ok(reply) => {
            give_back(worker);
            output(input, reply)
        }
        Err(why) => {
            // It stopped mid-conversation: killed at once, not reused.
            worker.grace = None;
            fail(format!("Task failed: {why}"))
        }
    }
}

fn request(input: &ActionInput<'_>, plugin: &PythonAction) -> Result<Json, String> {
    let args: Map<String, Json> = input
        .args
        .iter()
        .filter_map(|(k, v)| Some((k.as_str()?.to_string(), to_wire_placed(v))))
        .collect();
    let host = input.host_var("inventory_hostname")?.unwrap_or_default();
    let connection = match (input.plugin, input.host_var("ansible_connection")?) {
        (Some(plugin), _) => plugin.name.clone(),
        (None, Some(name)) if !name.is_empty() => name,
        _ if input.local_connection => "local".to_string(),
        _ => "ssh".to_string(),
    };
    // A plugin's options as its link set them (the delegated host's variables when
    // delegated), and the command line's password, which ansible hands it as `password`.
    let plugin_options = input.plugin.map(|plugin| {
        let options: Map<String, Json> =
            plugin.options.0.iter().map(|(k, v)| (k.clone(), to_wire(v))).collect();
        json!({
            "options": Json::Object(options),
            "password": plugin.password.as_ref().map(|p| p.0.as_str()),
            "address": plugin.address,
        })
    });
    let (async_val, poll) = input.async_task.map_or((0, 15), |a| (a.limit, a.poll));
    Ok(json!({
        "op": "run",
        "name": load_name(plugin),
        "action": plugin.name,
        "fqcn": plugin.name,
        "path": plugin.path.display().to_string(),
        "dirs": dirs(plugin),
        "args": Json::Object(args),
        "async": async_val,
        "poll": poll,
        "check_mode": input.check_mode,
        "diff": input.diff,
        "verbosity": input.verbosity,
        // What `Display.log_verbosity` would be: the run's count, or `log_verbosity` when a
        // log keeps more (its `_verbose_log` lines come back as notes).
        "log_verbosity": tack_diag::display_log::noted_verbosity(
            u8::try_from(input.verbosity.clamp(0, 255)).unwrap_or(u8::MAX)
        ),
        "host": host,
        "connection": connection,
        "plugin": plugin_options,
    }))
}

/// A warning the worker sent with the place it points at (`{"text", "origin"}`): the
/// result keeps its text, the callback shows it with its place, as ansible's does.
fn placed_warning(item: &Json) -> Option<Diagnostic> {
    let text = item.get("text")?.as_str()?;
    let origin = item.get("origin")?;
    let path = origin.get("path")?.as_str()?;
    let number =
        |key: &str| origin.get(key).and_then(Json::as_u64).and_then(|n| u32::try_from(n).ok());
    let at = tack_diag::Origin::new(
        std::sync::Arc::from(std::path::Path::new(path)),
        number("line")?,
        number("col")?,
    );
    Some(Diagnostic::at(text.to_string(), Some(at)))
}

/// The task's output for what the worker answered: a result the plugin returned is read as
/// ansible's executor reads an action's (its warnings and deprecations joined to it, a
/// failure `Action failed`); an exception it raised is the task's error, as ansible's is.
fn output(input: &ActionInput<'_>, reply: Map<String, Json>) -> ActionOutput {
    let mut result = match reply.get("result").map(from_wire) {
        Some(tack_yaml::Value::Map(map)) => map,
        _ => tack_yaml::Mapping::new(),
    };
    let internal: Vec<String> = result
        .iter()
        .filter_map(|(k, _)| k.as_str().filter(|k| k.starts_with("_ansible_")).map(str::to_string))
        .collect();
    let mut no_log = false;
    let mut verbose_always = false;
    for key in internal {
        if let Some((_, value)) = result.remove(&key) {
            match key.as_str() {
                "_ansible_no_log" => no_log = value.value.is_truthy(),
                "_ansible_verbose_always" => verbose_always = value.value.is_truthy(),
                _ => {}
            }
        }
    }
    if reply.get("op").and_then(Json::as_str) == Some("raised") {
        let mut out = ActionOutput::new(result);
        let skipped = reply.get("skipped").and_then(Json::as_bool) == Some(true);
        if !skipped {
            let line = reply.get("error").and_then(Json::as_str).unwrap_or("Task failed.");
            let placeless = reply.get("placeless").and_then(Json::as_bool) == Some(true);
            let origin = if placeless { None } else { input.task_origin.clone() };
            out.error = Some(Diagnostic::at(line.to_string(), origin));
            out.raised = true;
        }
        out.no_log = no_log;
        return out;
    }
    let mut placed = Vec::new();
    for (key, extra) in [("warnings", "warnings"), ("deprecations", "deprecations")] {
        let Some(Json::Array(added)) =
            reply.get(extra).filter(|a| a.as_array().is_some_and(|a| !a.is_empty()))
        else {
            continue;
        };
        let mut items = match result.get(key).map(|n| &n.value) {
            Some(tack_yaml::Value::Seq(items)) => items.clone(),
            _ => Vec::new(),
        };
        for item in added {
            match placed_warning(item) {
                Some(block) if key == "warnings" => {
                    items.push(s(&block.message));
                    placed.push(block);
                }
                _ => items.push(tack_yaml::Node::bare(from_wire(item))),
            }
        }
        result.insert(s(key), tack_yaml::Node::bare(tack_yaml::Value::Seq(items)));
    }
    let json = crate::json::map_to_json(&result);
    // An `async` task with `poll`: the executor waits for the job the plugin started.
    let flag = |key: &str| json.get(key).is_some_and(|v| v.as_bool() == Some(true));
    if let Some(task) = input.async_task.filter(|t| t.poll > 0)
        && !flag("skipped")
        && !flag("failed")
    {
        let mut out = crate::async_job::poll_started(input, task, json);
        out.no_log |= no_log;
        return out;
    }
    let mut out = crate::module_result::from_result(input, &json, false);
    if !placed.is_empty() {
        out.notes_mut().warning_blocks.extend(placed);
    }
    // ansible's word for a failure an action reported (a module's is `Module failed`).
    if let Some(error) = out.error.as_mut()
        && let Some(rest) = error.message.strip_prefix("Task failed: Module failed: ")
    {
        error.message = format!("Task failed: Action failed: {rest}");
    }
    out.no_log |= no_log;
    out.verbose_always |= verbose_always;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collections_plugin_is_loaded_by_its_fully_qualified_name() {
        let path = PathBuf::from("/c/ansible_collections/ns/col/plugins/action/sub/greet.py");
        assert_eq!(collection_name(&path).as_deref(), Some("ns.col.sub.greet"));
        let plugin = PythonAction { name: "greet".into(), path, module: None };
        assert_eq!(load_name(&plugin), "ns.col.sub.greet");
        assert!(dirs(&plugin).is_empty());
        let beside = PythonAction {
            name: "ansible.legacy.echo".into(),
            path: PathBuf::from("/p/action_plugins/echo.py"),
            module: None,
        };
        assert_eq!(load_name(&beside), "ansible.legacy.echo");
        assert_eq!(dirs(&beside), vec!["/p/action_plugins".to_string()]);
    }
}
