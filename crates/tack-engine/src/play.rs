//! One play under the `linear` strategy: every targeted host runs a task before any host
//! runs the next one; a host that fails (and is not ignoring errors) runs nothing more in
//! the play; when no host is left the play ends with ansible's "NO MORE HOSTS LEFT".

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_playbook::compile::compile_play;
use tack_playbook::listing::{listed_name, task_tags};
use tack_playbook::play_vars::{play_basedir, play_vars};
use tack_playbook::post_validate::post_validate_play;
use tack_playbook::tables::actions as action_names;
use tack_playbook::walk::{Sections, walk};

use crate::actions::Action;
use crate::callback::{Callback, Stats, TaskView};
use crate::task::TaskRun;
use crate::vars::PlayScope;
use crate::{HostState, RunContext};

/// How a play ended for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayEnd {
    Continue,
    /// Every host the play started with failed: ansible stops the playbook.
    AllFailed,
}

/// Runs `play`, updating each host's state and the recap.
pub fn run_play(
    run: &RunContext<'_>,
    play: &Play,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut std::collections::BTreeMap<String, HostState>,
) -> Result<PlayEnd, Diagnostic> {
    let templar = run.templar;
    let vars = play_vars(play, run.extra_vars, run.loader, templar)?;
    let keywords = post_validate_play(play, &vars, templar)?;
    // `Play.get_name`: an empty name shows the hosts pattern.
    let name = if keywords.name.trim().is_empty() {
        keywords.hosts.join(",")
    } else {
        keywords.name.clone()
    };
    callback.play_start(&name);
    let data = run.inventory.data();
    let hosts: Vec<String> = run
        .inventory
        .select_terms(&keywords.hosts)?
        .into_iter()
        .map(|h| data.host(h).name.clone())
        .filter(|h| !states.get(h).is_some_and(|s| s.failed))
        .collect();
    if hosts.is_empty() {
        callback.no_hosts_matched();
        return Ok(PlayEnd::Continue);
    }
    let scope = PlayScope::new(
        run.inventory,
        run.loader,
        &vars,
        run.extra_vars,
        &play_basedir(play),
        &run.facts,
    )?;
    let mut active: Vec<String> = hosts.clone();
    scope.set_play_hosts(&hosts, &active);

    let compiled = compile_play(play);
    let tasks = walk(play, &compiled, Sections::BlockOnly);
    for ctx in &tasks {
        let task = ctx.task;
        if action_names::is(&task.action, action_names::META) {
            // Implicit flushes and role ends have nothing to do without handlers; explicit
            // meta tasks were checked before the run.
            continue;
        }
        let tags = task_tags(ctx, &vars, templar)?;
        if !run.tags.should_run(&tags) {
            continue;
        }
        if active.is_empty() {
            break;
        }
        let Some(action) = Action::find(&task.action) else {
            return Err(Diagnostic::at(
                format!("tack cannot run the action '{}' yet", task.action),
                task.origin.clone(),
            ));
        };
        let view = TaskView {
            name: listed_name(play, task).unwrap_or_else(|| task.action.clone()),
            action: task.action.clone(),
            looped: task.loop_items.is_some(),
            origin: task.origin.clone(),
        };
        callback.task_start(&view);
        let runner = TaskRun { ctx, action, templar, vars: &scope, verbosity: run.facts.verbosity };
        let mut failed_now = Vec::new();
        for host in &active {
            let outcome = runner.run(host);
            for item in &outcome.items {
                callback.item_result(&view, item);
            }
            callback.host_result(&view, &outcome.result);
            stats.count(&outcome.result);
            if outcome.result.flag("failed") && !outcome.result.ignored {
                failed_now.push(host.clone());
            }
        }
        if !failed_now.is_empty() {
            for host in &failed_now {
                states.entry(host.clone()).or_default().failed = true;
            }
            active.retain(|h| !failed_now.contains(h));
            scope.set_play_hosts(&hosts, &active);
        }
    }
    Ok(if active.is_empty() { PlayEnd::AllFailed } else { PlayEnd::Continue })
}
