//! `meta` tasks in a play: what each does to the hosts at it (flush the handlers, end a
//! host, the batch or the play, clear facts or host errors, mark a role complete), and the
//! skipped result ansible shows when one's `when` is false.
//!
//! Owns no positions of its own: it moves hosts only through the play's [`Walk`].

use std::collections::{BTreeMap, BTreeSet};

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_yaml::Mapping;

use tack_report::callback::{Callback, Stats};
use tack_report::result::s;

use crate::context::HostState;
use crate::handlers::Handlers;
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;
use crate::play::walk::{Round, Walk};
use crate::task::reading::meta_arg;

/// What a meta task may change besides the hosts' positions.
pub(crate) struct MetaRound<'m, 'a> {
    pub walk: &'m mut Walk<'a>,
    pub handlers: &'m mut Handlers<'a>,
    /// (role identity, host) pairs whose role ran to its end.
    pub completed: &'m mut BTreeSet<(String, String)>,
    pub states: &'m mut BTreeMap<String, HostState>,
    /// Under `free` and `host_pinned`, whether this task's banner is the last shown: there a
    /// meta task shows its banner only with a skipped result (ansible's callback defers
    /// banners for those strategies); `None` under `linear`, where it always shows.
    pub free_banner: Option<bool>,
}

/// Runs the meta task `ctx` for the hosts of `round`.
pub(crate) fn run_meta<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    round: &Round,
    meta: &mut MetaRound<'_, 'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<(), Diagnostic> {
    let (seg, next) = (round.seg, round.next);
    let kind = meta_arg(ctx);
    // ansible runs these once per host; the others once for the whole play (on the
    // first host at them).
    let per_host = matches!(
        kind.as_str(),
        "noop" | "end_host" | "role_complete" | "flush_handlers" | "end_role" | "reset_connection"
    );
    let targets: Vec<String> =
        if per_host { round.hosts.clone() } else { round.hosts.iter().take(1).cloned().collect() };
    let params = meta.walk.segments[seg].params.clone();
    let view = env.view(ctx);
    let mut flushing = Vec::new();
    let mut ended: Vec<String> = Vec::new();
    let mut ending_role: Vec<String> = Vec::new();
    let mut gone: Vec<String> = Vec::new();
    let mut revived: Vec<String> = Vec::new();
    // The iterator passes over an implicit flush for a host with nothing to flush, and over
    // the whole of a role that already ran there (its `role_complete` too): no gathering
    // of the host's variables (decided for every host before any of them runs).
    let ran_before = |h: &String| {
        ctx.task.role.is_some_and(|role| {
            kind == "role_complete"
                && !env.play().role(role).allow_duplicates
                && meta.completed.contains(&(env.identity(role), h.clone()))
        })
    };
    let gathered: Vec<bool> = targets
        .iter()
        .map(|h| {
            let passed_flush = ctx.task.implicit
                && kind == "flush_handlers"
                && meta.handlers.implicit_flush_skipped(h);
            !(passed_flush || ran_before(h))
        })
        .collect();
    for (host, gathers) in targets.iter().zip(gathered) {
        if gathers {
            env.reads.show(callback);
        }
        if !ctx.task.implicit && meta.free_banner.is_none() {
            callback.task_start(&view);
        }
        // These never evaluate a condition; ansible says so (once, as every warning).
        if matches!(kind.as_str(), "noop" | "refresh_inventory" | "reset_connection")
            && !ctx.extended(Keyword::When).is_empty()
        {
            tack_diag::warn(&Diagnostic::new(format!(
                "{kind} task does not support when conditional"
            )));
        }
        let conditional = !matches!(
            kind.as_str(),
            "noop" | "role_complete" | "refresh_inventory" | "reset_connection"
        );
        // The strategy gathers the host's variables again to evaluate a `when` (and
        // `reset_connection` for the connection's options).
        if (conditional && !ctx.extended(Keyword::When).is_empty()) || kind == "reset_connection" {
            env.reads.show(callback);
        }
        // A plan cannot tell whether a meta task whose `when` reads unavailable output
        // acts: it is deferred, and the host goes on as if it did not.
        if conditional && let Some(result) = meta_deferred(env, ctx, host, params.clone()) {
            callback.host_result(&view, &result);
            stats.count(&result, false);
            continue;
        }
        if conditional && let Some(skip) = meta_skip(env, ctx, host, &kind, params.clone())? {
            if !ctx.task.implicit {
                let reason = skip.data.get("skip_reason").and_then(tack_yaml::Node::as_str);
                callback.verbose_line(2, &format!("META: {}", reason.unwrap_or_default()));
            }
            if let Some(shown) = meta.free_banner.as_mut()
                && !*shown
            {
                callback.task_start(&view);
                *shown = true;
            }
            // Shown, never counted in the recap.
            callback.host_result(&view, &skip);
            continue;
        }
        if kind == "flush_handlers" {
            for i in meta.handlers.announce(host) {
                callback.handler_notified(&env.view(&meta.handlers.list[i].ctx), host);
            }
        }
        let header = match kind.as_str() {
            "flush_handlers" => Some(format!("triggered running handlers for {host}")),
            "end_host" => Some(format!("ending play for {host}")),
            "end_play" => Some("ending play".to_string()),
            "end_batch" => Some("ending batch".to_string()),
            "clear_facts" => Some("facts cleared".to_string()),
            "clear_host_errors" => Some("cleared host errors".to_string()),
            "noop" => Some("noop".to_string()),
            "reset_connection" => Some("reset connection".to_string()),
            // ansible's `end_role` shows its line only at debug level (its header is
            // told apart by the role's implicit `role_complete`, which it stops at).
            // `role_complete` is only ever implicit.
            _ => None,
        };
        // ansible resets the connection (and says so) before its `META:` line.
        if kind == "reset_connection"
            && let Some(target) = env.link_target(ctx, params.clone(), host)
        {
            let notes = env.run.links.reset(&target);
            for line in &notes.verbose {
                callback.verbose_line(3, line);
            }
            if let Some(warning) = notes.warning {
                tack_diag::warn(&Diagnostic::new(warning));
            }
        }
        if !ctx.task.implicit
            && let Some(header) = header
        {
            callback.verbose_line(2, &format!("META: {header}"));
        }
        match kind.as_str() {
            "flush_handlers" => flushing.push(host.clone()),
            "role_complete" => {
                // Only a role that had a task run here is complete (one whose every task was
                // skipped runs again where it is listed next).
                if let Some(role) = ctx.task.role
                    && env.role_ran(role, host)
                {
                    meta.completed.insert((env.identity(role), host.clone()));
                }
            }
            "end_host" => ended.push(host.clone()),
            // Done above: the host's next task opens a new link.
            "reset_connection" => {}
            "refresh_inventory" => {
                env.live.refresh(env.run.loader)?;
                // The inventory plugins' notes again (the collection loaded only once).
                for (level, note) in env.live.current().verbose_notes() {
                    if !note.starts_with("Loading collection ") {
                        callback.verbose_line(*level, note);
                    }
                }
                if !ctx.task.implicit {
                    callback.verbose_line(2, "META: inventory successfully refreshed");
                }
                env.scope.set_inventory(&env.live.current(), env.run.loader)?;
                // A host the sources no longer name leaves the play where it stands, its
                // recap kept (ansible rebuilds the strategy's host list from the new
                // inventory; a host new to it has no tasks left in this play).
                let inventory = env.live.current();
                gone.extend(env.hosts.iter().filter(|h| inventory.get_host(h).is_none()).cloned());
            }
            "end_role" => ending_role.push(host.clone()),
            "end_play" | "end_batch" => {
                ended.extend(env.hosts.iter().cloned());
                // end_batch ends this batch only; end_play every batch after it too.
                if kind == "end_play" {
                    state.ended_play = true;
                }
            }
            "clear_facts" => {
                for h in &env.hosts {
                    env.scope.clear_gathered(h);
                }
            }
            "clear_host_errors" => {
                // Failed and unreachable hosts alike (ansible pops both of the play's hosts).
                for (h, cursor) in meta.walk.cursors.iter_mut() {
                    cursor.clear_errors();
                    let host_state = meta.states.entry(h.clone()).or_default();
                    host_state.failed = false;
                    host_state.unreachable = false;
                    host_state.excluded = false;
                    state.lost.remove(h);
                    state.excluded.remove(h);
                }
                // A host an earlier play found unreachable is back in this one, as
                // ansible's cleared unreachable hosts rejoin (one that failed stays out:
                // ansible's iterator has it done with the play).
                for h in &env.hosts {
                    let earlier = meta.states.get(h).is_some_and(|s| s.unreachable && !s.failed);
                    if earlier && meta.walk.cursor(h).is_none() {
                        if let Some(host_state) = meta.states.get_mut(h) {
                            host_state.unreachable = false;
                        }
                        state.lost.remove(h);
                        state.removed.remove(h);
                        revived.push(h.clone());
                    }
                }
            }
            _ => {}
        }
    }
    // A host a handler failed in an explicit flush fails at the flush itself, as ansible's
    // iterator marks it failed there: a block around the flush rescues it.
    let mut failed_here: Vec<String> = Vec::new();
    if !flushing.is_empty() {
        let before = meta.walk.cursors.clone();
        let rescued: BTreeSet<String> = flushing
            .iter()
            .filter(|h| !ctx.task.implicit && meta.walk.rescuing(h, seg, next))
            .cloned()
            .collect();
        crate::handlers::flush::flush(
            env,
            state,
            meta.handlers,
            &flushing,
            &rescued,
            callback,
            stats,
            &mut meta.walk.cursors,
        )?;
        if !ctx.task.implicit {
            for (host, cursor) in meta.walk.cursors.iter_mut() {
                let was = before.iter().find(|(h, _)| h == host).map(|(_, c)| c);
                if cursor.failed
                    && let Some(was) = was.filter(|c| !c.failed && c.pos.is_some())
                {
                    *cursor = was.clone();
                    failed_here.push(host.clone());
                }
            }
        }
        meta.walk.drop_failed_frames();
    }
    for host in &round.hosts {
        if ending_role.contains(host) {
            // Past every task up to the role's implicit `role_complete`, which then runs.
            let (mut at_seg, mut at_next) = (seg, next);
            loop {
                meta.walk.advance(host, at_seg, at_next, false);
                let Some((s, n)) = meta.walk.position_of(host) else { break };
                let task = &meta.walk.segments[s].tasks[n];
                if task.task.implicit && meta_arg(task) == "role_complete" {
                    break;
                }
                (at_seg, at_next) = (s, n);
            }
        } else if ended.contains(host) {
            meta.walk.finish(host);
        } else if failed_here.contains(host) {
            meta.walk.advance(host, seg, next, true);
        } else if meta.walk.is_running(host) {
            meta.walk.advance(host, seg, next, false);
        }
    }
    // Revived hosts start the play from its first task, as ansible's iterator never moved
    // them: the lockstep reaches them once the others are past their tasks.
    if !revived.is_empty() {
        let start = meta.walk.segments[0].layout().start();
        for host in revived {
            meta.walk.cursors.push((host, start.clone()));
        }
        let order = |h: &String| env.hosts.iter().position(|x| x == h);
        meta.walk.cursors.sort_by_key(|(h, _)| order(h));
    }
    ended.extend(gone);
    for host in &ended {
        meta.walk.finish(host);
        // An ended host leaves `ansible_play_hosts` and `ansible_play_batch` for the rest
        // of the play, as ansible's `end_host` removes it.
        state.removed.insert(host.clone());
    }
    Ok(())
}

/// An explicit or implicit `flush_handlers` reached by `host` under `free` or `host_pinned`
/// (`shown`: whether its banner is the last shown): its `when` (a false one shows the skipped
/// result and returns false), then the host's saved notifications name their handlers
/// (`NOTIFIED HANDLER` lines at `-vv`) and it returns true.
pub(crate) fn free_flush(
    env: &PlayEnv<'_, '_>,
    ctx: &TaskInContext<'_>,
    host: &str,
    params: Option<std::sync::Arc<tack_template::Layer>>,
    handlers: &mut Handlers<'_>,
    callback: &mut dyn Callback,
    shown: &mut bool,
) -> Result<bool, Diagnostic> {
    if let Some(skip) = meta_skip(env, ctx, host, "flush_handlers", params)? {
        if !ctx.task.implicit {
            let reason = skip.data.get("skip_reason").and_then(tack_yaml::Node::as_str);
            callback.verbose_line(2, &format!("META: {}", reason.unwrap_or_default()));
            if !*shown {
                callback.task_start(&env.view(ctx));
                *shown = true;
            }
            callback.host_result(&env.view(ctx), &skip);
        }
        return Ok(false);
    }
    for i in handlers.announce(host) {
        callback.handler_notified(&env.view(&handlers.list[i].ctx), host);
    }
    if !ctx.task.implicit {
        callback.verbose_line(2, &format!("META: triggered running handlers for {host}"));
    }
    Ok(true)
}

/// In a plan, the deferred result of a meta task whose `when` on `host` reads the output of
/// a task that did not run.
fn meta_deferred(
    env: &PlayEnv<'_, '_>,
    ctx: &TaskInContext<'_>,
    host: &str,
    params: Option<std::sync::Arc<tack_template::Layer>>,
) -> Option<tack_report::result::HostResult> {
    if !env.run.facts.plan || ctx.extended(Keyword::When).is_empty() {
        return None;
    }
    let reading = env.reading(ctx, params);
    let scope = reading.scope(host)?;
    crate::plan::include_gate(&reading, true, host, &scope, &[])
}

/// A meta task's `when` on `host`: `None` when it holds, else the skipped result ansible
/// shows (with its wording for each meta action).
fn meta_skip(
    env: &PlayEnv<'_, '_>,
    ctx: &TaskInContext<'_>,
    host: &str,
    kind: &str,
    params: Option<std::sync::Arc<tack_template::Layer>>,
) -> Result<Option<tack_report::result::HostResult>, Diagnostic> {
    let reading = env.reading(ctx, params);
    let Some(scope) = reading.scope(host) else { return Ok(None) };
    if crate::task::when::evaluate(ctx, reading.templar, &scope).false_condition()?.is_none() {
        return Ok(None);
    }
    let tail = match kind {
        "flush_handlers" => format!(", not running handlers for {host}"),
        "clear_facts" => format!(", not clearing facts and fact cache for {host}"),
        "clear_host_errors" => format!(", not clearing host error state for {host}"),
        "end_batch" => ", continuing current batch".into(),
        "end_play" => ", continuing play".into(),
        "end_host" => format!(", continuing execution for {host}"),
        "end_role" => match ctx.task.role {
            Some(role) => {
                format!(", continuing role {} for {host}", env.play().role(role).name)
            }
            None => String::new(),
        },
        _ => String::new(),
    };
    let msg = if kind == "end_host" {
        format!("end_host conditional evaluated to false, continuing execution for {host}")
    } else {
        kind.to_string()
    };
    let mut data = Mapping::new();
    data.insert(s("changed"), tack_report::result::b(false));
    data.insert(s("msg"), s(&msg));
    data.insert(s("skip_reason"), s(&format!("{kind} conditional evaluated to False{tail}")));
    data.insert(s("skipped"), tack_report::result::b(true));
    Ok(Some(tack_report::result::HostResult::new(host, data)))
}
