//! The `free` strategy's passes as ansible runs them with one fork: in each pass over the
//! batch every host that is not waiting for a result takes one step (a `meta` task runs at
//! once; any other task is queued); at the end of the pass the results that are in are
//! processed, which is every queued result but the last one queued (its worker is still
//! running), unless the pass queued nothing. A host waits from its task's queueing to its
//! result's processing. Results are shown when processed, each task's banner before the first
//! result of another task than the last shown, as ansible's callback does for `free`.
//!
//! Handlers run per host, one per step, after the host's `flush_handlers`. With more than one
//! fork, the steps a pass queued that touch their host run at once, `forks` at a time, before
//! the pass's results are processed (in the order they were queued, as with one fork).
//! Runs tasks only through the play's runners and moves hosts only through the [`Walk`].

use std::collections::{BTreeMap, BTreeSet};

use tack_diag::Diagnostic;

use tack_report::callback::{Callback, Stats};

use crate::context::HostState;
use crate::handlers::Handlers;
use crate::include::splice::Splice;
use crate::play::batch::{BatchEnd, BatchState};
use crate::play::env::PlayEnv;
use crate::play::walk::{Round, Walk};
use crate::task::outcome::TaskOutcome;
use crate::task::reading::{is_meta, meta_arg};
use tack_playbook::walk::TaskInContext;

/// What a queued step ran: a task of the walk, or a handler (by index).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The implicit `Gathering Facts`, each host's first step.
    Gather,
    Task(usize, usize),
    Handler(usize),
}

enum Payload<'r> {
    Gathered(crate::play::gather::Gathered),
    Ran(TaskOutcome),
    /// A step on the host that runs with the pass's other such steps, at once, when the run
    /// has more than one fork.
    Due(TaskInContext<'r>, Option<std::sync::Arc<tack_template::Layer>>, Throttle),
    /// An include: what it names is read when its result is processed.
    Include,
}

struct Queued<'r> {
    host: String,
    step: Step,
    outcome: Payload<'r>,
}

/// A task's `throttle` as rendered for its host (0: none).
type Throttle = i64;

/// The step of `ctx` on `host`: run now, or left due for the pass's parallel run when it
/// touches the host and the run has more than one fork (what a controller action does may
/// be what the next host's step reads, as with one fork).
fn step<'r>(
    env: &PlayEnv<'r, '_>,
    ctx: &TaskInContext<'r>,
    host: &str,
    params: Option<std::sync::Arc<tack_template::Layer>>,
) -> Result<Payload<'r>, Diagnostic> {
    // An invalid `throttle` stops the play as the task is queued.
    let throttle = env.throttle_for(ctx, host, params.clone())?;
    let on_host = tack_actions::Action::of(ctx.task).is_some_and(tack_actions::Action::uses_link);
    if env.run.facts.forks > 1 && on_host {
        return Ok(Payload::Due(ctx.clone(), params, throttle));
    }
    Ok(Payload::Ran(crate::play::fanout::run_one(env, ctx, host, params)?))
}

/// Runs the pass's due steps, `forks` at a time: with several forks ansible's workers run
/// them at once; the results are processed in the order they were queued all the same.
fn run_due<'r>(env: &PlayEnv<'r, '_>, queued: &mut [Queued<'r>]) -> Result<(), Diagnostic> {
    let due: Vec<String> = queued
        .iter()
        .filter(|q| matches!(q.outcome, Payload::Due(..)))
        .map(|q| q.host.clone())
        .collect();
    if due.is_empty() {
        return Ok(());
    }
    // The runners are made here (the play's state is this thread's); they run anywhere.
    let mut runners = BTreeMap::new();
    for q in queued.iter() {
        if let Payload::Due(ctx, params, _) = &q.outcome {
            let runner = crate::play::fanout::runner_for(env, ctx, params.clone())?;
            runners.insert(q.host.clone(), runner);
        }
    }
    // ansible's free strategy keeps a task's running workers within its `throttle`; the
    // pass's steps run at once, so the tightest throttle among them caps them all.
    let throttle = queued
        .iter()
        .filter_map(|q| match q.outcome {
            Payload::Due(_, _, throttle) if throttle > 0 => Some(throttle),
            _ => None,
        })
        .min()
        .unwrap_or(0);
    let width = crate::play::forks::width(env.run.facts.forks, throttle, due.len());
    let mut outcomes: BTreeMap<String, TaskOutcome> = BTreeMap::new();
    crate::play::forks::run_hosts(
        &due,
        width,
        |host| runners.get(host).map(|runner| runner.run(host)),
        |host, note| {
            // The free strategy's hosts start as its passes show them (not per host yet).
            if let crate::play::forks::Note::Done(Some(outcome)) = note {
                outcomes.insert(host.to_string(), outcome);
            }
            Ok(())
        },
    )?;
    for q in queued.iter_mut() {
        if matches!(q.outcome, Payload::Due(..))
            && let Some(outcome) = outcomes.remove(&q.host)
        {
            q.outcome = Payload::Ran(outcome);
        }
    }
    Ok(())
}

/// One batch under `free`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_free_passes<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    gather: Option<&tack_playbook::post_validate::PlayKeywords>,
    walk: &mut Walk<'r>,
    handlers: &mut Handlers<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut BTreeMap<String, HostState>,
) -> Result<BatchEnd, Diagnostic> {
    let hosts = env.hosts.clone();
    let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
    // Each host inside its handlers: the next handler index to consider.
    let mut in_handlers: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_flight: Option<Queued> = None;
    let mut banner: Option<Step> = None;
    let mut to_gather: BTreeSet<String> = if gather.is_some() {
        let hosts = walk.cursors.iter().map(|(h, _)| h.clone());
        hosts.filter(|h| crate::play::gather::gathers_on(env, h)).collect()
    } else {
        BTreeSet::new()
    };
    loop {
        let mut queued: Vec<Queued> = Vec::new();
        let mut stepped = false;
        for host in &hosts {
            let waiting = in_flight.as_ref().is_some_and(|q| &q.host == host)
                || queued.iter().any(|q| &q.host == host);
            if waiting || !walk.is_running(host) {
                continue;
            }
            if let Some(keywords) = gather
                && to_gather.remove(host)
            {
                let view = crate::play::gather::gather_view(env.play(), env.check_flag());
                callback.host_start(&view, host, false);
                let outcome =
                    Payload::Gathered(crate::play::gather::gather_one(env, keywords, host)?);
                queued.push(Queued { host: host.clone(), step: Step::Gather, outcome });
                stepped = true;
                continue;
            }
            if let Some(from) = in_handlers.get(host).copied() {
                let next = (from..handlers.list.len()).find(|i| handlers.is_notified(*i, host));
                match next {
                    Some(index) => {
                        handlers.take(index, std::slice::from_ref(host));
                        in_handlers.insert(host.clone(), index + 1);
                        let ctx = handlers.list[index].ctx.clone();
                        let params = handlers.list[index].params.clone();
                        let view = env.banner(&ctx, Some(host), params.clone());
                        callback.host_start(&view, host, true);
                        let outcome = if crate::strategy::free_include::is_include(&ctx) {
                            Payload::Include
                        } else {
                            step(env, &ctx, host, params)?
                        };
                        queued.push(Queued {
                            host: host.clone(),
                            step: Step::Handler(index),
                            outcome,
                        });
                        stepped = true;
                        continue;
                    }
                    None => {
                        in_handlers.remove(host);
                        // Past its flush only now: a failing host in a `force_handlers`
                        // `always` leaves the play there, and would run no handler.
                        if let Some((seg, next)) = walk.at(host) {
                            walk.advance(host, seg, next, false);
                        }
                    }
                }
            }
            let Some((seg, next)) = walk.at(host) else { continue };
            stepped = true;
            let ctx = walk.segments[seg].tasks[next].clone();
            if env.role_done(&ctx, host, &completed) {
                walk.advance(host, seg, next, false);
                continue;
            }
            if is_meta(&ctx) {
                // A meta task runs at once, in the pass; its banner shows only with a
                // skipped result.
                let mut shown = banner == Some(Step::Task(seg, next));
                if meta_arg(&ctx) == "flush_handlers" {
                    let params = walk.segments[seg].params.clone();
                    // The host's saved notifications name their handlers now.
                    if crate::meta::free_flush(
                        env, &ctx, host, params, handlers, callback, &mut shown,
                    )? {
                        // The host stays at its flush until its handlers are done.
                        in_handlers.insert(host.clone(), 0);
                    } else {
                        walk.advance(host, seg, next, false);
                    }
                } else {
                    let round = Round { pick: 0, seg, next, hosts: vec![host.clone()] };
                    let mut meta = crate::meta::MetaRound {
                        walk,
                        handlers,
                        completed: &mut completed,
                        states,
                        free_banner: Some(shown),
                    };
                    crate::meta::run_meta(env, state, &ctx, &round, &mut meta, callback, stats)?;
                    shown = meta.free_banner == Some(true);
                    // An ended host runs no more handlers either.
                    in_handlers.retain(|h, _| !state.removed.contains(h));
                }
                if shown {
                    banner = Some(Step::Task(seg, next));
                }
                continue;
            }
            // Queued to the worker: ansible's start event (a `meta` task above runs at once).
            let view = env.banner(&ctx, Some(host), walk.segments[seg].params.clone());
            callback.host_start(&view, host, false);
            if crate::strategy::free_include::is_include(&ctx) {
                let outcome = Payload::Include;
                queued.push(Queued { host: host.clone(), step: Step::Task(seg, next), outcome });
                continue;
            }
            let params = walk.segments[seg].params.clone();
            let controls = env.task_controls(&ctx, std::slice::from_ref(host), params.clone())?;
            crate::strategy::warn_unsupported(&controls);
            let outcome = step(env, &ctx, host, params)?;
            queued.push(Queued { host: host.clone(), step: Step::Task(seg, next), outcome });
        }
        run_due(env, &mut queued)?;
        // The single worker finishes the one before each task it takes. A pass that
        // queued nothing but ran meta tasks is over before the running task's result is
        // in; one where no host could move waits for it.
        let mut done: Vec<Queued> = Vec::new();
        if !queued.is_empty() {
            done.extend(in_flight.take());
            done.extend(queued);
            in_flight = done.pop();
        } else if !stepped {
            done.extend(in_flight.take());
        }
        let processed = !done.is_empty();
        let mut pending = Vec::new();
        for q in done {
            let at = (&mut *walk, &mut *handlers);
            process(env, state, q, at, &mut pending, callback, stats, &mut banner)?;
        }
        if !pending.is_empty() {
            let mut splice = Splice { walk, handlers };
            let inserted = crate::strategy::free_include::free_include_splice(
                env,
                state,
                pending,
                &mut splice,
                callback,
                stats,
            )?;
            // Handlers a handler's include inserted move every later handler's index:
            // where hosts stand in them, the running one, the last banner.
            for (at, count) in inserted {
                let moved = |step: &mut Step| {
                    if let Step::Handler(i) = step
                        && *i >= at
                    {
                        *i += count;
                    }
                };
                if let Some(q) = in_flight.as_mut() {
                    moved(&mut q.step);
                }
                if let Some(step) = banner.as_mut() {
                    moved(step);
                }
                // A host standing right after the include (waiting for its own, or not
                // notified for it) passes over the new ones, notified for others only.
                for from in in_handlers.values_mut() {
                    if *from > at {
                        *from += count;
                    }
                }
            }
        }
        env.update_play_hosts(state, &walk.cursors);
        // Ending the play ends every host; the result still running is processed first.
        if !stepped && !processed && in_flight.is_none() {
            break;
        }
    }
    Ok(BatchEnd::Done)
}

/// A result processed: the banner if another task's result was shown last, the items, the
/// host's next position, the result line.
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
fn process<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    q: Queued,
    (walk, handlers): (&mut Walk<'r>, &mut Handlers<'_>),
    pending: &mut Vec<crate::strategy::free_include::Pending>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    banner: &mut Option<Step>,
) -> Result<(), Diagnostic> {
    let outcome = match q.outcome {
        Payload::Gathered(gathered) => {
            if *banner != Some(Step::Gather) {
                callback
                    .task_start(&crate::play::gather::gather_view(env.play(), env.check_flag()));
                *banner = Some(Step::Gather);
            }
            if let Some(cursor) = walk.cursor_mut(&q.host) {
                crate::play::gather::apply_gathered(env, state, gathered, cursor, stats, callback);
            }
            return Ok(());
        }
        Payload::Ran(outcome) => outcome,
        // Every due step ran before its pass's results were processed.
        Payload::Due(..) => return Ok(()),
        Payload::Include => {
            let (at, ctx, params) = match q.step {
                Step::Task(seg, next) => (
                    crate::strategy::free_include::At::Task(seg, next),
                    walk.segments[seg].tasks[next].clone(),
                    walk.segments[seg].params.clone(),
                ),
                Step::Handler(index) => (
                    crate::strategy::free_include::At::Handler(index),
                    handlers.list[index].ctx.clone(),
                    handlers.list[index].params.clone(),
                ),
                Step::Gather => return Ok(()),
            };
            if *banner != Some(q.step) {
                let view = env.banner(&ctx, Some(&q.host), params.clone());
                match q.step {
                    Step::Handler(_) => callback.handler_start(&view),
                    _ => callback.task_start(&view),
                }
                *banner = Some(q.step);
            }
            return crate::strategy::free_include::free_include_result(
                env, state, at, &ctx, params, &q.host, pending, walk, callback, stats,
            );
        }
    };
    let (ctx, params) = match q.step {
        Step::Gather => return Ok(()),
        Step::Task(seg, next) => {
            (walk.segments[seg].tasks[next].clone(), walk.segments[seg].params.clone())
        }
        Step::Handler(index) => {
            (handlers.list[index].ctx.clone(), handlers.list[index].params.clone())
        }
    };
    let fresh = *banner != Some(q.step);
    let view = if fresh { env.banner(&ctx, Some(&q.host), params.clone()) } else { env.view(&ctx) };
    // The banner comes with the first line shown for the task: an item or retry line
    // (sent while the task ran), else the result, which comes after what processing it
    // prints (its notifications).
    let show_banner = |callback: &mut dyn Callback| match q.step {
        Step::Handler(_) => callback.handler_start(&view),
        _ => callback.task_start(&view),
    };
    let mut pending_banner = fresh;
    if fresh {
        *banner = Some(q.step);
    }
    if pending_banner && outcome.has_lines() {
        show_banner(callback);
        pending_banner = false;
    }
    outcome.show_events(&view, callback);
    let result = &outcome.result;
    let host = q.host.as_str();
    env.note_role_ran(&ctx, host, result);
    let failed = result.flag("failed") && !result.ignored;
    if result.lost() {
        // An unreachable host leaves the run where it stands, as under `linear`.
        stats.count(result, false);
        state.lost.insert(host.to_string());
        walk.finish(host);
    }
    match q.step {
        Step::Gather => {}
        _ if result.lost() => {}
        Step::Task(seg, next) => {
            let rescuing = failed && walk.rescuing(host, seg, next);
            stats.count(result, rescuing);
            if rescuing {
                env.remember_failure(host, &ctx, &outcome);
            }
            if !failed && result.notifies() {
                crate::handlers::flush::notify_from(
                    env, handlers, &ctx, host, &outcome, params, callback,
                )?;
            }
            // A host ended while its task ran (another host's `end_play`) stays ended.
            if walk.at(host) == Some((seg, next)) {
                walk.advance(host, seg, next, failed);
            }
        }
        Step::Handler(_) => {
            stats.count(result, false);
            if failed {
                if let Some(cursor) = walk.cursor_mut(host) {
                    cursor.pos = None;
                    cursor.failed = true;
                }
            } else if result.flag("changed") {
                let names = env.notify_names(&ctx, host, None)?;
                for i in handlers.notify_now(host, &names)? {
                    callback.handler_notified(&env.view(&handlers.list[i].ctx), host);
                }
            }
        }
    }
    if pending_banner {
        show_banner(callback);
    }
    callback.host_result(&view, result);
    Ok(())
}
