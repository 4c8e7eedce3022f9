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
use tack_playbook::Play;

use crate::HostState;
use crate::callback::{Callback, Stats};
use crate::handlers::Handlers;
use crate::play::{BatchEnd, PlayRun, RunKind, is_meta, meta_arg};
use crate::segments::{Round, Walk};

/// What splicing an include needs besides the walk and the handlers: where its blocks and
/// the grown plays are kept, and the play's variables (for the included tasks' tags).
#[derive(Clone, Copy)]
pub(crate) struct SpliceEnv<'r, 'v> {
    pub arena: &'r typed_arena::Arena<Vec<tack_playbook::compile::CompiledBlock>>,
    pub plays: &'r typed_arena::Arena<Play>,
    pub vars: &'v tack_yaml::Mapping,
}

impl<'r, 'v> SpliceEnv<'r, 'v> {
    pub(crate) fn splice<'m>(
        &self,
        walk: &'m mut Walk<'r>,
        handlers: &'m mut Handlers<'r>,
    ) -> crate::include::Splice<'m, 'r>
    where
        'v: 'm,
    {
        crate::include::Splice {
            walk,
            handlers,
            arena: self.arena,
            plays: self.plays,
            vars: self.vars,
        }
    }
}

/// The strategy names that run hosts freely, and whether each pins hosts.
pub(crate) fn free_kind(name: &str) -> Option<bool> {
    match tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy) {
        "free" => Some(false),
        "host_pinned" => Some(true),
        _ => None,
    }
}

/// ansible's warnings for the task keywords these strategies do not honour.
pub(crate) fn warn_unsupported(controls: &crate::fatal::Controls) {
    if controls.run_once {
        tack_diag::warn(&Diagnostic::new(
            "Using run_once with the free strategy is not currently supported. This task will \
             still be executed for every host in the inventory list.",
        ));
    }
    if controls.any_errors_fatal {
        tack_diag::warn(&Diagnostic::new(
            "Using any_errors_fatal with the free strategy is not supported, as tasks are \
             executed independently on each host",
        ));
    }
}

impl<'r> PlayRun<'r, '_> {
    /// One batch under `free` (`pinned` false) or `host_pinned`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_batch_free(
        &self,
        pinned: bool,
        gather: Option<&tack_playbook::post_validate::PlayKeywords>,
        env: SpliceEnv<'r, '_>,
        walk: &mut Walk<'r>,
        handlers: &mut Handlers<'r>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
        states: &mut BTreeMap<String, HostState>,
    ) -> Result<BatchEnd, Diagnostic> {
        if self.max_fail.is_some() {
            tack_diag::warn(&Diagnostic::new(
                "Using max_fail_percentage with the free strategy is not supported, as tasks \
                 are executed independently on each host",
            ));
        }
        if !pinned {
            return self.run_free_passes(gather, env, walk, handlers, callback, stats, states);
        }
        let mut to_gather: BTreeSet<String> = if gather.is_some() {
            walk.cursors.iter().map(|(h, _)| h.clone()).collect()
        } else {
            BTreeSet::new()
        };
        let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
        let mut last: Option<(usize, usize)> = None;
        let hosts = self.hosts.clone();
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
                    let gathered = self.gather_one(keywords, host);
                    callback.task_start(&crate::gather::gather_view(self.play()));
                    last = None;
                    if let Some(cursor) = walk.cursor_mut(host) {
                        self.apply_gathered(gathered, cursor, stats, states, callback);
                    }
                    self.update_play_hosts(&walk.cursors);
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
                if self.role_done(&ctx, host, &completed) {
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
                    self.run_meta(&ctx, &round, &mut meta, callback, stats)?;
                    if meta.free_banner == Some(true) {
                        last = Some((seg, next));
                    }
                    continue;
                }
                if crate::free_include::is_include(&ctx) {
                    if last != Some((seg, next)) {
                        let params = walk.segments[seg].params.clone();
                        callback.task_start(&self.banner(&ctx, Some(host), params));
                        last = Some((seg, next));
                    }
                    let mut pending = Vec::new();
                    let params = walk.segments[seg].params.clone();
                    self.free_include_result(
                        crate::free_include::At::Task(seg, next),
                        &ctx,
                        params,
                        host,
                        &mut pending,
                        walk,
                        callback,
                        stats,
                    )?;
                    let mut splice = env.splice(walk, handlers);
                    // Only a handler's include inserts handlers, and this loop has none.
                    self.free_include_splice(pending, &mut splice, callback, stats)?;
                    self.update_play_hosts(&walk.cursors);
                    continue;
                }
                let params = walk.segments[seg].params.clone();
                let controls =
                    self.task_controls(&ctx, std::slice::from_ref(host), params.clone())?;
                warn_unsupported(&controls);
                let kind =
                    if last == Some((seg, next)) { RunKind::Continued } else { RunKind::Deferred };
                last = Some((seg, next));
                let ctx = &ctx;
                self.run_task(
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
                                self.remember_failure(host, ctx, outcome);
                            }
                            walk.advance(host, seg, next, true);
                        } else {
                            if result.notifies() {
                                self.notify_from(handlers, ctx, host, outcome, params.clone(), cb)?;
                            }
                            stats.count(result, false);
                            walk.advance(host, seg, next, false);
                        }
                        Ok(())
                    },
                )?;
                self.update_play_hosts(&walk.cursors);
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
                self.run_meta(&ctx, &round, &mut meta, callback, stats)?;
                last = None;
            }
            self.update_play_hosts(&walk.cursors);
            if self.ended_play.get() || !moved {
                break;
            }
        }
        Ok(BatchEnd::Done)
    }
}
