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

use crate::actions::Action;

/// Play keywords the engine honours.
const PLAY_KEYWORDS: &[Keyword] = &[
    Keyword::Name,
    Keyword::Hosts,
    Keyword::GatherFacts,
    Keyword::GatherSubset,
    Keyword::GatherTimeout,
    Keyword::FactPath,
    Keyword::Vars,
    Keyword::VarsFiles,
    Keyword::Tasks,
    Keyword::PreTasks,
    Keyword::PostTasks,
    Keyword::Tags,
    // Controller actions never use the connection; a play of them runs the same whatever
    // its connection is.
    Keyword::Connection,
    Keyword::CheckMode,
];

/// Task keywords the engine honours.
const TASK_KEYWORDS: &[Keyword] = &[
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
    Keyword::Notify,
    Keyword::CheckMode,
];

const BLOCK_KEYWORDS: &[Keyword] = &[
    Keyword::Name,
    Keyword::When,
    Keyword::Vars,
    Keyword::Tags,
    Keyword::IgnoreErrors,
    Keyword::CheckMode,
];

/// Keywords on a role where it is used (`roles: - {role: x, tags: ...}`).
const ROLE_KEYWORDS: &[Keyword] =
    &[Keyword::Role, Keyword::Name, Keyword::When, Keyword::Vars, Keyword::Tags];

const LOOP_CONTROL: &[&str] = &["loop_var", "index_var", "label"];

fn refuse(what: String, origin: Option<Origin>) -> Diagnostic {
    Diagnostic::at(format!("tack does not support {what} yet"), origin)
}

fn check_attrs(attrs: &Attrs, allowed: &[Keyword], kind: &str) -> Result<(), Diagnostic> {
    for (keyword, _) in attrs.iter() {
        if !allowed.contains(&keyword) {
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

/// Refuses what `play` uses that the engine cannot run.
pub fn check_play(play: &Play) -> Result<(), Diagnostic> {
    check_attrs(&play.attrs, PLAY_KEYWORDS, "play")?;
    match play.attrs.get(Keyword::GatherFacts).map(|n| &n.value) {
        Some(Value::Bool(false)) => {}
        Some(Value::Str(s)) if matches!(s.as_str(), "no" | "false" | "False" | "off") => {}
        _ if tack_agent::modules::is_native("setup") => {}
        _ => {
            let origin = play.attrs.key(Keyword::GatherFacts).and_then(|k| k.origin.clone());
            return Err(refuse(
                "gathering facts (set 'gather_facts: false' on the play)".into(),
                origin.or_else(|| play.origin.clone()),
            ));
        }
    }
    for role in &play.role_arena {
        check_attrs(&role.attrs, ROLE_KEYWORDS, "role")?;
    }
    if !play.vars_prompt.is_empty() {
        return Err(refuse("'vars_prompt'".into(), play.origin.clone()));
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
    let handlers: Vec<CompiledBlock> = crate::play::handler_blocks(play);
    let all = walk(play, &compiled, Sections::All).into_iter().chain(walk(
        play,
        &handlers,
        Sections::All,
    ));
    for ctx in all {
        if !ctx.task.implicit {
            check_task(ctx.task)?;
        }
    }
    Ok(())
}

/// Refuses what a task uses that the engine cannot run.
fn check_task(task: &tack_playbook::Task) -> Result<(), Diagnostic> {
    if matches!(task.kind, TaskKind::IncludeTasks) {
        if let Some(key) = task.args.get("apply") {
            return Err(refuse("the include_tasks option 'apply'".into(), key.origin.clone()));
        }
        for (keyword, _) in task.attrs.iter() {
            if !INCLUDE_KEYWORDS.contains(&keyword) {
                let origin = task.attrs.key(keyword).and_then(|k| k.origin.clone());
                return Err(refuse(
                    format!("the include_tasks keyword '{}'", keyword.as_str()),
                    origin,
                ));
            }
        }
        return Ok(());
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
        ];
        if !arg.as_deref().is_some_and(|a| known.contains(&a)) {
            let what = format!("'meta: {}'", arg.unwrap_or_default());
            return Err(refuse(what, task.origin.clone()));
        }
        return Ok(());
    }
    let Some(action) = Action::resolve(&task.action) else {
        return Err(refuse(format!("the action '{}'", task.action), task.origin.clone()));
    };
    let handler = matches!(task.kind, TaskKind::Handler { .. });
    for (keyword, _) in task.attrs.iter() {
        if !(TASK_KEYWORDS.contains(&keyword) || handler && keyword == Keyword::Listen) {
            let origin = task.attrs.key(keyword).and_then(|k| k.origin.clone());
            let kind = if handler { "handler" } else { "task" };
            return Err(refuse(format!("the {kind} keyword '{}'", keyword.as_str()), origin));
        }
    }
    if task.delegate_to.is_some() {
        return Err(refuse("'delegate_to'".into(), task.origin.clone()));
    }
    if let Some(control) = task.attrs.get(Keyword::LoopControl).and_then(|n| n.as_map()) {
        for (key, _) in control.iter() {
            let name = key.as_str().unwrap_or_default();
            if !LOOP_CONTROL.contains(&name) {
                return Err(refuse(
                    format!("the loop_control option '{name}'"),
                    key.origin.clone(),
                ));
            }
        }
    }
    let known = action.known_args();
    if !known.is_empty() {
        for (key, _) in task.args.iter() {
            let name = key.as_str().unwrap_or_default();
            // Free-form text fails at run time, in ansible's words, as it does there.
            if name != "_raw_params" && !known.contains(&name) {
                let what = format!("the argument '{name}' of '{}'", task.action);
                return Err(refuse(what, key.origin.clone().or_else(|| task.origin.clone())));
            }
        }
    }
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
];

/// Refuses what the tasks of a file loaded by `include_tasks` use that the engine cannot run.
pub fn check_included(block: &tack_playbook::Block) -> Result<(), Diagnostic> {
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
    for task in &all {
        check_task(task)?;
    }
    Ok(())
}
