//! The `free` and `host_pinned` strategies for one batch. Each host goes through its tasks
//! without waiting for the others: `free` gives every host one task per pass over the
//! batch (in batch order), `host_pinned` runs one host to its end before the next (what
//! ansible does with one fork; with more forks its order depends on timing). A task's
//! banner is shown when a result of another task than the last shown comes, as ansible's
//! callback does for these strategies; hosts of one pass that reach the same
//! `flush_handlers` run their handlers together. `run_once`, `any_errors_fatal` and
//! `max_fail_percentage` are not honoured by these strategies in ansible either: each gives
//! ansible's warning.
//!
//! An include (a handler's too) is expanded per host (`free_include`); a meta task runs for
//! each host that reaches it, its banner shown only with a skipped result.

use std::collections::{BTreeMap, BTreeSet};

use tack_diag::Diagnostic;

use tack_report::callback::{Callback, Stats};

use crate::context::HostState;
use crate::handlers::Handlers;
use crate::include::splice::Splice;
use crate::play::batch::{BatchEnd, BatchState};
use crate::play::env::PlayEnv;
use crate::play::fanout::RunKind;
use crate::play::walk::{Round, Walk};
use crate::task::reading::{is_meta, meta_arg};

/// One batch under `free` (`pinned` false) or `host_pinned`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_batch_free<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    pinned: bool,
    gather: Option<&tack_playbook::post_validate::PlayKeywords>,
    walk: &mut Walk<'r>,
    handlers: &mut Handlers<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut BTreeMap<String, HostState>,
) -> Result<BatchEnd, Diagnostic> {
    if env.max_fail.is_some() {
        tack_diag::warn(&Diagnostic::new(
            "Using max_fail_percentage with the free strategy is not supported, as tasks \
                 are executed independently on each host",
        ));
    }
    if !pinned {
        return crate::strategy::free_passes::run_free_passes(
            env, state, gather, walk, handlers, callback, stats, states,
        );
    }
    let mut to_gather: BTreeSet<String> = if gather.is_some() {
        let hosts = walk.cursors.iter().map(|(h, _)| h.clone());
        hosts.filter(|h| crate::play::gather::gathers_on(env, h)).collect()
    } else {
        BTreeSet::new()
    };
    let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut last: Option<(usize, usize)> = None;
    let hosts = env.hosts.clone();
    let mut pinned_at = 0;
    loop {
        // The hosts of this pass: all of them (free), or the first not done (pinned).
        let pass: Vec<String> = if pinned {
            while pinned_at < hosts.len()
                && walk.at(&hosts[pinned_at]).is_none()
                && !to_gather.contains(&hosts[pinned_at])
            {
                pinned_at += 1;
            }
            // A pinned host gathers its facts as its first step.
            if let Some(keywords) = gather
                && let Some(host) = hosts.get(pinned_at)
                && to_gather.remove(host)
            {
                let gathered = crate::play::gather::gather_one(env, keywords, host)?;
                callback
                    .task_start(&crate::play::gather::gather_view(env.play(), env.check_flag()));
                last = None;
                if let Some(cursor) = walk.cursor_mut(host) {
                    crate::play::gather::apply_gathered(
                        env, state, gathered, cursor, stats, callback,
                    );
                }
                env.update_play_hosts(state, &walk.cursors);
                continue;
            }
            hosts.get(pinned_at).cloned().into_iter().collect()
        } else {
            hosts.clone()
        };
        let mut moved = false;
        let mut flushing: Vec<((usize, usize), Vec<String>)> = Vec::new();
        for host in &pass {
            let Some((seg, next)) = walk.at(host) else { continue };
            moved = true;
            let ctx = walk.segments[seg].tasks[next].clone();
            if env.role_done(&ctx, host, &completed) {
                walk.advance(host, seg, next, false);
                continue;
            }
            if is_meta(&ctx) {
                if meta_arg(&ctx) == "flush_handlers" {
                    match flushing.iter_mut().find(|(at, _)| *at == (seg, next)) {
                        Some((_, group)) => group.push(host.clone()),
                        None => flushing.push(((seg, next), vec![host.clone()])),
                    }
                    continue;
                }
                let round = Round { pick: 0, seg, next, hosts: vec![host.clone()] };
                let mut meta = crate::meta::MetaRound {
                    walk,
                    handlers,
                    completed: &mut completed,
                    states,
                    free_banner: Some(last == Some((seg, next))),
                };
                crate::meta::run_meta(env, state, &ctx, &round, &mut meta, callback, stats)?;
                if meta.free_banner == Some(true) {
                    last = Some((seg, next));
                }
                continue;
            }
            if crate::strategy::free_include::is_include(&ctx) {
                if last != Some((seg, next)) {
                    let params = walk.segments[seg].params.clone();
                    callback.task_start(&env.banner(&ctx, Some(host), params));
                    last = Some((seg, next));
                }
                let mut pending = Vec::new();
                let params = walk.segments[seg].params.clone();
                crate::strategy::free_include::free_include_result(
                    env,
                    state,
                    crate::strategy::free_include::At::Task(seg, next),
                    &ctx,
                    params,
                    host,
                    &mut pending,
                    walk,
                    callback,
                    stats,
                )?;
                let mut splice = Splice { walk, handlers };
                // Only a handler's include inserts handlers, and this loop has none.
                crate::strategy::free_include::free_include_splice(
                    env,
                    state,
                    pending,
                    &mut splice,
                    callback,
                    stats,
                )?;
                env.update_play_hosts(state, &walk.cursors);
                continue;
            }
            let params = walk.segments[seg].params.clone();
            let controls = env.task_controls(&ctx, std::slice::from_ref(host), params.clone())?;
            crate::strategy::warn_unsupported(&controls);
            let kind =
                if last == Some((seg, next)) { RunKind::Continued } else { RunKind::Deferred };
            last = Some((seg, next));
            let ctx = &ctx;
            crate::play::fanout::run_task(
                env,
                &mut state.lost,
                ctx,
                std::slice::from_ref(host),
                params.clone(),
                callback,
                kind,
                &mut |host, outcome, cb| {
                    let result = &outcome.result;
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
                        stats.count(result, false);
                        walk.advance(host, seg, next, false);
                    }
                    Ok(())
                },
            )?;
            env.update_play_hosts(state, &walk.cursors);
        }
        for ((seg, next), group) in flushing {
            let ctx = walk.segments[seg].tasks[next].clone();
            let round = Round { pick: 0, seg, next, hosts: group };
            let mut meta = crate::meta::MetaRound {
                walk,
                handlers,
                completed: &mut completed,
                states,
                free_banner: Some(last == Some((seg, next))),
            };
            crate::meta::run_meta(env, state, &ctx, &round, &mut meta, callback, stats)?;
            last = None;
        }
        env.update_play_hosts(state, &walk.cursors);
        if state.ended_play || !moved {
            break;
        }
    }
    Ok(BatchEnd::Done)
}
