//! What a dynamic include brings, put into the play: the loaded files' and roles' tasks as new
//! segments of the walk (placed in the lockstep order), the handlers and roles they bring,
//! and each including host entering its own (or moving on, as failed when its include
//! failed).
//!
//! Loads nothing itself (`include_tasks`, `include_role`) and runs none of the tasks.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::dynamic::Included;
use tack_playbook::listing::task_tags;
use tack_playbook::walk::{Sections, TaskInContext, walk};
use tack_template::Layer;

use tack_report::callback::{Callback, Stats};

use crate::handlers::Handlers;
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;
use crate::play::walk::{Round, Segment, Walk};
use crate::task::outcome::TaskOutcome;

/// What splicing an include changes besides the callback and the recap: the hosts'
/// positions and the play's handlers.
pub(crate) struct Splice<'m, 's> {
    pub walk: &'m mut Walk<'s>,
    pub handlers: &'m mut Handlers<'s>,
}

/// Runs the include (`include_tasks` or `include_role`) `ctx` for the hosts of `round`: each
/// host enters what it included, or moves on when it included nothing.
pub(crate) fn splice_include<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'r>,
    round: &Round,
    splice: &mut Splice<'_, 'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Vec<String>, Diagnostic> {
    let (seg, next) = (round.seg, round.next);
    let params = splice.walk.segments[seg].params.clone();
    let included = match &ctx.task.kind {
        tack_playbook::TaskKind::IncludeRole(_) => crate::include::role::include_role(
            env,
            state,
            ctx,
            &round.hosts,
            params.as_ref(),
            callback,
            stats,
        )?,
        _ => crate::include::tasks::include(
            env,
            state,
            ctx,
            &round.hosts,
            params.as_ref(),
            false,
            callback,
            stats,
        )?,
    };
    count_task_failures(env, state, ctx, &round.hosts, splice.walk, (seg, next), stats);
    // The hosts whose include failed, for what the strategy does after a failed task
    // (`any_errors_fatal`, `max_fail_percentage`).
    let failed: Vec<String> = round
        .hosts
        .iter()
        .filter(|h| state.include_task_failed.contains_key(*h) || state.include_failed.contains(*h))
        .cloned()
        .collect();
    splice_loaded(env, state, ctx, (seg, next), &round.hosts, included, round.pick + 1, splice)?;
    Ok(failed)
}

/// Counts those of `hosts` whose include failed as a task fails, each as rescued when the
/// walk has a rescue for it there (and the rescue sees the failure, as after any task).
pub(crate) fn count_task_failures(
    env: &PlayEnv<'_, '_>,
    state: &BatchState,
    ctx: &TaskInContext<'_>,
    hosts: &[String],
    walk: &Walk<'_>,
    (seg, next): (usize, usize),
    stats: &mut Stats,
) {
    let failed = &state.include_task_failed;
    for (host, result) in hosts.iter().filter_map(|h| failed.get_key_value(h)) {
        let rescuing = walk.rescuing(host, seg, next);
        stats.count(result, rescuing);
        if rescuing {
            env.remember_failure(host, ctx, &TaskOutcome::of(result.clone()));
        }
    }
}

/// Splices what the include `ctx` at `at` (segment, task) loaded (`included`: each file's or
/// role's blocks, its parameters and its hosts) into the walk, the new tasks placed at
/// `order` in the lockstep order; each of `hosts` enters what it included, or moves on when
/// it included nothing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn splice_loaded<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'r>,
    (seg, next): (usize, usize),
    hosts: &[String],
    included: Vec<(Included, Arc<Layer>, Vec<String>)>,
    mut order: usize,
    splice: &mut Splice<'_, 'r>,
) -> Result<(), Diagnostic> {
    let is_tasks = matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks);
    let mut queues: BTreeMap<String, VecDeque<usize>> = BTreeMap::new();
    let templar = env.run.templar;
    let apply = crate::include::apply_block(env, ctx)?;
    let tag_vars = crate::vars::roles::include_tag_vars(env.play(), ctx, env.vars);
    for (included, params, hosts_of) in included {
        if let Some(roles) = included.roles {
            env.grow_roles(roles);
        }
        let play = env.play();
        if !included.handlers.is_empty() {
            let blocks: &[CompiledBlock] = env.blocks.alloc(included.handlers);
            splice.handlers.extend(play, walk(play, blocks, Sections::All), templar, env.vars);
        }
        let blocks: &[CompiledBlock] = env.blocks.alloc(included.blocks);
        // The included tasks inherit what the include inherits (its blocks, role and
        // play) but nothing of the include itself, which is dynamic (ansible passes over
        // a parent that was not loaded statically); its `apply` block stands in its place.
        let adjust =
            |task: &mut TaskInContext<'r>| crate::include::adopt(task, ctx, apply, is_tasks);
        // The include's parameters (for `include_role`, its parent role's names too) are
        // among the variables its tasks' tags render with.
        let mut file_tag_vars = tag_vars.clone();
        for (name, binding) in params.bindings() {
            let key = tack_yaml::Node::bare(tack_yaml::Value::Str(name.to_string()));
            file_tag_vars.insert(key, binding.node().clone());
        }
        let segment = Segment::adjusted(play, blocks, Some(params), adjust, |c| {
            Ok(env.run.tags.should_run(&task_tags(c, &file_tag_vars, templar)?))
        })?;
        let (id, after) = splice.walk.splice(order, segment);
        order = after;
        for host in hosts_of {
            queues.entry(host).or_default().push_back(id);
        }
    }
    for host in hosts {
        // A host whose include failed to load goes on as failed (to a rescue or an
        // `always`, if any), after the files of it that loaded when one follows (ansible
        // puts those at its start; without one the host runs none of them), and stays
        // among the failed hosts as ansible's `_failed_hosts` keeps it.
        let failed_task = state.include_task_failed.remove(host).is_some();
        let failed_load = state.include_failed.remove(host);
        let fails = failed_task || failed_load;
        if failed_load {
            state.excluded.insert(host.clone());
        }
        if fails && !splice.walk.runs_on_after_failing(host, seg, next) {
            queues.remove(host);
        }
        match queues.remove(host) {
            Some(queue) => splice.walk.enter(host, queue, fails, seg, next),
            None => splice.walk.advance(host, seg, next, fails),
        }
    }
    Ok(())
}
