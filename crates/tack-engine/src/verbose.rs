//! What `-vvv` and `-vvvv` need from the engine beyond the callback: the address a task's
//! connection lines name, and what a run or listing at those levels refuses because ansible
//! prints lines there that tack does not reproduce yet: the `vars_files` whose notes
//! `crate::vars::read_notes` cannot place (each refused by name before anything runs).
//!
//! This module never prints; the lines themselves are `tack_links::trace`'s and the callback's.

use tack_diag::{Diagnostic, Origin};
use tack_playbook::Playbook;
use tack_playbook::compile::compile_play;
use tack_playbook::tables::Keyword;
use tack_playbook::tables::actions as action_names;
use tack_playbook::walk::{Sections, walk};
use tack_template::Scope;

use crate::task::delegate::Delegation;

/// The play context's `remote_addr` for a task's run on `host` in `scope`: the delegated
/// host's `ansible_host` (or name) when the run is delegated, else the host's `ansible_host`,
/// else `127.0.0.1` for the implicit localhost, else the host's name.
pub(crate) fn address(
    delegation: &Delegation<'_>,
    live: &tack_inventory::live::LiveInventory,
    host: &str,
    scope: &Scope,
) -> String {
    // A host outside the inventory (the implicit `localhost` of `local_action`) has no
    // delegated variables: ansible's new host has no `ansible_host`, so its name is shown.
    if scope.get("ansible_delegated_vars").is_none()
        && let Ok(Some(name)) = delegation.delegated(host, scope)
    {
        return name;
    }
    address_in(delegation.task.templar, live, host, scope)
}

/// [`address`] for a run that is not delegated (the fact-gathering task's, in the host's
/// play scope).
pub(crate) fn address_in(
    templar: &tack_template::Templar,
    live: &tack_inventory::live::LiveInventory,
    host: &str,
    scope: &Scope,
) -> String {
    let render = |node: &tack_yaml::Node| {
        templar
            .render(node, scope)
            .map(|r| tack_yaml::pyrepr::str(&r.value.value))
            .unwrap_or_else(|_| tack_yaml::pyrepr::str(&node.value))
    };
    if let Some(binding) = scope.get("ansible_delegated_vars")
        && let Some(map) = binding.node().as_map()
        && let Some((name, vars)) = map.iter().next()
    {
        return match vars.as_map().and_then(|v| v.get("ansible_host")) {
            Some(node) => render(node),
            None => tack_yaml::pyrepr::str(&name.value),
        };
    }
    if let Some(binding) = scope.get("ansible_host") {
        return render(&binding.node().clone());
    }
    let inventory = live.current();
    let data = inventory.data();
    match data.get_host(host) {
        Some(id) if data.host(id).implicit => "127.0.0.1".into(),
        _ => host.into(),
    }
}

fn refuse(what: &str, level: u8, origin: Option<Origin>) -> Diagnostic {
    let flag = "v".repeat(usize::from(level));
    Diagnostic::at(
        format!(
            "tack does not support -{flag} with {what} yet (ansible prints lines there that tack \
             does not reproduce)"
        ),
        origin,
    )
}

/// The `-v` count up to which the run makes its verbose lines: its own, or `log_verbosity`'s
/// when the display log keeps more (the callback logs the lines it does not show).
pub(crate) fn noted(verbosity: i64) -> i64 {
    let shown = u8::try_from(verbosity.clamp(0, 255)).unwrap_or(u8::MAX);
    i64::from(tack_diag::display_log::noted_verbosity(shown)).max(verbosity)
}

/// Refuses, before anything runs, what a run at `-v` count `verbosity` (3 or more) would show
/// differently from ansible: the `vars_files` whose notes of each read `crate::vars::read_notes`
/// cannot place.
pub fn check(
    playbooks: &[Playbook],
    verbosity: u8,
    default_strategy: Option<&str>,
) -> Result<(), Diagnostic> {
    if verbosity < 3 {
        return Ok(());
    }
    for playbook in playbooks {
        for play in &playbook.plays {
            check_routed(play, verbosity)?;
        }
        for play in playbook.plays.iter().filter(|p| !p.vars_files.is_empty()) {
            check_vars_files(play, Some(default_strategy.unwrap_or("linear")))?;
            check_imports(playbook, play)?;
            let compiled = compile_play(play);
            let handlers = crate::handlers::handler_blocks(play);
            let all = walk(play, &compiled, Sections::All).into_iter().chain(walk(
                play,
                &handlers,
                Sections::All,
            ));
            for ctx in all {
                check_vars_files_task(&ctx)?;
            }
        }
    }
    Ok(())
}

/// What a listing or `--syntax-check` at `-v` count `verbosity` (3 or more) refuses: the
/// `vars_files` whose notes `crate::vars::read_notes` cannot place (the load-time gatherings of
/// imports, includes and role dependencies; names rendered per host).
pub fn check_listing(playbooks: &[Playbook], verbosity: u8) -> Result<(), Diagnostic> {
    if verbosity < 3 {
        return Ok(());
    }
    for playbook in playbooks {
        for play in playbook.plays.iter().filter(|p| !p.vars_files.is_empty()) {
            check_vars_files(play, None)?;
            check_imports(playbook, play)?;
            let compiled = compile_play(play);
            let handlers = crate::handlers::handler_blocks(play);
            let all = walk(play, &compiled, Sections::All).into_iter().chain(walk(
                play,
                &handlers,
                Sections::All,
            ));
            for ctx in all {
                check_vars_files_includes(ctx.task)?;
            }
        }
    }
    Ok(())
}

/// A task whose module ansible-core routes to a collection (`timezone` →
/// `community.general.timezone`): at `-vvv` ansible prints its `redirecting (type: modules)`
/// lines while loading and again as the task runs; at `-vvvv` it says where it loads each
/// collection from. tack does not reproduce either yet.
fn check_routed(play: &tack_playbook::Play, verbosity: u8) -> Result<(), Diagnostic> {
    // At `-vvvv` ansible also says where it loads each collection from, as it loads it.
    if verbosity >= 4
        && let Some(role) = play.role_arena.iter().find(|r| r.collection.is_some())
    {
        let what = format!("a role from a collection ('{}')", role.name);
        return Err(refuse(&what, 4, role.origin.clone()));
    }
    use tack_playbook::tables::{Routing, routing};
    let compiled = compile_play(play);
    let handlers = crate::handlers::handler_blocks(play);
    let all = walk(play, &compiled, Sections::All).into_iter().chain(walk(
        play,
        &handlers,
        Sections::All,
    ));
    for ctx in all {
        let short = tack_py::ansible::short_name(
            &ctx.task.action,
            tack_py::ansible::CoreCollections::BuiltinOrLegacy,
        );
        let routed = ["modules", "action"]
            .iter()
            .any(|kind| matches!(routing(kind, short), Some(Routing::Collection(_))));
        let from_collection = ctx.task.library.as_ref().is_some_and(|m| m.collection.is_some());
        if verbosity >= 4 && from_collection {
            let what = format!("a module from a collection ('{}')", ctx.task.action);
            return Err(refuse(&what, 4, ctx.task.origin.clone()));
        }
        if routed && from_collection {
            let what = format!(
                "a module name ansible-core routes to a collection ('{}')",
                ctx.task.action
            );
            return Err(refuse(&what, 3, ctx.task.origin.clone()));
        }
    }
    Ok(())
}

/// What `crate::vars::read_notes` cannot place yet in a play with `vars_files`: names ansible
/// renders per host, `import_role` (which gathers as it loads), and strategies other than
/// `linear`.
/// `run_default` is the `strategy` setting of a run (`None` for a listing, which runs none).
fn check_vars_files(
    play: &tack_playbook::Play,
    run_default: Option<&str>,
) -> Result<(), Diagnostic> {
    let templated = |n: &tack_yaml::Node| {
        let text = tack_yaml::pyrepr::str(&n.value);
        text.contains("{{") || text.contains("{%")
    };
    if let Some(item) = play.vars_files.iter().find(|n| templated(n)) {
        let origin = item.origin.clone().or_else(|| play.origin.clone());
        return Err(refuse("vars_files named by a template", 3, origin));
    }
    // Roles loaded besides `roles:` and their dependencies come from `import_role`.
    let mut reached = vec![false; play.role_arena.len()];
    let mut stack: Vec<tack_playbook::RoleId> = play.roles.clone();
    while let Some(id) = stack.pop() {
        if let Some(seen) = reached.get_mut(id.0)
            && !*seen
        {
            *seen = true;
            stack.extend(play.role(id).dependencies.iter().copied());
        }
    }
    if reached.contains(&false) {
        let origin = play.origin.clone();
        return Err(refuse("vars_files and import_role", 3, origin));
    }
    if let Some(default) = run_default {
        let node = play.attrs.get(Keyword::Strategy);
        let name = node.map_or_else(|| default.to_string(), |n| tack_yaml::pyrepr::str(&n.value));
        let short =
            tack_py::ansible::short_name(&name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if short != "linear" {
            let origin = node.and_then(|n| n.origin.clone()).or_else(|| play.origin.clone());
            return Err(refuse("vars_files and a strategy other than linear", 3, origin));
        }
    }
    Ok(())
}

/// Each import gathers the play's variables while the playbook loads; `crate::vars::read_notes`
/// places those gatherings after the roles', which is where ansible has them unless a role
/// before the last imports files of its own.
fn check_imports(playbook: &Playbook, play: &tack_playbook::Play) -> Result<(), Diagnostic> {
    let index = playbook.plays.iter().position(|p| std::ptr::eq(p, play)).unwrap_or(0);
    let from =
        if index == 0 { 0 } else { playbook.import_marks.get(index - 1).copied().unwrap_or(0) };
    let to = playbook.import_marks.get(index).copied().unwrap_or(usize::MAX);
    let counted = playbook.import_marks.len() == playbook.plays.len()
        && playbook.import_marks.last().copied() == Some(playbook.imported.len());
    let includes = crate::vars::read_notes::include_gatherings(play) > 0;
    if to > from && includes {
        let what = "vars_files and both import_tasks and include_tasks in a play";
        return Err(refuse(what, 3, play.origin.clone()));
    }
    if !counted || (to > from && crate::vars::read_notes::role_gatherings(play) > 1) {
        let what = "vars_files and import_tasks in a play of several roles or role dependencies";
        return Err(refuse(what, 3, play.origin.clone()));
    }
    Ok(())
}

/// The tasks whose variables ansible gathers in its worker or per include (delegation,
/// dynamic includes), where `crate::vars::read_notes` cannot place the notes yet.
fn check_vars_files_task(ctx: &tack_playbook::walk::TaskInContext<'_>) -> Result<(), Diagnostic> {
    let task = ctx.task;
    // A block's `delegate_to` is not one `crate::vars::read_notes` follows yet.
    if task.delegate_to.is_none()
        && let Some(node) = ctx.inherited(Keyword::DelegateTo)
    {
        let origin = node.origin.clone().or_else(|| task.origin.clone());
        return Err(refuse("vars_files and a block's 'delegate_to'", 3, origin));
    }
    check_vars_files_includes(task)
}

/// `include_role` gathers the play's variables as its role loads (not followed yet).
fn check_vars_files_includes(task: &tack_playbook::Task) -> Result<(), Diagnostic> {
    if action_names::is(&task.action, action_names::INCLUDE_ROLE) {
        return Err(refuse("vars_files and include_role", 3, task.origin.clone()));
    }
    Ok(())
}
