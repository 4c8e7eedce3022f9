//! What an action sees: its rendered arguments, the task's variables and modes, the host's
//! link and the run's settings, and the questions every action asks of them (an argument as
//! Python's `str()`, a controller path a managed host named).

use tack_diag::Origin;
use tack_template::{Provenance, Scope, Templar};
use tack_yaml::{Mapping, Node};

use tack_report::result::{b, s};

use crate::output::ActionOutput;

/// ansible's `boolean(value, strict=False)`, which action plugins read their own flags with.
pub(crate) fn loose_bool(node: &Node) -> bool {
    node.value.boolean_loose()
}

/// What an action sees.
#[derive(Clone)]
pub struct ActionInput<'a> {
    /// Arguments rendered (except [`Action::raw_args`], left as written).
    pub args: &'a Mapping,
    pub scope: &'a Scope,
    pub templar: &'a Templar,
    pub task_origin: Option<Origin>,
    /// The name the task's banner shows (`pause` asks under it).
    pub task_name: &'a str,
    /// The action as the task wrote it (`ansible.builtin.fail`): ansible's messages about
    /// the action's own arguments name it so.
    pub action_name: &'a str,
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
    /// The `python_module_rlimit_nofile` setting, used when no
    /// `ansible_python_module_rlimit_nofile` variable is set.
    pub rlimit_setting: Option<u64>,
    /// The `inject_invocation` setting, used when no `ansible_inject_invocation` variable
    /// is set.
    pub inject_setting: bool,
    /// Where relative `src` files are found.
    pub search: &'a SearchPath,
    /// The arguments whose render read something a managed host said: such a value never
    /// names a controller file to read (seed 002).
    pub host_named: &'a [String],
    /// Each string of the arguments says its own trust (`Value::Unsafe` where not trusted):
    /// `set_fact` keeps them so (`tack_template::value::marking_trust`).
    pub trust_marked: bool,
    /// The run's inventory (`add_host` and `group_by` change it).
    pub inventory: &'a tack_inventory::live::LiveInventory,
    /// The task's `environment` (see `tack_agent::modules::environment`).
    pub environment: &'a std::collections::BTreeMap<String, String>,
    /// The task's `timeout` in seconds (`None` or 0: none).
    pub timeout: Option<u64>,
    /// The task's `async`/`poll`, when it runs as a job (native modules only).
    pub async_task: Option<&'a AsyncTask<'a>>,
    /// Whether the task is delegated (`delegate_to`): what its host says is not the task
    /// host's fact.
    pub delegated: bool,
    /// Whether the host's link is ansible's `local` connection (`reboot` refuses it; only
    /// set for actions that ask).
    pub local_connection: bool,
    /// The connection plugin written in Python the host's link goes through, when it does
    /// (an action plugin written in Python gets it, with its options, as ansible's does;
    /// only set for actions that ask).
    pub plugin: Option<&'a tack_links::PluginSettings>,
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
    /// Where the task finds modules by name (`library/` beside its play or role, the
    /// configured paths): for the modules an action runs by name.
    pub modules: Option<&'a tack_playbook::ModuleSearch>,
    /// The task's `module_defaults` for another module, by its resolved name, rendered: what
    /// an action hands a module it runs itself (`gather_facts` its fact modules).
    pub module_defaults: &'a dyn Fn(&str) -> Result<Mapping, tack_diag::Diagnostic>,
}

impl<'a> ActionInput<'a> {
    /// A host variable rendered for the task's host, as text; `None` when the host does not
    /// set it (or it renders to `omit`), `Err` with the render's message.
    pub(crate) fn host_var(&self, name: &str) -> Result<Option<String>, String> {
        let Some(binding) = self.scope.get(name) else { return Ok(None) };
        match self.templar.render(binding.node(), self.scope) {
            Ok(rendered) => Ok(Some(tack_yaml::pyrepr::str(&rendered.value.value))),
            Err(e) if e.is_omitted() => Ok(None),
            Err(e) => Err(e.message),
        }
    }

    /// ansible's `ansible_python_module_rlimit_nofile` for the task's modules (the setting
    /// where the host's variable does not say), `None` when it asks for none
    /// (`crate::interpreter_check::checked_rlimit` failed a value that is no number).
    pub(crate) fn rlimit_nofile(&self) -> Option<u64> {
        let name = "ansible_python_module_rlimit_nofile";
        if self.scope.get(name).is_none() {
            return self.rlimit_setting;
        }
        // A variable that renders to `omit` is 0 to ansible: it asks for none.
        let text = self.host_var(name).ok().flatten()?;
        text.trim().parse::<u64>().ok().filter(|n| *n > 0)
    }

    /// ansible's `INJECT_INVOCATION` for the task's modules: the host's
    /// `ansible_inject_invocation` (a boolean as ansible reads one), else the setting.
    pub(crate) fn inject_invocation(&self) -> bool {
        let name = "ansible_inject_invocation";
        let Some(binding) = self.scope.get(name) else { return self.inject_setting };
        match self.templar.render(binding.node(), self.scope) {
            Ok(rendered) => rendered.value.value.boolean_loose(),
            Err(_) => self.inject_setting,
        }
    }

    /// How an action plugin asks the host's module to run with `args`: with the task's
    /// check and diff modes and its environment, as ansible's `_execute_module` does.
    pub(crate) fn invocation(
        &self,
        mut args: serde_json::Map<String, serde_json::Value>,
    ) -> tack_agent::Invocation {
        if self.inject_invocation() {
            args.insert("_ansible_inject_invocation".into(), serde_json::Value::Bool(true));
        }
        tack_agent::Invocation {
            args,
            check_mode: self.check_mode,
            diff: self.diff,
            environment: self.environment.clone(),
            timeout: None,
            rlimit_nofile: self.rlimit_nofile(),
        }
    }

    /// The same input with other arguments, run in the foreground: what an action plugin
    /// hands the module it dispatches to (`package` to its backend, `service` to `systemd`).
    pub(crate) fn with_args<'b>(&'b self, args: &'b Mapping) -> ActionInput<'b>
    where
        'a: 'b,
    {
        ActionInput {
            args,
            scope: self.scope,
            templar: self.templar,
            task_origin: self.task_origin.clone(),
            task_name: self.task_name,
            action_name: self.action_name,
            verbosity: self.verbosity,
            derived: self.derived.clone(),
            check_mode: self.check_mode,
            diff: self.diff,
            diff_settings: self.diff_settings,
            async_dir: self.async_dir,
            rlimit_setting: self.rlimit_setting,
            inject_setting: self.inject_setting,
            trust_marked: false,
            inventory: self.inventory,
            environment: self.environment,
            timeout: self.timeout,
            async_task: None,
            delegated: self.delegated,
            local_connection: self.local_connection,
            plugin: self.plugin,
            becomes: self.becomes,
            search: self.search,
            host_named: self.host_named,
            conn: self.conn,
            trace: self.trace,
            python: self.python,
            relink: self.relink,
            modules: self.modules,
            module_defaults: self.module_defaults,
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

    /// Whether the argument `arg`'s render read what a managed host said.
    pub fn is_host_named(&self, arg: &str) -> bool {
        self.host_named.iter().any(|n| n == arg)
    }

    /// Where a controller file a managed host named may be read from for this task: the
    /// task's roles, the directory of its file and the playbook's.
    pub fn confinement(&self) -> Vec<std::path::PathBuf> {
        let mut roots = self.search.roles.clone();
        roots.push(self.search.task_dir.clone());
        roots.push(self.search.basedir.clone());
        roots
    }

    /// The task's failure when the host-named argument `arg` (`name`) leaves the
    /// confinement (`checked` says).
    pub fn confine(
        &self,
        arg: &str,
        name: &str,
        checked: Result<(), tack_loader::confine::Escape>,
    ) -> Result<(), ActionOutput> {
        checked.map_err(|escape| {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let msg = escape.message(&format!("the '{arg}' of this task was"), name);
            ActionOutput::action_failed(data, s(&msg), self.task_origin.clone())
        })
    }

    /// `inject_invocation` on an action whose ansible plugin hands its module arguments of
    /// its own making (temporary files on the controller and the host, checksums): what its
    /// `invocation` would hold is not what tack's action gives its module, so it is refused
    /// by name rather than shown different.
    pub(crate) fn refuse_invocation(&self, action: &str) -> Option<ActionOutput> {
        self.inject_invocation().then(|| {
            crate::output::errored(tack_diag::Diagnostic::at(
                format!(
                    "tack does not support inject_invocation with the action '{action}' yet \
                     (ansible's {action} reports the arguments it made for its module)"
                ),
                self.task_origin.clone(),
            ))
        })
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

/// A task's `async` and `poll`.
pub struct AsyncTask<'a> {
    /// `async`: the seconds the job may run.
    pub limit: u64,
    /// `poll`: seconds between looks; 0 returns at once.
    pub poll: u64,
    /// The host the task runs for (the notes name it).
    pub host: &'a str,
}

/// Where the action finds relative sources: the task's role, then the play's directory.
pub struct SearchPath {
    pub basedir: std::path::PathBuf,
    /// The task's role and the roles above it.
    pub roles: Vec<std::path::PathBuf>,
    /// The directory of the file the task was written in.
    pub task_dir: std::path::PathBuf,
}
