//! What a task's action is, as the run loop asks: a row of the catalogue (an action of
//! ansible-core's that tack runs on the controller), a native module, an ansible-core module
//! run through the Python path, a module a `library/` directory ships, or a name ansible
//! cannot resolve either; and every trait of it the run loop reads (from its row, or what
//! every module is).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tack_playbook::ast::{LibraryModule, Task};

use crate::catalogue::{self, Facts, InPlan, Plugin};
use crate::python_actions::PythonAction;

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
    /// A module found in a `library/` directory (or on a configured module path), run
    /// through ansible's module code as ansible-core's own are.
    Library(&'static LibraryModule),
    /// An action plugin written in Python that the task's search found (`action_plugins/`
    /// beside a playbook or role, the configured path): ansible runs it in place of any
    /// module or action of that name (`crate::python_actions`).
    PythonAction(&'static PythonAction),
    /// A name ansible-core cannot resolve either: the task fails on each host it runs on, as
    /// ansible's does (`Cannot resolve '...' to an action or module.`).
    Unresolvable,
    /// A name that is a template (`action: '{{ module_to_run }}'`): ansible renders it for
    /// each host (and loop item) where the task runs, and resolves what it renders to then.
    Templated,
}

impl PartialEq for Action {
    fn eq(&self, other: &Action) -> bool {
        match (self, other) {
            (Action::Plugin(a), Action::Plugin(b)) => a.name == b.name,
            (Action::Module(a), Action::Module(b)) | (Action::Python(a), Action::Python(b)) => {
                a == b
            }
            (Action::Library(a), Action::Library(b)) => a == b,
            (Action::PythonAction(a), Action::PythonAction(b)) => a == b,
            (Action::Unresolvable, Action::Unresolvable)
            | (Action::Templated, Action::Templated) => true,
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
const MODULE: Plugin = Plugin { touches_host: true, takes_raw_params: true, ..catalogue::DEFAULT };

/// What a name ansible-core cannot resolve is.
const UNRESOLVABLE: Plugin = Plugin { touches_host: false, takes_raw_params: true, ..MODULE };

/// The library modules of the run, each kept once: an [`Action`] is a small copyable value
/// the run loop passes around, so it names a module the run keeps for its whole length
/// (bounded by the module files the playbooks name).
static LIBRARY: Mutex<Option<HashMap<LibraryModule, &'static LibraryModule>>> = Mutex::new(None);

fn kept(module: &LibraryModule) -> &'static LibraryModule {
    let mut kept = LIBRARY.lock().unwrap_or_else(PoisonError::into_inner);
    let kept = kept.get_or_insert_with(HashMap::new);
    if let Some(m) = kept.get(module) {
        return m;
    }
    let m: &'static LibraryModule = Box::leak(Box::new(module.clone()));
    kept.insert(module.clone(), m);
    m
}

/// The action plugins of the run, each kept once (as [`LIBRARY`] keeps modules).
static PYTHON_ACTIONS: Mutex<Option<HashMap<PythonAction, &'static PythonAction>>> =
    Mutex::new(None);

fn kept_action(
    name: &str,
    path: &std::path::Path,
    module: Option<&tack_playbook::LibraryModule>,
) -> &'static PythonAction {
    let module = module
        .and_then(|m| m.collection.as_ref())
        .filter(|c| c.action_plugin.is_some())
        .map(|c| c.fqcn.clone());
    let plugin = PythonAction { name: name.to_string(), path: path.to_path_buf(), module };
    let mut kept = PYTHON_ACTIONS.lock().unwrap_or_else(PoisonError::into_inner);
    let kept = kept.get_or_insert_with(HashMap::new);
    if let Some(p) = kept.get(&plugin) {
        return p;
    }
    let p: &'static PythonAction = Box::leak(Box::new(plugin.clone()));
    kept.insert(plugin, p);
    p
}

/// What an action plugin written in Python is to the run loop: it may do anything on the
/// host, through ansible-core on the controller; a plan cannot know what it would do.
const PYTHON_ACTION: Plugin = Plugin {
    touches_host: true,
    takes_raw_params: false,
    python: true,
    needs_ansible_core: true,
    asks_link: true,
    in_plan: InPlan::WouldRun,
    ..catalogue::DEFAULT
};

/// Whether an action name is a template, rendered where the task runs.
fn is_template(name: &str) -> bool {
    name.contains("{{")
}

impl Action {
    /// The action `task` runs: the module its loading found in a `library/` directory (which
    /// wins over a builtin of that name, as in ansible), else [`Action::find`].
    pub fn of(task: &Task) -> Option<Action> {
        if task.action_rejected {
            return Some(Action::Unresolvable);
        }
        if let Some(path) = &task.action_plugin {
            return Some(Action::PythonAction(kept_action(
                &task.action,
                path,
                task.library.as_deref(),
            )));
        }
        match &task.library {
            Some(module) => Some(Action::Library(kept(module))),
            None if is_template(&task.action) => Some(Action::Templated),
            None => Action::find(&task.action),
        }
    }

    /// [`Action::of`], or what [`Action::resolve`] says of the name.
    pub fn resolve_task(task: &Task) -> Option<Action> {
        if task.action_rejected {
            return Some(Action::Unresolvable);
        }
        if let Some(path) = &task.action_plugin {
            return Some(Action::PythonAction(kept_action(
                &task.action,
                path,
                task.library.as_deref(),
            )));
        }
        match &task.library {
            Some(module) => Some(Action::Library(kept(module))),
            None if is_template(&task.action) => Some(Action::Templated),
            None => Action::resolve(&task.action),
        }
    }

    /// What a templated action's rendered `name` resolves to where the task runs: a module
    /// the task's module search finds (`library/`, the configured paths), else
    /// [`Action::resolve`].
    pub fn rendered(task: &Task, name: &str) -> Option<Action> {
        let search = task.library_search.as_deref();
        if search.is_some_and(|search| search.rejects(name)) {
            return Some(Action::Unresolvable);
        }
        let found = search.and_then(|search| {
            search
                .action_plugin(name)
                .or_else(|| search.normal_override(name, search.find(name).as_ref()))
        });
        if let Some(path) = found {
            return Some(Action::PythonAction(kept_action(
                name,
                &path,
                search.and_then(|s| s.find(name)).as_ref(),
            )));
        }
        Action::named(search, name)
    }

    /// What `name` resolves to for a task whose module search is `search` (a module it
    /// finds first, else [`Action::resolve`]): a module an action plugin runs by name
    /// (`gather_facts`' fact modules).
    pub fn named(search: Option<&tack_playbook::ModuleSearch>, name: &str) -> Option<Action> {
        if search.is_some_and(|search| search.rejects(name)) {
            return Some(Action::Unresolvable);
        }
        if let Some(module) = search.and_then(|search| search.find(name)) {
            return Some(Action::Library(kept(&module)));
        }
        Action::resolve(name)
    }

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
        let builtin_spelling = tack_py::ansible::is_core_spelling(name);
        Action::find(name).or_else(|| {
            (builtin_spelling && !name.contains("{{") && !tack_playbook::builtin_resolves(name))
                .then_some(Action::Unresolvable)
        })
    }

    /// Whether ansible's action plugin of this name transfers files (`TRANSFERS_FILES`): it
    /// reaches the host first, to make its remote temporary directory, whatever it does next.
    pub fn transfers_files(self) -> bool {
        matches!(self.name(), "assemble" | "copy" | "script" | "template" | "unarchive" | "uri")
    }

    /// The short name (`debug`, `command`); empty for [`Action::Unresolvable`].
    pub fn name(self) -> &'static str {
        match self {
            Action::Plugin(plugin) => plugin.name,
            Action::Module(name) | Action::Python(name) => name,
            Action::Library(module) => &module.name,
            Action::PythonAction(plugin) => &plugin.name,
            Action::Unresolvable | Action::Templated => "",
        }
    }

    /// Whether this is the action or module called `short`.
    pub fn is(self, short: &str) -> bool {
        // A library module of a builtin's name is not that builtin to the run loop.
        !matches!(
            self,
            Action::Unresolvable | Action::Templated | Action::Library(_) | Action::PythonAction(_)
        ) && self.name() == short
    }

    /// How the action runs and what the run loop asks of it.
    pub fn traits(self) -> &'static Plugin {
        match self {
            Action::Plugin(plugin) => plugin,
            // Until it renders, a templated action may be any module: it may need the host.
            Action::Module(_) | Action::Python(_) | Action::Library(_) | Action::Templated => {
                &MODULE
            }
            Action::Unresolvable => &UNRESOLVABLE,
            Action::PythonAction(_) => &PYTHON_ACTION,
        }
    }

    /// The fully qualified name ansible's messages use.
    pub fn fqcn(self) -> String {
        match self {
            Action::Unresolvable | Action::Templated => "unresolvable".into(),
            Action::Library(module) => module.fqcn(),
            // ansible resolves a plugin outside collections to its name as written.
            Action::PythonAction(plugin) => plugin.resolved_name(),
            _ => format!("ansible.builtin.{}", self.name()),
        }
    }

    /// The name `module_defaults` entries are matched against: [`Action::fqcn`], but an
    /// action plugin outside collections as `ansible.legacy.NAME` (how ansible resolves the
    /// entry's name).
    pub fn defaults_name(self) -> String {
        match self {
            Action::PythonAction(PythonAction { module: Some(module), .. }) => module.clone(),
            Action::PythonAction(plugin)
                if !plugin.resolved_name().contains('.')
                    || plugin.name.starts_with("ansible.legacy.") =>
            {
                let short = tack_py::ansible::short_name(
                    &plugin.name,
                    tack_py::ansible::CoreCollections::BuiltinOrLegacy,
                );
                format!("ansible.legacy.{short}")
            }
            other => other.fqcn(),
        }
    }

    /// Whether free-form text (`_raw_params`) goes to the action; controller actions refuse
    /// it, modules decide for themselves (`command` takes it, `file` refuses it).
    pub fn takes_raw_params(self) -> bool {
        if let Action::PythonAction(plugin) = self {
            return crate::python_actions::supports_raw_params(plugin);
        }
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

    /// The arguments the action evaluates as expressions (see [`Plugin::expression_args`]).
    pub fn expression_args(self) -> &'static [&'static str] {
        self.traits().expression_args
    }

    /// The arguments the action accepts (empty: any); anything else is refused before the
    /// run starts.
    /// Whether ansible's action for it takes `async` (its `_supports_async`): modules, and
    /// the action plugins that hand their module to the job runner. Every other action
    /// plugin fails a task with `async` when it runs (`This action (...) does not support
    /// async.`).
    pub fn takes_async(self) -> bool {
        match self {
            Action::Plugin(p) => ["uri", "service", "package", "dnf"].contains(&p.name),
            _ => true,
        }
    }

    /// Whether the action runs ansible-core's own module code on the host.
    pub fn runs_python(self) -> bool {
        matches!(self, Action::Python(_) | Action::Library(_)) || self.traits().python
    }

    /// Whether the action cannot run without the controller's ansible-core.
    pub fn needs_ansible_core(self) -> bool {
        matches!(self, Action::Python(_) | Action::Library(_)) || self.traits().needs_ansible_core
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
