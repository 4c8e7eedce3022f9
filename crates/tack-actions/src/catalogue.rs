//! ansible-core's controller actions and action plugins that tack runs, one row each: how the
//! action runs and every trait of it the run loop asks about. Adding an action means adding
//! one row here (and the module that runs it); nothing else lists actions.
//!
//! Modules are not rows: a native module is `tack_agent`'s (its own table), and any other
//! ansible-core module runs through the Python path ([`crate::Action`] covers both).

use crate::input::ActionInput;
use crate::output::ActionOutput;

/// How a task's action may be known only by running it, which a plan does not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InPlan {
    /// Its check-mode run says what it would do.
    CheckMode,
    /// What it does is known only by doing it (a command, a wait, a question): a plan says it
    /// would run.
    WouldRun,
}

/// What becomes of the `ansible_facts` in an action's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Facts {
    /// They become the host's facts (a module's, `setup`'s).
    Module,
    /// They become the host's facts, marked gathered (`gather_facts`; `gather_facts: smart`
    /// reads the mark).
    Gathered,
    /// The action sets host variables itself (`set_fact`, `include_vars`); its result's
    /// `ansible_facts` are only what it reports.
    Variables,
}

/// One controller action or action plugin.
pub struct Plugin {
    /// The short name; its fully qualified name is `ansible.builtin.<name>`.
    pub name: &'static str,
    /// Runs it.
    pub(crate) run: fn(&ActionInput<'_>) -> ActionOutput,
    /// The task's `timeout` bounds its whole run (the plugins that ask the host step by step;
    /// `reboot` bounds its own waits).
    pub(crate) bounded: bool,
    /// It runs something on the task's host, over its link.
    pub touches_host: bool,
    /// It opens links itself (`wait_for_connection`): it needs the host's connection settings
    /// without touching the host through the task's link.
    pub opens_links: bool,
    /// Free-form text (`_raw_params`) goes to it.
    pub takes_raw_params: bool,
    /// Arguments it reads unrendered (ansible's `finalize_task_arg` overrides).
    pub raw_args: &'static [&'static str],
    /// Arguments it evaluates as expressions once rendered: a string a template computed
    /// for one stays untrusted, so it is refused as ansible refuses it (`debug`'s `var`).
    pub expression_args: &'static [&'static str],
    /// The arguments it accepts; `None`: any (it checks its own, or every argument is data).
    pub known_args: Option<&'static [&'static str]>,
    /// What ansible's plugin does with an argument not in `known_args`, where it runs.
    pub unknown_args: UnknownArgs,
    /// What it returns comes only from the controller's own files, so registering it does not
    /// make it data a managed host said.
    pub trusted_result: bool,
    /// It may run ansible-core's own module code on the host (so the host's interpreter is
    /// worked out first).
    pub python: bool,
    /// It cannot run without the controller's ansible-core (its module always goes through
    /// the Python path): refused before the run when there is none.
    pub needs_ansible_core: bool,
    /// Before it runs on a host for the first time, ansible discovers the host's Python
    /// interpreter (everything that runs modules; not `raw` and `script`).
    pub discovers_interpreter: bool,
    /// It is told which link the host's is (`reboot` refuses a local one, `fetch` skips its
    /// stat under become).
    pub asks_link: bool,
    /// It runs once, on the first host of the round; the others move on without a result
    /// (`add_host`, `pause`).
    pub bypasses_host_loop: bool,
    /// It changes the run's inventory (`add_host`, `group_by`).
    pub changes_inventory: bool,
    pub in_plan: InPlan,
    pub facts: Facts,
}

/// What ansible's action plugin does with an argument it does not know, as it runs (tack
/// checks where it runs too: a task that never runs fails nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownArgs {
    /// It reads the arguments it knows and no others (`raw`, `fetch`).
    Ignored,
    /// Its `_VALID_ARGS`: `Invalid options for NAME: a,b`.
    InvalidOptions,
    /// Its argument spec: `Unsupported parameters for (NAME) module: a, b. Supported
    /// parameters include: ...`, the list as ansible's validator words it.
    Unsupported(&'static str),
}

/// What an action is unless its row says otherwise (modules start from it too).
pub(crate) const DEFAULT: Plugin = Plugin {
    name: "",
    run: |input| {
        crate::output::errored(tack_diag::Diagnostic::at("no action", input.task_origin.clone()))
    },
    bounded: false,
    touches_host: false,
    opens_links: false,
    takes_raw_params: false,
    raw_args: &[],
    expression_args: &[],
    known_args: None,
    unknown_args: UnknownArgs::Ignored,
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

/// An action plugin that asks the host step by step.
const ON_HOST: Plugin = Plugin { bounded: true, touches_host: true, ..DEFAULT };

/// Every controller action and action plugin tack runs.
pub(crate) static PLUGINS: &[Plugin] = &[
    Plugin {
        name: "debug",
        run: crate::debug::run,
        known_args: Some(&["msg", "var", "verbosity"]),
        unknown_args: UnknownArgs::Unsupported("msg, var, verbosity"),
        expression_args: &["var"],
        // ansible's debug registers an empty fact layer so that `debug: var=ansible_facts`
        // makes no facts of what it shows.
        facts: Facts::Variables,
        ..DEFAULT
    },
    Plugin { name: "set_fact", run: crate::set_fact::run, facts: Facts::Variables, ..DEFAULT },
    Plugin {
        name: "assert",
        run: crate::assert::run,
        raw_args: &["that"],
        known_args: Some(&["that", "fail_msg", "msg", "success_msg", "quiet"]),
        unknown_args: UnknownArgs::Unsupported("fail_msg, quiet, success_msg, that (msg)"),
        ..DEFAULT
    },
    Plugin {
        name: "fail",
        run: crate::fail::run,
        known_args: Some(&["msg"]),
        unknown_args: UnknownArgs::InvalidOptions,
        ..DEFAULT
    },
    // ansible runs these through controller-side action plugins (staging, rendering,
    // checksums); their host halves alone would not do what the task asks.
    Plugin { name: "copy", run: |input| crate::copy::copy(input, input.search), ..ON_HOST },
    Plugin { name: "template", run: |input| crate::copy::template(input, input.search), ..ON_HOST },
    Plugin {
        name: "include_vars",
        run: crate::include_vars::run,
        takes_raw_params: true,
        // Every option ansible's has is tack's; another fails the task when it runs, in
        // ansible's words (`include_vars::run`), not the play before it.
        known_args: None,
        trusted_result: true,
        facts: Facts::Variables,
        ..DEFAULT
    },
    Plugin {
        name: "raw",
        run: crate::raw::run,
        takes_raw_params: true,
        known_args: Some(&["executable"]),
        in_plan: InPlan::WouldRun,
        discovers_interpreter: false,
        ..ON_HOST
    },
    Plugin {
        name: "script",
        run: crate::script::run,
        takes_raw_params: true,
        known_args: Some(&["cmd", "creates", "removes", "chdir", "executable"]),
        unknown_args: UnknownArgs::Unsupported(
            "_raw_params, chdir, cmd, creates, executable, removes",
        ),
        in_plan: InPlan::WouldRun,
        discovers_interpreter: false,
        ..ON_HOST
    },
    Plugin {
        name: "fetch",
        run: crate::fetch::run,
        known_args: Some(&["src", "dest", "flat", "fail_on_missing", "validate_checksum"]),
        asks_link: true,
        ..ON_HOST
    },
    Plugin { name: "assemble", run: crate::assemble::run, ..ON_HOST },
    Plugin {
        name: "unarchive",
        run: crate::unarchive::run,
        python: true,
        needs_ansible_core: true,
        ..ON_HOST
    },
    Plugin { name: "service", run: crate::service::run, ..ON_HOST },
    Plugin { name: "package", run: crate::package::run, python: true, ..ON_HOST },
    Plugin { name: "dnf", run: crate::dnf::run, python: true, needs_ansible_core: true, ..ON_HOST },
    // reboot checks its own options when it runs, in ansible's words, and bounds its waits.
    Plugin { name: "reboot", run: crate::reboot::run, bounded: false, asks_link: true, ..ON_HOST },
    // setup checks gather_facts' arguments.
    Plugin {
        name: "gather_facts",
        run: crate::gather_facts::run,
        facts: Facts::Gathered,
        // Its fact modules other than `setup` run through ansible's module code.
        python: true,
        ..ON_HOST
    },
    Plugin {
        name: "add_host",
        run: crate::inventory::add_host,
        bypasses_host_loop: true,
        changes_inventory: true,
        ..DEFAULT
    },
    Plugin {
        name: "group_by",
        run: crate::inventory::group_by,
        known_args: Some(&["key", "parents"]),
        unknown_args: UnknownArgs::InvalidOptions,
        changes_inventory: true,
        ..DEFAULT
    },
    Plugin {
        name: "pause",
        run: crate::pause::pause,
        known_args: Some(&["echo", "minutes", "seconds", "prompt"]),
        unknown_args: UnknownArgs::Unsupported("echo, minutes, prompt, seconds"),
        bypasses_host_loop: true,
        in_plan: InPlan::WouldRun,
        ..DEFAULT
    },
    Plugin {
        name: "set_stats",
        run: crate::set_stats::run,
        known_args: Some(&["aggregate", "data", "per_host"]),
        unknown_args: UnknownArgs::InvalidOptions,
        ..DEFAULT
    },
    Plugin {
        name: "wait_for_connection",
        run: crate::pause::wait_for_connection,
        opens_links: true,
        known_args: Some(&["connect_timeout", "delay", "sleep", "timeout"]),
        unknown_args: UnknownArgs::InvalidOptions,
        ..DEFAULT
    },
    // ansible's action reads its three arguments and ignores any other.
    Plugin { name: "validate_argument_spec", run: crate::validate_argument_spec::run, ..DEFAULT },
];

/// The row of the action called `short`.
pub(crate) fn plugin(short: &str) -> Option<&'static Plugin> {
    PLUGINS.iter().find(|p| p.name == short)
}

/// Runs `plugin` with `input`, bounded by the task's `timeout` where it asks the host step by
/// step.
pub(crate) fn run(plugin: &Plugin, input: &ActionInput<'_>) -> ActionOutput {
    if let Some(failed) = unknown_args(plugin, input) {
        return failed;
    }
    if plugin.bounded { crate::bounded::bounded(input, plugin.run) } else { (plugin.run)(input) }
}

/// The failure ansible's plugin raises for arguments it does not know, first thing as it runs
/// (`None`: none, or it ignores them).
fn unknown_args(plugin: &Plugin, input: &ActionInput<'_>) -> Option<ActionOutput> {
    let known = plugin.known_args?;
    let mut unknown: Vec<&str> = input
        .args
        .iter()
        .filter_map(|(k, _)| k.as_str())
        .filter(|k| !["_raw_params", "_variable_params"].contains(k) && !known.contains(k))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    // ansible joins `_VALID_ARGS`' in set order, which changes between runs; tack sorts them,
    // as its validator sorts the others.
    unknown.sort_unstable();
    let msg = match plugin.unknown_args {
        UnknownArgs::Ignored => return None,
        UnknownArgs::InvalidOptions => {
            format!("Invalid options for {}: {}", input.action_name, unknown.join(","))
        }
        UnknownArgs::Unsupported(supported) => {
            // The validator names the plugin as ansible's loader loaded it: a builtin by its
            // Python module when the task named it in full.
            let module = if input.action_name.starts_with("ansible.builtin.") {
                format!("ansible_collections.ansible.builtin.plugins.action.{}", plugin.name)
            } else {
                plugin.name.to_string()
            };
            format!(
                "Unsupported parameters for ({module}) module: {}. Supported parameters \
                 include: {supported}.",
                unknown.join(", ")
            )
        }
    };
    Some(crate::shell_run::action_fail(input, &msg))
}
