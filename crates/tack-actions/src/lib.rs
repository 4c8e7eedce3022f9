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
pub mod catalogue;
pub mod copy;
mod copy_diff;
mod copy_tree;
mod debug;
mod dnf;
mod fail;
mod fetch;
mod gather_facts;
mod host_fact;
mod include_vars;
mod include_vars_dir;
mod inventory;
pub mod json;
pub mod module;
mod package;
pub mod pause;
pub mod python_path;
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

pub use catalogue::{Facts, InPlan, Plugin};
use tack_diag::{Diagnostic, Origin};
use tack_template::{Provenance, Scope, Templar};
use tack_yaml::{Mapping, Node};

use tack_report::result::{b, s};

/// What a task's action is: a row of [`catalogue`] (a controller action or action plugin),
/// a native module, an ansible-core module run through the Python path, or a name ansible
/// cannot resolve either.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    Plugin(&'static Plugin),
    /// A native module, run on the host through its connection.
    Module(&'static str),
    /// An ansible-core module tack has no native code for, run through ansible's own module
    /// code (`crate::python_path`).
    Python(&'static str),
    /// A name ansible-core cannot resolve either: the task fails on each host it runs on, as
    /// ansible's does (`Cannot resolve '...' to an action or module.`).
    Unresolvable,
}

impl PartialEq for Action {
    fn eq(&self, other: &Action) -> bool {
        match (self, other) {
            (Action::Plugin(a), Action::Plugin(b)) => a.name == b.name,
            (Action::Module(a), Action::Module(b)) | (Action::Python(a), Action::Python(b)) => {
                a == b
            }
            (Action::Unresolvable, Action::Unresolvable) => true,
            _ => false,
        }
    }
}

impl Eq for Action {}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plugin({})", self.name)
    }
}

/// A module's row: what every module is, whatever its name.
const MODULE: Plugin = Plugin {
    name: "",
    run: |input| errored(Diagnostic::at("no module", input.task_origin.clone())),
    bounded: false,
    touches_host: true,
    opens_links: false,
    takes_raw_params: true,
    takes_environment: true,
    raw_args: &[],
    known_args: None,
    trusted_result: false,
    python: false,
    needs_ansible_core: false,
    discovers_interpreter: true,
    asks_link: false,
    bypasses_host_loop: false,
    changes_inventory: false,
    in_plan: InPlan::CheckMode,
    facts: Facts::Module,
};

/// What a name ansible-core cannot resolve is.
const UNRESOLVABLE: Plugin = Plugin { touches_host: false, takes_raw_params: true, ..MODULE };

impl Action {
    /// The action a task names (short, `ansible.builtin.` or `ansible.legacy.` spelling; a
    /// name ansible-core's routing redirects, such as `yum`, as its target).
    pub fn find(name: &str) -> Option<Action> {
        let short = tack_playbook::tables::short_builtin_name(name);
        let redirected =
            tack_playbook::tables::BUILTIN_ROUTING.iter().find_map(|(_, from, to)| match to {
                tack_playbook::tables::Routing::Redirect(target) if *from == short => Some(*target),
                _ => None,
            });
        if let Some(target) = redirected {
            return Action::find(target);
        }
        if let Some(plugin) = catalogue::plugin(short) {
            return Some(Action::Plugin(plugin));
        }
        tack_agent::modules::native_name(name)
            .map(Action::Module)
            .or_else(|| crate::python_path::module_name(name).map(Action::Python))
    }

    /// [`Action::find`], or [`Action::Unresolvable`] for a short or `ansible.builtin.`/
    /// `ansible.legacy.` name ansible-core does not know (a collection's name may be one tack
    /// lacks, and stays unknown).
    pub fn resolve(name: &str) -> Option<Action> {
        let builtin_spelling = !name.contains('.')
            || name.starts_with("ansible.builtin.")
            || name.starts_with("ansible.legacy.");
        Action::find(name).or_else(|| {
            (builtin_spelling && !name.contains("{{") && !tack_playbook::builtin_resolves(name))
                .then_some(Action::Unresolvable)
        })
    }

    /// The short name (`debug`, `command`); empty for [`Action::Unresolvable`].
    pub fn name(self) -> &'static str {
        match self {
            Action::Plugin(plugin) => plugin.name,
            Action::Module(name) | Action::Python(name) => name,
            Action::Unresolvable => "",
        }
    }

    /// Whether this is the action or module called `short`.
    pub fn is(self, short: &str) -> bool {
        !matches!(self, Action::Unresolvable) && self.name() == short
    }

    /// How the action runs and what the run loop asks of it.
    pub fn traits(self) -> &'static Plugin {
        match self {
            Action::Plugin(plugin) => plugin,
            Action::Module(_) | Action::Python(_) => &MODULE,
            Action::Unresolvable => &UNRESOLVABLE,
        }
    }

    /// The fully qualified name ansible's messages use.
    pub fn fqcn(self) -> String {
        match self {
            Action::Unresolvable => "unresolvable".into(),
            _ => format!("ansible.builtin.{}", self.name()),
        }
    }

    /// Whether a task `environment` reaches what the action runs.
    pub fn takes_environment(self) -> bool {
        match self {
            Action::Module(name) => tack_agent::modules::TAKE_ENVIRONMENT.contains(&name),
            _ => self.traits().takes_environment,
        }
    }

    /// Whether free-form text (`_raw_params`) goes to the action; controller actions refuse
    /// it, modules decide for themselves (`command` takes it, `file` refuses it).
    pub fn takes_raw_params(self) -> bool {
        self.traits().takes_raw_params
    }

    /// Whether the action runs anything on the task's host (and so needs its connection).
    pub fn touches_host(self) -> bool {
        self.traits().touches_host
    }

    /// Whether the action needs the host's connection settings: it runs on the host, or it
    /// opens links of its own.
    pub fn uses_link(self) -> bool {
        self.traits().touches_host || self.traits().opens_links
    }

    /// Whether what the action returns comes only from the controller's own files.
    pub fn trusted_result(self) -> bool {
        self.traits().trusted_result
    }

    /// Arguments the action reads unrendered.
    pub fn raw_args(self) -> &'static [&'static str] {
        self.traits().raw_args
    }

    /// The arguments the action accepts (empty: any); anything else is refused before the
    /// run starts.
    pub fn known_args(self) -> &'static [&'static str] {
        self.traits().known_args.unwrap_or(&[])
    }

    /// Whether the action runs ansible-core's own module code on the host.
    pub fn runs_python(self) -> bool {
        matches!(self, Action::Python(_)) || self.traits().python
    }

    /// Whether the action cannot run without the controller's ansible-core.
    pub fn needs_ansible_core(self) -> bool {
        matches!(self, Action::Python(_)) || self.traits().needs_ansible_core
    }

    /// What a plan does with it: what these do is only known by doing it.
    pub fn in_plan(self) -> InPlan {
        match self {
            Action::Module("command" | "shell") => InPlan::WouldRun,
            _ => self.traits().in_plan,
        }
    }

    /// Whether its result is never shown (`_ansible_verbose_override`): what gathers facts.
    pub fn hides_result(self) -> bool {
        self.is("setup") || self.traits().facts == Facts::Gathered
    }
}

/// ansible's `boolean(value, strict=False)` for an action's own flags: only its true words
/// are true.
pub(crate) fn loose_bool(node: &Node) -> bool {
    match &node.value {
        tack_yaml::Value::Bool(v) => *v,
        other => matches!(
            tack_yaml::pyrepr::str(other).to_ascii_lowercase().as_str(),
            "yes" | "on" | "1" | "true" | "t" | "y" | "1.0"
        ),
    }
}

/// What an action sees.
#[derive(Clone)]
pub struct ActionInput<'a> {
    pub action: Action,
    /// Arguments rendered (except [`Action::raw_args`], left as written).
    pub args: &'a Mapping,
    pub scope: &'a Scope,
    pub templar: &'a Templar,
    pub task_origin: Option<Origin>,
    /// The name the task's banner shows (`pause` asks under it).
    pub task_name: &'a str,
    pub verbosity: i64,
    /// The provenance of what rendering the arguments read.
    pub derived: Provenance,
    /// `--check` / `check_mode:` for this task.
    pub check_mode: bool,
    /// `--diff` / `diff:` for this task.
    pub diff: bool,
    /// The run's diff settings (size limit, controller temp directory).
    pub diff_settings: &'a tack_report::callback::diff::DiffSettings,
    /// The `async_dir` setting, used when no `ansible_async_dir` variable is set.
    pub async_dir: &'a str,
    /// Where relative `src` files are found.
    pub search: &'a copy::SearchPath,
    /// The arguments whose render read something a managed host said: such a value never
    /// names a controller file to read (seed 002).
    pub host_named: &'a [String],
    /// The run's inventory (`add_host` and `group_by` change it).
    pub inventory: &'a tack_inventory::live::LiveInventory,
    /// The task's `environment` (see `tack_agent::modules::environment`).
    pub environment: &'a std::collections::BTreeMap<String, String>,
    /// The task's `timeout` in seconds (`None` or 0: none).
    pub timeout: Option<u64>,
    /// The task's `async`/`poll`, when it runs as a job (`command`/`shell` only).
    pub async_task: Option<&'a crate::async_job::AsyncTask<'a>>,
    /// Whether the task is delegated (`delegate_to`): what its host says is not the task
    /// host's fact.
    pub delegated: bool,
    /// Whether the host's link is ansible's `local` connection (`reboot` refuses it; only
    /// set for actions that ask).
    pub local_connection: bool,
    /// Whether the task becomes another user on the host (`fetch` then goes straight to
    /// `slurp`, as ansible's does; only set for actions that ask).
    pub becomes: bool,
    /// The host's link (the controller itself, in-process, for actions that never touch the
    /// host).
    pub conn: &'a dyn tack_links::Connection,
    /// The `-vvv` record of this run on the host: the links record their uses in it, and
    /// the action its notes about its own steps.
    pub trace: &'a tack_links::Trace,
    /// The host's Python interpreter when `ansible_python_interpreter` does not name one:
    /// the configured `interpreter_python` path, or the discovered one (`tack_links::interpreter`).
    pub python: Option<&'a str>,
    /// For `wait_for_connection` and `reboot`: the host's link closed and opened anew (with
    /// that ssh `ConnectTimeout`, when given), or why not.
    pub relink:
        &'a dyn Fn(Option<u64>) -> Result<std::sync::Arc<dyn tack_links::Connection>, String>,
}

impl<'a> ActionInput<'a> {
    /// The same input with other arguments, run in the foreground: what an action plugin
    /// hands the module it dispatches to (`package` to its backend, `service` to `systemd`).
    pub(crate) fn with_args<'b>(&'b self, args: &'b Mapping) -> ActionInput<'b>
    where
        'a: 'b,
    {
        ActionInput {
            action: self.action,
            args,
            scope: self.scope,
            templar: self.templar,
            task_origin: self.task_origin.clone(),
            task_name: self.task_name,
            verbosity: self.verbosity,
            derived: self.derived.clone(),
            check_mode: self.check_mode,
            diff: self.diff,
            diff_settings: self.diff_settings,
            async_dir: self.async_dir,
            inventory: self.inventory,
            environment: self.environment,
            timeout: self.timeout,
            async_task: None,
            delegated: self.delegated,
            local_connection: self.local_connection,
            becomes: self.becomes,
            search: self.search,
            host_named: self.host_named,
            conn: self.conn,
            trace: self.trace,
            python: self.python,
            relink: self.relink,
        }
    }

    /// The refusal for a controller file named by a managed host, checked before the path is
    /// so much as looked up (a "not found" would already tell the host what exists).
    /// Argument `key` as Python's `str()` shows it; `None` when unset or null.
    pub fn text(&self, key: &str) -> Option<String> {
        self.args
            .get(key)
            .filter(|n| !matches!(n.value, tack_yaml::Value::Null))
            .map(|n| tack_yaml::pyrepr::str(&n.value))
    }

    pub fn refuse_host_named(&self, args: &[&str], verb: &str) -> Option<ActionOutput> {
        let arg = args.iter().find(|a| self.host_named.iter().any(|n| n == *a))?;
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        // A file read and sent, or a place written (seed 002's two sentences).
        let what = if verb == "written" { "path" } else { "file" };
        let msg = format!(
            "the '{arg}' of this task was named by a managed host, and a controller {what} a \
             host chose is never {verb}"
        );
        Some(ActionOutput::action_failed(data, s(&msg), self.task_origin.clone()))
    }
}

/// What an action gives back.
pub struct ActionOutput {
    pub data: Mapping,
    pub verbose_always: bool,
    pub error: Option<Diagnostic>,
    /// Host variables to set (`set_fact`), in order.
    pub facts: Vec<(String, Node, Provenance)>,
    /// Host variables `include_vars` loaded, in order.
    pub included: Vec<(String, Node)>,
    /// The task raised instead of returning a result: `changed_when`/`failed_when` are not
    /// evaluated.
    pub raised: bool,
    /// `tack plan`: the task whose unavailable output a render of the action's own read (a
    /// template file's); the plan defers the task on it. (One name, not a list: the output
    /// stays small enough to travel in a `Result`.)
    pub unavailable: Option<std::sync::Arc<str>>,
}

impl ActionOutput {
    pub fn new(data: Mapping) -> ActionOutput {
        ActionOutput {
            data,
            verbose_always: false,
            error: None,
            facts: Vec::new(),
            included: Vec::new(),
            raised: false,
            unavailable: None,
        }
    }

    /// ansible's `AnsibleActionFail`: a failed result whose message is the action's.
    fn action_failed(mut data: Mapping, msg: Node, origin: Option<Origin>) -> ActionOutput {
        let text = tack_yaml::pyrepr::str(&msg.value);
        data.insert(s("failed"), b(true));
        data.insert(s("msg"), msg);
        // ansible raises AnsibleActionFail and keeps the exception's place in the result;
        // tack has no Python traceback to show, which is what ansible says there too.
        data.insert(s("exception"), s("(traceback unavailable)"));
        let mut out = ActionOutput::new(data);
        out.error = Some(Diagnostic::at(format!("Task failed: Action failed: {text}"), origin));
        out
    }
}

/// The refusal for an `environment` on an action that does not pass it on.
pub fn environment_refusal(action: Action, origin: Option<Origin>) -> Diagnostic {
    Diagnostic::at(
        format!(
            "tack does not support the keyword 'environment' with the action '{}' yet (only \
             with command and shell)",
            action.fqcn()
        ),
        origin,
    )
}

/// Runs `input.action`.
pub fn run(input: &ActionInput<'_>) -> ActionOutput {
    // A task environment a module would not see is refused, not dropped (most are refused
    // before the run; an included file's task can only be caught here).
    if !input.environment.is_empty() && !input.action.takes_environment() {
        return errored(environment_refusal(input.action, input.task_origin.clone()));
    }
    match input.action {
        Action::Plugin(plugin) => catalogue::run(plugin, input),
        Action::Module("uri") => bounded::bounded(input, uri::run),
        Action::Module(name) => module::run(input, name),
        Action::Python(name) => crate::python_path::action::run(input, name),
        // The task runner fails the task before any action runs (it knows the name).
        Action::Unresolvable => errored(Diagnostic::at(
            "Cannot resolve the action to an action or module.",
            input.task_origin.clone(),
        )),
    }
}

/// An action that raised an ansible error of its own (not a module's failure): the result is
/// `changed: false`, `failed` and the error's one-line message, and no traceback.
pub fn raised(error: Diagnostic) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&error.brief()));
    let mut out = ActionOutput::new(data);
    out.error = Some(error);
    out.raised = true;
    out
}

/// A task that failed with an error instead of a result (ansible's exception results): the
/// result is only `failed` and the error's one-line message.
pub fn errored(diag: Diagnostic) -> ActionOutput {
    // ansible's result for a task whose action raised (`create_from_action_exception`).
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("exception"), s("(traceback unavailable)"));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&diag.brief()));
    let mut out = ActionOutput::new(data);
    out.error = Some(diag);
    out.raised = true;
    out
}
