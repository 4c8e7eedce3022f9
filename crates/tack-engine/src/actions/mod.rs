//! The actions that run on the controller without touching a host (`debug`, `set_fact`,
//! `assert`, `fail`, `include_vars`, `add_host`, `group_by`, `pause`, `set_stats`,
//! `validate_argument_spec`), and the
//! action plugins that decide on the controller what the host does (`copy`, `template`,
//! `raw`, `script`, `fetch`, `assemble`, `service`, `package`, `wait_for_connection`): each takes its
//! rendered arguments and the task's variables and returns the task's result, as ansible's
//! action plugins of the same names do.
//!
//! Actions never print and never decide what runs next; the executor does both (`add_host`
//! and `group_by` change only the run's [`crate::live::LiveInventory`]).

mod assemble;
mod assert;
mod bounded;
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
pub(crate) mod module;
mod package;
pub mod pause;
mod raw;
mod reboot;
mod script;
mod service;
mod set_fact;
mod set_stats;
mod shell_run;
mod staging;
mod unarchive;
mod uri;
mod validate_argument_spec;

use tack_diag::{Diagnostic, Origin};
use tack_template::{Provenance, Scope, Templar};
use tack_yaml::{Mapping, Node};

use crate::result::{b, s};

/// A controller action tack runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Debug,
    SetFact,
    Assert,
    Fail,
    /// A native module, run on the host through its connection.
    Module(&'static str),
    /// An ansible-core module tack has no native code for, run through ansible's own module
    /// code (`crate::python_path`).
    Python(&'static str),
    /// The `copy` action plugin.
    Copy,
    /// The `template` action plugin.
    Template,
    IncludeVars,
    /// `raw`: the free-form text run by the host's shell.
    Raw,
    /// The `script` action plugin.
    Script,
    /// The `fetch` action plugin.
    Fetch,
    /// The `assemble` action plugin.
    Assemble,
    /// The `unarchive` action plugin (ansible-core's module through the Python path).
    Unarchive,
    /// The `service` action plugin (the module chosen by the host's service manager).
    Service,
    /// The `package` action plugin (the module chosen by the host's package manager).
    Package,
    /// The `dnf` action plugin (the `dnf` or `dnf5` module, through the Python path).
    Dnf,
    /// The `reboot` action plugin.
    Reboot,
    /// `gather_facts` as a task (the `setup` module, its facts marked gathered).
    GatherFacts,
    AddHost,
    GroupBy,
    Pause,
    SetStats,
    WaitForConnection,
    /// `validate_argument_spec` (also what a role's argument spec adds).
    ValidateArgumentSpec,
    /// A name ansible-core cannot resolve either: the task fails on each host it runs on, as
    /// ansible's does (`Cannot resolve '...' to an action or module.`).
    Unresolvable,
}

impl Action {
    /// The action a task names (short, `ansible.builtin.` or `ansible.legacy.` spelling; a
    /// name ansible-core's routing redirects, such as `yum`, as its target).
    pub fn find(name: &str) -> Option<Action> {
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        let redirected =
            tack_playbook::tables::BUILTIN_ROUTING.iter().find_map(|(_, from, to)| match to {
                tack_playbook::tables::Routing::Redirect(target) if *from == short => Some(*target),
                _ => None,
            });
        if let Some(target) = redirected {
            return Action::find(target);
        }
        match short {
            "debug" => Some(Action::Debug),
            "set_fact" => Some(Action::SetFact),
            "assert" => Some(Action::Assert),
            "fail" => Some(Action::Fail),
            // ansible runs these through controller-side action plugins (staging, rendering,
            // checksums); their host halves alone would not do what the task asks.
            "copy" => Some(Action::Copy),
            "include_vars" => Some(Action::IncludeVars),
            "add_host" => Some(Action::AddHost),
            "group_by" => Some(Action::GroupBy),
            "pause" => Some(Action::Pause),
            "set_stats" => Some(Action::SetStats),
            "wait_for_connection" => Some(Action::WaitForConnection),
            "validate_argument_spec" => Some(Action::ValidateArgumentSpec),
            "template" => Some(Action::Template),
            "raw" => Some(Action::Raw),
            "script" => Some(Action::Script),
            "fetch" => Some(Action::Fetch),
            "assemble" => Some(Action::Assemble),
            "service" => Some(Action::Service),
            "package" => Some(Action::Package),
            "dnf" => Some(Action::Dnf),
            "reboot" => Some(Action::Reboot),
            "gather_facts" => Some(Action::GatherFacts),
            "unarchive" => Some(Action::Unarchive),
            _ => tack_agent::modules::native_name(name)
                .map(Action::Module)
                .or_else(|| crate::python_path::module_name(name).map(Action::Python)),
        }
    }

    /// [`Action::find`], or [`Action::Unresolvable`] for a short or `ansible.builtin.`/
    /// `ansible.legacy.` name ansible-core does not know (a collection's name may be one tack
    /// lacks, and stays unknown).
    pub fn resolve(name: &str) -> Option<Action> {
        let builtin_spelling = tack_py::ansible::is_core_spelling(name);
        Action::find(name).or_else(|| {
            (builtin_spelling && !name.contains("{{") && !tack_playbook::builtin_resolves(name))
                .then_some(Action::Unresolvable)
        })
    }

    /// The fully qualified name ansible's messages use.
    pub fn fqcn(self) -> String {
        match self {
            Action::Debug => "ansible.builtin.debug".into(),
            Action::SetFact => "ansible.builtin.set_fact".into(),
            Action::Assert => "ansible.builtin.assert".into(),
            Action::Fail => "ansible.builtin.fail".into(),
            Action::Module(name) | Action::Python(name) => format!("ansible.builtin.{name}"),
            Action::Copy => "ansible.builtin.copy".into(),
            Action::Template => "ansible.builtin.template".into(),
            Action::IncludeVars => "ansible.builtin.include_vars".into(),
            Action::Raw => "ansible.builtin.raw".into(),
            Action::Script => "ansible.builtin.script".into(),
            Action::Fetch => "ansible.builtin.fetch".into(),
            Action::Assemble => "ansible.builtin.assemble".into(),
            Action::Unarchive => "ansible.builtin.unarchive".into(),
            Action::Service => "ansible.builtin.service".into(),
            Action::Package => "ansible.builtin.package".into(),
            Action::Dnf => "ansible.builtin.dnf".into(),
            Action::Reboot => "ansible.builtin.reboot".into(),
            Action::GatherFacts => "ansible.builtin.gather_facts".into(),
            Action::AddHost => "ansible.builtin.add_host".into(),
            Action::GroupBy => "ansible.builtin.group_by".into(),
            Action::Pause => "ansible.builtin.pause".into(),
            Action::SetStats => "ansible.builtin.set_stats".into(),
            Action::WaitForConnection => "ansible.builtin.wait_for_connection".into(),
            Action::ValidateArgumentSpec => "ansible.builtin.validate_argument_spec".into(),
            Action::Unresolvable => "unresolvable".into(),
        }
    }

    /// Whether a task `environment` reaches what the action runs (controller actions run
    /// nothing, so ansible ignores it there too).
    pub fn takes_environment(self) -> bool {
        match self {
            Action::Module(name) => tack_agent::modules::TAKE_ENVIRONMENT.contains(&name),
            Action::Copy | Action::Template => false,
            _ => true,
        }
    }

    /// Whether free-form text (`_raw_params`) goes to the action; controller actions refuse
    /// it, modules decide for themselves (`command` takes it, `file` refuses it).
    pub fn takes_raw_params(self) -> bool {
        matches!(
            self,
            Action::Module(_)
                | Action::Python(_)
                | Action::IncludeVars
                | Action::Raw
                | Action::Script
                | Action::Unresolvable
        )
    }

    /// Whether the action runs anything on the task's host (and so needs its connection).
    pub fn touches_host(self) -> bool {
        matches!(
            self,
            Action::Module(_)
                | Action::Python(_)
                | Action::Copy
                | Action::Template
                | Action::Raw
                | Action::Script
                | Action::Fetch
                | Action::Assemble
                | Action::Unarchive
                | Action::Service
                | Action::Package
                | Action::Dnf
                | Action::Reboot
                | Action::GatherFacts
        )
    }

    /// Whether what the action returns comes only from the controller's own files, so
    /// registering it does not make it data a managed host said.
    pub fn trusted_result(self) -> bool {
        matches!(self, Action::IncludeVars)
    }

    /// Arguments the action reads unrendered (ansible's `finalize_task_arg` overrides).
    pub fn raw_args(self) -> &'static [&'static str] {
        match self {
            Action::Debug => &["var"],
            Action::Assert => &["that"],
            Action::SetFact
            | Action::Fail
            | Action::Module(_)
            | Action::Python(_)
            | Action::Copy
            | Action::Template
            | Action::IncludeVars
            | Action::Raw
            | Action::Script
            | Action::Fetch
            | Action::Assemble
            | Action::Unarchive
            | Action::Service
            | Action::Package
            | Action::Dnf
            | Action::Reboot
            | Action::GatherFacts => &[],
            Action::AddHost
            | Action::GroupBy
            | Action::Pause
            | Action::SetStats
            | Action::WaitForConnection
            | Action::ValidateArgumentSpec
            | Action::Unresolvable => &[],
        }
    }

    /// The arguments the action accepts; anything else is refused before the run starts.
    pub fn known_args(self) -> &'static [&'static str] {
        match self {
            Action::Debug => &["msg", "var", "verbosity"],
            Action::Assert => &["that", "fail_msg", "msg", "success_msg", "quiet"],
            Action::Fail => &["msg"],
            Action::IncludeVars => &[
                "file",
                "name",
                "dir",
                "depth",
                "files_matching",
                "ignore_files",
                "extensions",
                "ignore_unknown_extensions",
                "hash_behaviour",
            ],
            Action::GroupBy => &["key", "parents"],
            Action::Pause => &["echo", "minutes", "seconds", "prompt"],
            Action::SetStats => &["aggregate", "data", "per_host"],
            Action::WaitForConnection => &["connect_timeout", "delay", "sleep", "timeout"],
            Action::Raw => &["executable"],
            Action::Script => &["cmd", "creates", "removes", "chdir", "executable"],
            Action::Fetch => &["src", "dest", "flat", "fail_on_missing", "validate_checksum"],
            // Any variable name; a module checks its own arguments, in ansible's words.
            // add_host: every other argument is a host variable.
            Action::SetFact
            | Action::Module(_)
            | Action::Python(_)
            | Action::Copy
            | Action::Template
            | Action::Assemble
            | Action::Unarchive
            | Action::Service
            | Action::Package
            | Action::Dnf
            // reboot checks its own options when it runs, in ansible's words.
            | Action::Reboot
            // setup checks gather_facts' arguments.
            | Action::GatherFacts
            | Action::AddHost
            // ansible's action reads its three arguments and ignores any other.
            | Action::ValidateArgumentSpec
            | Action::Unresolvable => &[],
        }
    }
}

/// ansible's `boolean(value, strict=False)`, which action plugins read their own flags with.
pub(super) fn loose_bool(node: &Node) -> bool {
    node.value.boolean_loose()
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
    pub diff_settings: &'a crate::callback::diff::DiffSettings,
    /// The `async_dir` setting, used when no `ansible_async_dir` variable is set.
    pub async_dir: &'a str,
    /// Where relative `src` files are found.
    pub search: &'a copy::SearchPath,
    /// The arguments whose render read something a managed host said: such a value never
    /// names a controller file to read (seed 002).
    pub host_named: &'a [String],
    /// The run's inventory (`add_host` and `group_by` change it).
    pub inventory: &'a crate::live::LiveInventory,
    /// The task's `environment` (see `crate::environment`).
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
    /// The host's link (the in-process `Local` for actions that never touch the host).
    pub conn: &'a dyn crate::connection::Connection,
    /// The host's Python interpreter when `ansible_python_interpreter` does not name one:
    /// the configured `interpreter_python` path, or the discovered one (`crate::interpreter`).
    pub python: Option<&'a str>,
    /// For `wait_for_connection` and `reboot`: the host's link closed and opened anew (with
    /// that ssh `ConnectTimeout`, when given), or why not.
    pub relink: &'a dyn Fn(
        Option<u64>,
    )
        -> Result<std::sync::Arc<dyn crate::connection::Connection>, String>,
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
    pub(crate) fn new(data: Mapping) -> ActionOutput {
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

/// Runs `input.action`.
pub fn run(input: &ActionInput<'_>) -> ActionOutput {
    // A task environment a module would not see is refused, not dropped (most are refused
    // before the run; an included file's task can only be caught here).
    if !input.environment.is_empty() && !input.action.takes_environment() {
        return errored(crate::environment::refusal(input.action, input.task_origin.clone()));
    }
    match input.action {
        Action::Debug => debug::run(input),
        Action::SetFact => set_fact::run(input),
        Action::Assert => assert::run(input),
        Action::Fail => fail::run(input),
        Action::Module("uri") => bounded::bounded(input, uri::run),
        Action::Module(name) => module::run(input, name),
        Action::Python(name) => crate::python_path::action::run(input, name),
        // The action plugins that ask the host step by step: the task's `timeout` bounds
        // them whole (`bounded`); `reboot` bounds its own waits.
        Action::Copy => bounded::bounded(input, |i| copy::copy(i, i.search)),
        Action::Template => bounded::bounded(input, |i| copy::template(i, i.search)),
        Action::IncludeVars => include_vars::run(input),
        Action::Raw => bounded::bounded(input, raw::run),
        Action::Script => bounded::bounded(input, script::run),
        Action::Fetch => bounded::bounded(input, fetch::run),
        Action::Assemble => bounded::bounded(input, assemble::run),
        Action::Unarchive => bounded::bounded(input, unarchive::run),
        Action::Service => bounded::bounded(input, service::run),
        Action::Package => bounded::bounded(input, package::run),
        Action::Dnf => bounded::bounded(input, dnf::run),
        Action::Reboot => reboot::run(input),
        Action::GatherFacts => bounded::bounded(input, gather_facts::run),
        Action::AddHost => inventory::add_host(input),
        Action::GroupBy => inventory::group_by(input),
        Action::Pause => pause::pause(input),
        Action::SetStats => set_stats::run(input),
        Action::WaitForConnection => pause::wait_for_connection(input),
        Action::ValidateArgumentSpec => validate_argument_spec::run(input),
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
