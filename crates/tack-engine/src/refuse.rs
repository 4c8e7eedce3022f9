//! What this engine runs, checked before anything runs: every keyword, action and option a
//! playbook uses that tack does not honour yet is refused by name, with where it was
//! written, so nothing is accepted and ignored.
//!
//! The lists here grow as the engine does; removing a name from a refusal is part of
//! implementing it.

use tack_diag::{Diagnostic, Origin};
use tack_playbook::compile::{CompiledBlock, compile_play};
use tack_playbook::tables::Keyword;
use tack_playbook::tables::actions as action_names;
use tack_playbook::walk::{Sections, walk};
use tack_playbook::{Attrs, Block, Play, TaskEntry, TaskKind};
use tack_yaml::Value;

use tack_actions::Action;

/// Play keywords the engine honours.
const PLAY_KEYWORDS: &[Keyword] = &[
    // Read while loading: short action (and role) names are looked for in its collections.
    Keyword::Collections,
    Keyword::Name,
    Keyword::Hosts,
    Keyword::GatherFacts,
    Keyword::GatherSubset,
    Keyword::GatherTimeout,
    Keyword::FactPath,
    Keyword::ValidateArgspec,
    Keyword::Vars,
    Keyword::VarsFiles,
    Keyword::Tasks,
    Keyword::PreTasks,
    Keyword::PostTasks,
    Keyword::Tags,
    // Controller actions never use the connection; a play of them runs the same whatever
    // its connection is.
    Keyword::Connection,
    // Read with the host's ssh settings (`link_target`); the local connection has no use for
    // them, as ansible's has none.
    Keyword::RemoteUser,
    Keyword::Port,
    Keyword::CheckMode,
    Keyword::Diff,
    Keyword::Serial,
    Keyword::Order,
    Keyword::MaxFailPercentage,
    Keyword::AnyErrorsFatal,
    Keyword::RunOnce,
    Keyword::Throttle,
    Keyword::ForceHandlers,
    // Inherited by every task (`Reading::flag` reads the play among a task's ancestors).
    Keyword::IgnoreErrors,
    // Hosts of the local connection are never unreachable, so this changes nothing they
    // show; a connection that can fail must honour it where its unreachable results are
    // judged (`fatal::RoundResult`).
    Keyword::IgnoreUnreachable,
    // Checked by value in `check_play`: only `linear` runs.
    Keyword::Strategy,
    Keyword::NoLog,
    Keyword::Environment,
    Keyword::ModuleDefaults,
    Keyword::Become,
    Keyword::BecomeUser,
    Keyword::BecomeMethod,
    Keyword::BecomeFlags,
    Keyword::BecomeExe,
];

/// Task keywords the engine honours.
const TASK_KEYWORDS: &[Keyword] = &[
    // Read while loading: short action (and role) names are looked for in its collections.
    Keyword::Collections,
    Keyword::Name,
    Keyword::When,
    Keyword::Loop,
    Keyword::LoopControl,
    Keyword::Register,
    Keyword::IgnoreErrors,
    Keyword::Vars,
    Keyword::Tags,
    Keyword::ChangedWhen,
    Keyword::FailedWhen,
    Keyword::Action,
    Keyword::Args,
    Keyword::Connection,
    Keyword::RemoteUser,
    Keyword::Port,
    Keyword::Notify,
    Keyword::CheckMode,
    Keyword::Diff,
    Keyword::RunOnce,
    Keyword::AnyErrorsFatal,
    Keyword::Throttle,
    Keyword::IgnoreUnreachable,
    Keyword::Until,
    Keyword::Retries,
    Keyword::Delay,
    Keyword::Timeout,
    Keyword::DelegateFacts,
    Keyword::NoLog,
    Keyword::Environment,
    Keyword::ModuleDefaults,
    Keyword::Become,
    Keyword::BecomeUser,
    Keyword::BecomeMethod,
    Keyword::BecomeFlags,
    Keyword::BecomeExe,
    // Checked by action in `check_task`: only `command` and `shell` run as jobs.
    Keyword::Async,
    Keyword::Poll,
];

const BLOCK_KEYWORDS: &[Keyword] = &[
    // Read while loading: short action (and role) names are looked for in its collections.
    Keyword::Collections,
    Keyword::Name,
    Keyword::Connection,
    Keyword::RemoteUser,
    Keyword::Port,
    Keyword::NoLog,
    Keyword::Environment,
    Keyword::ModuleDefaults,
    Keyword::Become,
    Keyword::BecomeUser,
    Keyword::BecomeMethod,
    Keyword::BecomeFlags,
    Keyword::BecomeExe,
    Keyword::When,
    Keyword::Vars,
    Keyword::Tags,
    Keyword::IgnoreErrors,
    Keyword::CheckMode,
    Keyword::Diff,
    Keyword::RunOnce,
    Keyword::AnyErrorsFatal,
    Keyword::Throttle,
    Keyword::IgnoreUnreachable,
    Keyword::Notify,
    // Read by every task below (`TaskInContext::delegate_to`).
    Keyword::DelegateTo,
];

/// Keywords on a role where it is used (`roles: - {role: x, tags: ...}`).
const ROLE_KEYWORDS: &[Keyword] = &[
    Keyword::Role,
    Keyword::Name,
    Keyword::When,
    Keyword::Vars,
    Keyword::Tags,
    // Read by every task of the role (`TaskInContext::delegate_to`).
    Keyword::DelegateTo,
];

fn refuse(what: String, origin: Option<Origin>) -> Diagnostic {
    Diagnostic::at(format!("tack does not support {what} yet"), origin)
}

/// `debugger: never` asks for what tack does anyway (no debugger), as does a null one (the
/// default, which tack's refusal of `enable_task_debugger` keeps off); any other value is
/// refused.
fn debugger_never(attrs: &Attrs, keyword: Keyword) -> bool {
    keyword == Keyword::Debugger
        && attrs.get(Keyword::Debugger).is_some_and(|n| {
            matches!(&n.value, Value::Null) || n.value == Value::Str("never".into())
        })
}

/// `no_log: false` written on an include: what an include does anyway.
fn no_log_off(attrs: &Attrs, keyword: Keyword) -> bool {
    keyword == Keyword::NoLog
        && attrs.get(Keyword::NoLog).is_some_and(|n| matches!(n.value, Value::Bool(false)))
}

fn check_attrs(attrs: &Attrs, allowed: &[Keyword], kind: &str) -> Result<(), Diagnostic> {
    for (keyword, _) in attrs.iter() {
        if !allowed.contains(&keyword) && !debugger_never(attrs, keyword) {
            let origin = attrs.key(keyword).and_then(|k| k.origin.clone());
            return Err(refuse(format!("the {kind} keyword '{}'", keyword.as_str()), origin));
        }
    }
    Ok(())
}

fn check_block(block: &Block) -> Result<(), Diagnostic> {
    if !block.implicit {
        check_attrs(&block.attrs, BLOCK_KEYWORDS, "block")?;
    }
    for entry in block.block.iter().chain(&block.rescue).chain(&block.always) {
        if let TaskEntry::Block(inner) = entry {
            check_block(inner)?;
        }
    }
    Ok(())
}

/// The play's `strategy` as rendered, when tack has no such strategy.
pub(crate) fn unknown_strategy(
    play: &Play,
    rendered: Option<&tack_yaml::Node>,
    inherited: &[crate::ExternalStrategy],
) -> Option<Diagnostic> {
    let name = tack_yaml::pyrepr::str(&rendered?.value);
    if crate::strategy::Strategy::resolved(&name, inherited).is_some() {
        return None;
    }
    let origin = play.attrs.key(Keyword::Strategy).and_then(|k| k.origin.clone());
    Some(refuse(format!("the strategy '{name}'{}", why_not(&name, inherited, "")), origin))
}

/// Why the strategy plugin `name` cannot run, when the run asked (` (context; why)`).
fn why_not(name: &str, plugins: &[crate::ExternalStrategy], context: &str) -> String {
    let why = plugins.iter().find(|p| p.name == name).and_then(|p| p.runs_as.clone().err());
    match (context, why) {
        ("", None) => String::new(),
        ("", Some(why)) => format!(" ({why})"),
        (context, None) => format!(" ({context})"),
        (context, Some(why)) => format!(" ({context}; {why})"),
    }
}

/// The `strategy` setting, when a play would run with it and tack has no such strategy
/// (a collection's): refused before anything runs.
pub(crate) fn default_strategy(
    playbooks: &[tack_playbook::Playbook],
    default: Option<&str>,
    inherited: &[crate::ExternalStrategy],
) -> Result<(), Diagnostic> {
    let Some(name) =
        default.filter(|n| crate::strategy::Strategy::resolved(n, inherited).is_none())
    else {
        return Ok(());
    };
    let used = playbooks
        .iter()
        .flat_map(|p| &p.plays)
        .any(|play| play.attrs.get(Keyword::Strategy).is_none());
    if used {
        let why = why_not(name, inherited, "the strategy setting");
        return Err(refuse(format!("the strategy '{name}'{why}"), None));
    }
    Ok(())
}

/// Refuses what `play` uses that the engine cannot run.
pub(crate) fn check_play(play: &Play) -> Result<(), Diagnostic> {
    check_attrs(&play.attrs, PLAY_KEYWORDS, "play")?;
    // A templated strategy is checked once the play renders it (`unknown_strategy`), and so
    // is a plugin's (not in ansible.builtin): the run may have asked what it inherits.
    if let Some(node) = play.attrs.get(Keyword::Strategy)
        && !node.as_str().is_some_and(tack_template::is_possibly_template)
    {
        let name = tack_yaml::pyrepr::str(&node.value);
        // ansible-core's own strategy tack does not have (`debug`): nothing to ask.
        let core =
            tack_py::ansible::short_name(&name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if crate::strategy::Strategy::named(&name).is_none() && core == "debug" {
            let origin = play.attrs.key(Keyword::Strategy).and_then(|k| k.origin.clone());
            return Err(refuse(format!("the strategy '{name}'"), origin));
        }
    }
    // `gather_facts` is a bool keyword: strict `boolean()` once post-validated. Anything else
    // (a template among them) is taken to gather, which refuses more, never less.
    let gathers = !play
        .attrs
        .get(Keyword::GatherFacts)
        .is_some_and(|n| matches!(n.value.boolean_strict(), Ok(false)));
    if gathers && !tack_agent::modules::is_native("setup") {
        let origin = play.attrs.key(Keyword::GatherFacts).and_then(|k| k.origin.clone());
        return Err(refuse(
            "gathering facts (set 'gather_facts: false' on the play)".into(),
            origin.or_else(|| play.origin.clone()),
        ));
    }
    for role in &play.role_arena {
        check_attrs(&role.attrs, ROLE_KEYWORDS, "role")?;
    }
    for entry in &play.vars_prompt {
        for (key, _) in entry.iter() {
            let name = key.as_str().unwrap_or_default();
            if !crate::vars::prompt::OPTIONS.contains(&name) {
                let what = format!("the vars_prompt option '{name}'");
                return Err(refuse(what, key.origin.clone().or_else(|| play.origin.clone())));
            }
        }
    }
    let role_blocks =
        play.role_arena.iter().flat_map(|r| r.task_blocks.iter().chain(&r.handler_blocks));
    for block in play
        .pre_tasks
        .iter()
        .chain(&play.tasks)
        .chain(&play.post_tasks)
        .chain(&play.handlers)
        .chain(role_blocks)
    {
        check_block(block)?;
    }
    let compiled = compile_play(play);
    // Role handlers too: they run like any other.
    let handlers: Vec<CompiledBlock> = crate::handlers::handler_blocks(play);
    for ctx in walk(play, &handlers, Sections::All) {
        if matches!(ctx.task.kind, TaskKind::IncludeRole(_)) {
            let what = format!("'{}' as a handler", ctx.task.action);
            return Err(refuse(what, ctx.task.origin.clone()));
        }
    }
    let all = walk(play, &compiled, Sections::All).into_iter().chain(walk(
        play,
        &handlers,
        Sections::All,
    ));
    for ctx in all {
        if !ctx.task.implicit {
            check_task(ctx.task)?;
            crate::task::module_defaults::check(&ctx)?;
        }
    }
    Ok(())
}

/// Refuses what a task uses that the engine cannot run.
fn check_task(task: &tack_playbook::Task) -> Result<(), Diagnostic> {
    if matches!(task.kind, TaskKind::IncludeTasks) {
        check_apply(task)?;
        for (keyword, _) in task.attrs.iter() {
            // Only a handler's include may carry `listen` (the loader says so for others).
            if !INCLUDE_KEYWORDS.contains(&keyword)
                && keyword != Keyword::Listen
                && !debugger_never(&task.attrs, keyword)
                && !no_log_off(&task.attrs, keyword)
            {
                let origin = task.attrs.key(keyword).and_then(|k| k.origin.clone());
                return Err(refuse(
                    format!("the include_tasks keyword '{}'", keyword.as_str()),
                    origin,
                ));
            }
        }
        return Ok(());
    }
    if let TaskKind::IncludeRole(_) = &task.kind {
        return check_include_role(task);
    }
    if !matches!(task.kind, TaskKind::Action | TaskKind::Handler { .. }) {
        return Err(refuse(format!("the action '{}'", task.action), task.origin.clone()));
    }
    if action_names::is(&task.action, action_names::META) {
        let arg = task.args.get("_raw_params").map(|n| tack_yaml::pyrepr::str(&n.value));
        let known = [
            "noop",
            "flush_handlers",
            "end_host",
            "end_play",
            "end_batch",
            "clear_facts",
            "clear_host_errors",
            "end_role",
            "refresh_inventory",
            "reset_connection",
        ];
        if !arg.as_deref().is_some_and(|a| known.contains(&a)) {
            let what = format!("'meta: {}'", arg.unwrap_or_default());
            return Err(refuse(what, task.origin.clone()));
        }
        // ansible warns that these take no condition and runs them anyway.
        if matches!(arg.as_deref(), Some("refresh_inventory" | "reset_connection"))
            && let Some(key) = task.attrs.key(Keyword::When)
        {
            let what = format!("'when' on 'meta: {}'", arg.unwrap_or_default());
            return Err(refuse(what, key.origin.clone()));
        }
        return Ok(());
    }
    let Some(action) = Action::resolve_task(task) else {
        return Err(refuse(format!("the action '{}'", task.action), task.origin.clone()));
    };
    check_action(task, action)
}

/// Refuses what `task` asks of `action` that the engine cannot run: before the run for a
/// written name; where the task runs for a templated one (`action: '{{ m }}'`), once its
/// name rendered (`task` then carries the rendered name), so a task that never runs stops
/// nothing.
pub(crate) fn check_action(task: &tack_playbook::Task, action: Action) -> Result<(), Diagnostic> {
    if action.needs_ansible_core() && tack_actions::python_path::core().is_none() {
        let why = tack_actions::python_path::why_not();
        let msg = match &task.library {
            Some(module) => format!(
                "the module '{}' ({}) runs through ansible's module code: {why}",
                task.action,
                module.path.display()
            ),
            None => format!("tack has no native module '{}': {why}", task.action),
        };
        return Err(Diagnostic::at(msg, task.origin.clone()));
    }
    let handler = matches!(task.kind, TaskKind::Handler { .. });
    for (keyword, _) in task.attrs.iter() {
        if !(TASK_KEYWORDS.contains(&keyword)
            || handler && keyword == Keyword::Listen
            || debugger_never(&task.attrs, keyword))
        {
            let origin = task.attrs.key(keyword).and_then(|k| k.origin.clone());
            let kind = if handler { "handler" } else { "task" };
            return Err(refuse(format!("the {kind} keyword '{}'", keyword.as_str()), origin));
        }
    }
    if let Some(control) = task.attrs.get(Keyword::LoopControl).and_then(|n| n.as_map()) {
        for (key, _) in control.iter() {
            let name = key.as_str().unwrap_or_default();
            if !crate::task::loop_control::OPTIONS.contains(&name) {
                return Err(refuse(
                    format!("the loop_control option '{name}'"),
                    key.origin.clone(),
                ));
            }
        }
    }
    if action == Action::Templated {
        return Ok(());
    }
    if let Some(key) = task.attrs.key(Keyword::Async) {
        // Any native module runs as a job (`tack_agent::jobs` runs it as it runs any), and
        // so does a module run through ansible's code; the action plugins ansible runs as
        // jobs do not yet. Other action plugins fail the task where it runs, as ansible's do.
        let as_ansible_fails = matches!(action, Action::Plugin(_)) && !action.takes_async();
        // An action plugin written in Python decides for itself (ansible's
        // `_supports_async`), and its modules run as jobs.
        let runs_as_job = matches!(action, Action::Module(name) if name != "async_status")
            || matches!(action, Action::Python(_) | Action::Library(_) | Action::PythonAction(_));
        if !as_ansible_fails && !runs_as_job {
            return Err(refuse(
                format!("the task keyword 'async' with the action '{}'", task.action),
                key.origin.clone(),
            ));
        }
        if let Some(timeout) = task.attrs.key(Keyword::Timeout) {
            return Err(refuse(
                "the task keyword 'timeout' with 'async'".into(),
                timeout.origin.clone(),
            ));
        }
    }
    if let Some(key) = task.attrs.key(Keyword::Timeout) {
        let stoppable = match action {
            Action::Module(name) => tack_agent::modules::takes_timeout(name),
            // A module through the Python path cannot be stopped yet, nor can an action
            // plugin written in Python.
            Action::Python(_) | Action::PythonAction(_) => false,
            // The action plugins are bounded whole (`tack_actions`' `bounded.rs`, `reboot`'s waits);
            // controller actions finish at once.
            _ => true,
        };
        if !stoppable {
            return Err(refuse(
                format!("the task keyword 'timeout' with the action '{}'", task.action),
                key.origin.clone(),
            ));
        }
    }
    // A written encoding tack has no encoder for is refused here; a templated one when the
    // task runs, before its template renders.
    if action.is("template")
        && let Some((key, value)) =
            task.args.iter().find(|(k, _)| k.as_str() == Some("output_encoding"))
        && let Value::Str(name) = &value.value
        && !name.contains("{{")
        && let Err(tack_py::codecs::EncodeError::Unsupported { .. }) =
            tack_py::codecs::encode(name, "")
    {
        let what = format!("the template option 'output_encoding: {name}'");
        return Err(refuse(what, value.origin.clone().or_else(|| key.origin.clone())));
    }
    // An argument an action does not know fails (or is ignored) where it runs, as ansible's
    // plugin does (`tack_actions::catalogue`'s `UnknownArgs`).
    Ok(())
}

/// Keywords on an `include_tasks` the engine honours.
const INCLUDE_KEYWORDS: &[Keyword] = &[
    Keyword::Name,
    Keyword::When,
    Keyword::Loop,
    Keyword::LoopControl,
    Keyword::Vars,
    Keyword::Tags,
    Keyword::IgnoreErrors,
    Keyword::Register,
    Keyword::RunOnce,
];

/// Refuses what the tasks of a file loaded by `include_tasks` use that the engine cannot run.
pub(crate) fn check_included(block: &tack_playbook::Block) -> Result<(), Diagnostic> {
    check_block(block)?;
    fn tasks(entries: &[TaskEntry], out: &mut Vec<tack_playbook::Task>) {
        for entry in entries {
            match entry {
                TaskEntry::Task(t) => out.push(t.clone()),
                TaskEntry::Block(b) => {
                    tasks(&b.block, out);
                    tasks(&b.rescue, out);
                    tasks(&b.always, out);
                }
            }
        }
    }
    let mut all = Vec::new();
    tasks(&block.block, &mut all);
    for task in all.iter().filter(|t| !t.implicit) {
        check_task(task)?;
    }
    Ok(())
}

/// [`check_included`] for handlers an include brought in (a role's): an `include_role` as
/// such a handler is refused (ansible's own error when it runs); an `include_tasks` runs as
/// the play's do.
pub(crate) fn check_included_handlers(block: &tack_playbook::Block) -> Result<(), Diagnostic> {
    check_included(block)?;
    for entry in &block.block {
        let TaskEntry::Block(inner) = entry else { continue };
        check_included_handlers(inner)?;
    }
    for entry in &block.block {
        if let TaskEntry::Task(task) = entry
            && matches!(task.kind, TaskKind::IncludeRole(_))
        {
            let what = format!("'{}' as a handler", task.action);
            return Err(refuse(what, task.origin.clone()));
        }
    }
    Ok(())
}

/// Keywords on an `include_role` the engine honours (its other keywords would be inherited
/// by the role's tasks, which the engine does not do yet).
const INCLUDE_ROLE_KEYWORDS: &[Keyword] = &[
    Keyword::Name,
    Keyword::When,
    Keyword::Loop,
    Keyword::LoopControl,
    Keyword::Vars,
    Keyword::Tags,
    Keyword::IgnoreErrors,
    Keyword::Register,
    Keyword::RunOnce,
];

/// `include_role`'s options and keywords.
fn check_include_role(task: &tack_playbook::Task) -> Result<(), Diagnostic> {
    check_apply(task)?;
    for (keyword, _) in task.attrs.iter() {
        if !INCLUDE_ROLE_KEYWORDS.contains(&keyword) {
            let origin = task.attrs.key(keyword).and_then(|k| k.origin.clone());
            return Err(refuse(format!("the include_role keyword '{}'", keyword.as_str()), origin));
        }
    }
    if let Some(control) = task.attrs.get(Keyword::LoopControl).and_then(|n| n.as_map()) {
        for (key, _) in control.iter() {
            let name = key.as_str().unwrap_or_default();
            if !crate::task::loop_control::OPTIONS.contains(&name) {
                return Err(refuse(
                    format!("the loop_control option '{name}' on include_role"),
                    key.origin.clone(),
                ));
            }
        }
    }
    if task.delegate_to.is_some() {
        return Err(refuse("'delegate_to'".into(), task.origin.clone()));
    }
    Ok(())
}

/// An include's `apply`: a block's keywords, those the engine honours on blocks.
fn check_apply(task: &tack_playbook::Task) -> Result<(), Diagnostic> {
    let Some(apply) = task.args.get("apply").and_then(|a| a.as_map()) else { return Ok(()) };
    for (key, _) in apply.iter() {
        let name = key.as_str().unwrap_or_default();
        // The included tasks search the include's own collection list, not one `apply` sets.
        let honoured = name != "collections" && BLOCK_KEYWORDS.iter().any(|k| k.as_str() == name);
        if !honoured {
            let what = format!("the {} apply keyword '{name}'", task.action);
            return Err(refuse(what, key.origin.clone().or_else(|| task.origin.clone())));
        }
    }
    Ok(())
}
