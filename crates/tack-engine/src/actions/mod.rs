//! The actions that run on the controller without touching a host (`debug`, `set_fact`,
//! `assert`, `fail`): each takes its rendered arguments and the task's variables and returns
//! the task's result, as ansible's action plugins of the same names do.
//!
//! Actions never print and never decide what runs next; the executor does both.

mod assert;
pub mod copy;
mod debug;
mod fail;
mod include_vars;
mod module;
mod set_fact;

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
    /// The `copy` action plugin.
    Copy,
    /// The `template` action plugin.
    Template,
    IncludeVars,
    /// A name ansible-core cannot resolve either: the task fails on each host it runs on, as
    /// ansible's does (`Cannot resolve '...' to an action or module.`).
    Unresolvable,
}

impl Action {
    /// The action a task names (short, `ansible.builtin.` or `ansible.legacy.` spelling).
    pub fn find(name: &str) -> Option<Action> {
        match tack_playbook::tables::short_builtin_name(name) {
            "debug" => Some(Action::Debug),
            "set_fact" => Some(Action::SetFact),
            "assert" => Some(Action::Assert),
            "fail" => Some(Action::Fail),
            // ansible runs these through controller-side action plugins (staging, rendering,
            // checksums); their host halves alone would not do what the task asks.
            "copy" => Some(Action::Copy),
            "include_vars" => Some(Action::IncludeVars),
            "template" => Some(Action::Template),
            "fetch" | "assemble" | "unarchive" | "script" => None,
            _ => tack_agent::modules::native_name(name).map(Action::Module),
        }
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

    /// The fully qualified name ansible's messages use.
    pub fn fqcn(self) -> String {
        match self {
            Action::Debug => "ansible.builtin.debug".into(),
            Action::SetFact => "ansible.builtin.set_fact".into(),
            Action::Assert => "ansible.builtin.assert".into(),
            Action::Fail => "ansible.builtin.fail".into(),
            Action::Module(name) => format!("ansible.builtin.{name}"),
            Action::Copy => "ansible.builtin.copy".into(),
            Action::Template => "ansible.builtin.template".into(),
            Action::IncludeVars => "ansible.builtin.include_vars".into(),
            Action::Unresolvable => "unresolvable".into(),
        }
    }

    /// Whether free-form text (`_raw_params`) goes to the action; controller actions refuse
    /// it, modules decide for themselves (`command` takes it, `file` refuses it).
    pub fn takes_raw_params(self) -> bool {
        matches!(self, Action::Module(_) | Action::IncludeVars | Action::Unresolvable)
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
            | Action::Copy
            | Action::Template
            | Action::IncludeVars
            | Action::Unresolvable => &[],
        }
    }

    /// The arguments the action accepts; anything else is refused before the run starts.
    pub fn known_args(self) -> &'static [&'static str] {
        match self {
            Action::Debug => &["msg", "var", "verbosity"],
            Action::Assert => &["that", "fail_msg", "msg", "success_msg", "quiet"],
            Action::Fail => &["msg"],
            // One file, optionally nested; directory loading is not done yet.
            Action::IncludeVars => &["file", "name"],
            // Any variable name; a module checks its own arguments, in ansible's words.
            Action::SetFact
            | Action::Module(_)
            | Action::Copy
            | Action::Template
            | Action::Unresolvable => &[],
        }
    }
}

/// What an action sees.
pub struct ActionInput<'a> {
    pub action: Action,
    /// Arguments rendered (except [`Action::raw_args`], left as written).
    pub args: &'a Mapping,
    pub scope: &'a Scope,
    pub templar: &'a Templar,
    pub task_origin: Option<Origin>,
    pub verbosity: i64,
    /// The provenance of what rendering the arguments read.
    pub derived: Provenance,
    /// `--check` / `check_mode:` for this task.
    pub check_mode: bool,
    /// `--diff` / `diff:` for this task.
    pub diff: bool,
    /// Where relative `src` files are found.
    pub search: &'a copy::SearchPath,
    /// The arguments whose render read something a managed host said: such a value never
    /// names a controller file to read (seed 002).
    pub host_named: &'a [String],
}

impl ActionInput<'_> {
    /// The refusal for a controller file named by a managed host, checked before the path is
    /// so much as looked up (a "not found" would already tell the host what exists).
    pub fn refuse_host_named(&self, args: &[&str], verb: &str) -> Option<ActionOutput> {
        let arg = args.iter().find(|a| self.host_named.iter().any(|n| n == *a))?;
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        let msg = format!(
            "the '{arg}' of this task was named by a managed host, and a controller file a \
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
}

impl ActionOutput {
    fn new(data: Mapping) -> ActionOutput {
        ActionOutput {
            data,
            verbose_always: false,
            error: None,
            facts: Vec::new(),
            included: Vec::new(),
            raised: false,
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
    match input.action {
        Action::Debug => debug::run(input),
        Action::SetFact => set_fact::run(input),
        Action::Assert => assert::run(input),
        Action::Fail => fail::run(input),
        Action::Module(name) => module::run(input, name),
        Action::Copy => copy::copy(input, input.search),
        Action::Template => copy::template(input, input.search),
        Action::IncludeVars => include_vars::run(input),
        // The task runner fails the task before any action runs (it knows the name).
        Action::Unresolvable => errored(Diagnostic::at(
            "Cannot resolve the action to an action or module.",
            input.task_origin.clone(),
        )),
    }
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
