//! `include_tasks` and `include_role` under the `free` and `host_pinned` strategies, as
//! ansible's free strategy runs them: an include is one step of one host like any task; when
//! its result is processed its banner is shown (as for any result) and its `when` and loop
//! are read for that host; after the pass's results, the files and roles those results name
//! are loaded, once for the hosts that name them alike and in first-seen order (as
//! `IncludedFile.process_include_results` groups them), and each host enters its own.
//!
//! Runs none of the included tasks and moves hosts only through the [`Walk`] (`include`'s
//! splice).

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::TaskKind;
use tack_playbook::dynamic::Included;
use tack_playbook::walk::TaskInContext;
use tack_template::Layer;

use tack_report::callback::{Callback, Stats};

use crate::include::Wanted;
use crate::include::splice::Splice;
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;
use crate::play::walk::Walk;

/// Where an include stands: a task of the walk (segment, task) or a handler (its index).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    Task(usize, usize),
    Handler(usize),
}

/// What one include result of a pass names: the include and one request.
pub(crate) struct Pending {
    at: At,
    want: Wanted,
}

/// Whether `ctx` is an include these strategies expand per host.
pub(crate) fn is_include(ctx: &TaskInContext<'_>) -> bool {
    matches!(ctx.task.kind, TaskKind::IncludeTasks | TaskKind::IncludeRole(_))
}

/// The include `ctx` at `at` processed for `host` (its banner already shown): its `when` and
/// loop (skipped lines shown now), what it names joining `pending`; a host that included
/// nothing moves on at once.
#[allow(clippy::too_many_arguments)]
pub(crate) fn free_include_result<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    at: At,
    ctx: &TaskInContext<'_>,
    params: Option<Arc<Layer>>,
    host: &str,
    pending: &mut Vec<Pending>,
    walk: &mut Walk<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<(), Diagnostic> {
    let names = crate::include::IncludeNames::of(ctx)?;
    let hosts = [host.to_string()];
    let wanted =
        crate::include::wanted(env, state, ctx, &hosts, params.as_ref(), callback, stats, &names)?;
    if let At::Task(seg, next) = at {
        crate::include::splice::count_task_failures(
            env,
            state,
            ctx,
            &hosts,
            walk,
            (seg, next),
            stats,
        );
    }
    if wanted.is_empty() {
        // A handler's host goes on to the next handler by itself; a host whose include
        // failed goes on as failed.
        let failed = state.include_task_failed.remove(host).is_some();
        if let At::Task(seg, next) = at
            && walk.at(host) == Some((seg, next))
        {
            walk.advance(host, seg, next, failed);
        }
        return Ok(());
    }
    for want in wanted {
        let same = pending.iter_mut().find(|p| {
            p.at == at
                && p.want.names == want.names
                && p.want.flags == want.flags
                && p.want.item == want.item
        });
        match same {
            Some(p) => p.want.hosts.extend(want.hosts),
            None => pending.push(Pending { at, want }),
        }
    }
    Ok(())
}

/// Loads what the pass's include results named (the `included:` lines, in first-seen order)
/// and puts each host into its own: a task's files and roles into the walk, a handler's tasks
/// among the handlers right after it. Returns where handlers were inserted and how many (each
/// handler index from there on moves up by that many).
pub(crate) fn free_include_splice<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    pending: Vec<Pending>,
    splice: &mut Splice<'_, 'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Vec<(usize, usize)>, Diagnostic> {
    type Loaded = Vec<(Included, Arc<Layer>, Vec<String>)>;
    let mut loaded: Vec<((usize, usize), Loaded, Vec<String>)> = Vec::new();
    // A handler include's requests, together: a host runs its files in their order.
    let mut for_handlers: Vec<(usize, Vec<Wanted>)> = Vec::new();
    for Pending { at, want } in pending {
        let (seg, next) = match at {
            At::Task(seg, next) => (seg, next),
            At::Handler(index) => {
                match for_handlers.iter_mut().find(|(i, _)| *i == index) {
                    Some((_, wants)) => wants.push(want),
                    None => for_handlers.push((index, vec![want])),
                }
                continue;
            }
        };
        let ctx = splice.walk.segments[seg].tasks[next].clone();
        // Every host that asked moves on from the include, the ones whose file or role could
        // not be loaded too (as failed): they are the splice's hosts, not only those it loaded
        // for (a host left at the include would run it again on the next pass, for ever).
        let asked = want.hosts.clone();
        let out = match &ctx.task.kind {
            TaskKind::IncludeRole(_) => crate::include::role::load_included_role(
                env,
                state,
                &ctx,
                vec![want],
                callback,
                stats,
            )?,
            _ => crate::include::tasks::load_included(
                env,
                state,
                &ctx,
                vec![want],
                false,
                callback,
                stats,
            )?,
        };
        match loaded.iter_mut().find(|(a, _, _)| *a == (seg, next)) {
            Some((_, all, hosts)) => {
                all.extend(out);
                hosts.extend(asked.into_iter().filter(|h| !hosts.contains(h)).collect::<Vec<_>>());
            }
            None => loaded.push(((seg, next), out, asked)),
        }
    }
    for (at, included, asked) in loaded {
        let ctx = splice.walk.segments[at.0].tasks[at.1].clone();
        let mut hosts: Vec<String> = Vec::new();
        for host in included.iter().flat_map(|(_, _, of)| of).chain(&asked) {
            if !hosts.contains(host) {
                hosts.push(host.clone());
            }
        }
        // These strategies follow no lockstep order: the new tasks go at its end.
        let end = splice.walk.order_len();
        crate::include::splice::splice_loaded(env, state, &ctx, at, &hosts, included, end, splice)?;
    }
    let mut inserted: Vec<(usize, usize)> = Vec::new();
    for (index, wants) in for_handlers {
        // An earlier insertion moved this include too.
        let index =
            inserted.iter().fold(index, |i, (at, count)| if i >= *at { i + count } else { i });
        inserted.extend(free_handler_include(env, state, index, wants, splice, callback, stats)?);
    }
    Ok(inserted)
}

/// The files a handler's `include_tasks` at `index` names for `wants`' hosts: their tasks
/// become handlers right after it, notified for those hosts only. Returns where they went and
/// how many.
fn free_handler_include<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    index: usize,
    wants: Vec<Wanted>,
    splice: &mut Splice<'_, 'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Vec<(usize, usize)>, Diagnostic> {
    let mut inserted = Vec::new();
    let ctx = splice.handlers.list[index].ctx.clone();
    let included =
        crate::include::tasks::load_included(env, state, &ctx, wants, true, callback, stats)?;
    // A host whose file could not be loaded has failed.
    for host in std::mem::take(&mut state.include_failed) {
        state.forced.insert(host.clone());
        if let Some(cursor) = splice.walk.cursor_mut(&host) {
            cursor.pos = None;
            cursor.failed = true;
        }
    }
    let apply = crate::include::apply_block(env, &ctx)?;
    let mut at = index + 1;
    for (included, layer, hosts_of) in included {
        let blocks: &'r [tack_playbook::compile::CompiledBlock] = env.blocks.alloc(included.blocks);
        let mut tasks =
            tack_playbook::walk::walk(env.play(), blocks, tack_playbook::walk::Sections::BlockOnly);
        for task in &mut tasks {
            crate::include::adopt(task, &ctx, apply, true);
        }
        let count = tasks.len();
        splice.handlers.insert_included(at, tasks, layer, &hosts_of);
        inserted.push((at, count));
        at += count;
    }
    Ok(inserted)
}
