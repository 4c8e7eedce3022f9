//! The `linear` strategy for one batch's tasks: every host has a position in the play's flat
//! task list (see `iterator`); each round runs the first task, from the lockstep cursor on,
//! that some host is at, on every host at it (a `meta` task or an include in its own way),
//! then applies `any_errors_fatal`, `run_once` and `max_fail_percentage` (`fatal`). A host
//! that fails outside any rescue leaves the play; `flush_handlers` runs the notified handlers
//! in their order.
//!
//! Moves hosts only through the [`Walk`]; the batch's start and end are `crate::play`'s.

use std::collections::{BTreeMap, BTreeSet};

use tack_diag::Diagnostic;
use tack_yaml::Node;

use tack_actions::Action;
use tack_report::callback::{Callback, Stats};

use crate::context::HostState;
use crate::handlers::Handlers;
use crate::include::splice::Splice;
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;
use crate::play::fanout::RunKind;
use crate::play::walk::Walk;
use crate::task::reading::is_meta;

/// Runs the batch's rounds under `linear`; `true` when `max_fail_percentage` stopped it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_rounds<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    walk: &mut Walk<'r>,
    handlers: &mut Handlers<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut BTreeMap<String, HostState>,
) -> Result<bool, Diagnostic> {
    let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut stop = false;
    loop {
        // Hosts found unreachable (by a task, a handler or gathering) run nothing more.
        for host in &state.lost {
            walk.finish(host);
        }
        let Some(mut round) = walk.next_round() else { break };
        let (seg, next) = (round.seg, round.next);
        let ctx = walk.segments[seg].tasks[next].clone();
        let ctx = &ctx;
        // A role that already ran on a host under the same identity is passed over there.
        let done: Vec<String> =
            round.hosts.iter().filter(|h| env.role_done(ctx, h, &completed)).cloned().collect();
        if !done.is_empty() {
            for host in &done {
                walk.advance(host, seg, next, false);
            }
            round.hosts.retain(|h| !done.contains(h));
            if round.hosts.is_empty() {
                continue;
            }
        }
        if is_meta(ctx) {
            let mut meta = crate::meta::MetaRound {
                walk: &mut *walk,
                handlers: &mut *handlers,
                completed: &mut completed,
                states,
                free_banner: None,
            };
            crate::meta::run_meta(env, state, ctx, &round, &mut meta, callback, stats)?;
            if state.stopped {
                stop = true;
                break;
            }
            env.update_play_hosts(state, &walk.cursors);
            continue;
        }
        if matches!(
            ctx.task.kind,
            tack_playbook::TaskKind::IncludeTasks | tack_playbook::TaskKind::IncludeRole(_)
        ) {
            let params = walk.segments[seg].params.clone();
            let mut splice = Splice { walk: &mut *walk, handlers: &mut *handlers };
            let failed = crate::include::splice::splice_include(
                env,
                state,
                ctx,
                &round,
                &mut splice,
                callback,
                stats,
            )?;
            // A failed include is a failed task to `any_errors_fatal` and
            // `max_fail_percentage`, as ansible's strategy counts it.
            if !failed.is_empty() {
                let controls = env.task_controls(ctx, &round.hosts, params)?;
                let results: Vec<crate::play::fatal::RoundResult> = failed
                    .iter()
                    .map(|host| crate::play::fatal::RoundResult {
                        host: host.clone(),
                        failed: true,
                        unreachable: false,
                        ignore_errors: controls.ignore,
                    })
                    .collect();
                if crate::play::fatal::after_round(
                    env, state, &controls, &results, &round, walk, callback,
                ) {
                    stop = true;
                    break;
                }
            }
            env.update_play_hosts(state, &walk.cursors);
            continue;
        }
        let params = walk.segments[seg].params.clone();
        let controls = env.task_controls(ctx, &round.hosts, params.clone())?;
        let mut results: Vec<crate::play::fatal::RoundResult> = Vec::new();
        let action = Action::of(ctx.task);
        // `add_host` and `pause` bypass the host loop: they run once, on the first host,
        // and the others move on without a result.
        let bypass = action.is_some_and(|a| a.traits().bypasses_host_loop);
        let run_hosts: Vec<String> = if bypass {
            round.hosts.iter().take(1).cloned().collect()
        } else {
            round.hosts.clone()
        };
        crate::play::fanout::run_task(
            env,
            &mut state.lost,
            ctx,
            &run_hosts,
            params.clone(),
            callback,
            if controls.run_once { RunKind::Once } else { RunKind::Task },
            &mut |host, outcome, cb| {
                let result = &outcome.result;
                results.push(crate::play::fatal::RoundResult::of(host, result, controls.ignore));
                if result.flag("failed") && !result.ignored {
                    let rescuing = walk.rescuing(host, seg, next);
                    stats.count(result, rescuing);
                    if rescuing {
                        env.remember_failure(host, ctx, outcome);
                    }
                    walk.advance(host, seg, next, true);
                } else {
                    if result.notifies() {
                        crate::handlers::flush::notify_from(
                            env,
                            handlers,
                            ctx,
                            host,
                            outcome,
                            params.clone(),
                            cb,
                        )?;
                    }
                    if let Some(custom) = result.data.get("ansible_stats").and_then(Node::as_map)
                        && action.is_some_and(|a| a.is("set_stats"))
                    {
                        stats.apply_custom(host, custom);
                    }
                    stats.count(result, false);
                    walk.advance(host, seg, next, false);
                }
                Ok(())
            },
        )?;
        if bypass {
            for host in round.hosts.iter().filter(|h| !run_hosts.contains(h)) {
                walk.advance(host, seg, next, false);
            }
        }
        if action.is_some_and(|a| a.traits().changes_inventory) {
            env.scope.set_inventory(&env.live.current(), env.run.loader)?;
        }
        if controls.run_once {
            // The other hosts of the round are done with the task too.
            for host in round.hosts.iter().skip(1) {
                if walk.is_running(host) {
                    walk.advance(host, seg, next, false);
                }
            }
        }
        if crate::play::fatal::after_round(env, state, &controls, &results, &round, walk, callback)
        {
            stop = true;
            break;
        }
        env.update_play_hosts(state, &walk.cursors);
    }

    Ok(stop)
}
