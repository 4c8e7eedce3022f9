//! Running a play's handlers: the notifications a changed task's result saves (once per loop
//! item that was not skipped), and `flush_handlers`, which runs every notified handler in
//! definition order on the hosts still running (a handler that is an `include_tasks` bringing
//! its file's tasks in as handlers right after it).

use tack_diag::Diagnostic;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::walk::{Sections, TaskInContext, walk};

use tack_report::callback::{Callback, Stats};

use crate::handlers::Handlers;
use crate::play::batch::BatchState;
use crate::play::cursor::HostCursor;
use crate::play::env::PlayEnv;
use crate::play::fanout::RunKind;
use crate::task::outcome::TaskOutcome;

/// The notifications of a changed task's result on `host`, saved for the next flush.
/// ansible processes them once per loop result that was not skipped (each says so from
/// `-vv`), else once.
pub(crate) fn notify_from(
    env: &PlayEnv<'_, '_>,
    handlers: &mut Handlers<'_>,
    ctx: &TaskInContext<'_>,
    host: &str,
    outcome: &TaskOutcome,
    params: Option<std::sync::Arc<tack_template::Layer>>,
    callback: &mut dyn Callback,
) -> Result<(), Diagnostic> {
    let names = env.notify_names(ctx, host, params)?;
    // A looped task notifies once per item that was not skipped (each item is a result in
    // ansible); retries are not results.
    let items: Vec<&tack_report::result::HostResult> = outcome.item_results().collect();
    let times = if items.is_empty() {
        1
    } else {
        let skipped = tack_report::result::Outcome::Skipped;
        items.iter().filter(|i| i.outcome() != skipped).count()
    };
    // A plan lists a handler that a task of unknown outcome notified as deferred on it.
    let unknown = (!outcome.result.flag("changed"))
        .then(|| env.view(ctx).name)
        .filter(|_| tack_report::plan_mark::PlanMark::unknown_in(&outcome.result));
    for _ in 0..times {
        handlers.notify(host, &names, unknown.as_deref(), callback)?;
    }
    Ok(())
}

/// `meta: flush_handlers` for `hosts`: every handler in order, on the hosts notified for it
/// (and still running). A handler failing on a host of `rescued` counts as rescued (a block
/// around an explicit flush catches it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn flush<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    handlers: &mut Handlers<'r>,
    hosts: &[String],
    rescued: &std::collections::BTreeSet<String>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    cursors: &mut [(String, HostCursor)],
) -> Result<(), Diagnostic> {
    let mut index = 0;
    while index < handlers.list.len() {
        index += 1;
        let index = index - 1;
        let running: Vec<String> = hosts
            .iter()
            .filter(|h| cursors.iter().any(|(c, cur)| c == *h && !cur.failed))
            .cloned()
            .collect();
        let notified = handlers.take(index, &running);
        if notified.is_empty() {
            continue;
        }
        let ctx = handlers.list[index].ctx.clone();
        let params = handlers.list[index].params.clone();
        if matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks) {
            include_handler(env, state, &ctx, index, &notified, handlers, callback, stats)?;
            // A host whose file could not be loaded has failed.
            for host in std::mem::take(&mut state.include_failed) {
                state.forced.insert(host.clone());
                if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| *h == host) {
                    cursor.pos = None;
                    cursor.failed = true;
                }
            }
            continue;
        }
        if crate::task::reading::is_meta(&ctx) {
            meta_handler(env, &ctx, callback)?;
            continue;
        }
        let controls = env.task_controls(&ctx, &notified, params.clone())?;
        let reasons = Some(handlers.plan_reasons(index, &notified));
        let mut results: Vec<crate::play::fatal::RoundResult> = Vec::new();
        let mut judge = |host: &str, outcome: &TaskOutcome, cb: &mut dyn Callback| {
            let result = &outcome.result;
            results.push(crate::play::fatal::RoundResult::of(host, result, controls.ignore));
            if result.flag("failed") && !result.ignored {
                // The rescue around the flush sees this failure as its task's.
                if rescued.contains(host) {
                    env.remember_failure(host, &ctx, outcome);
                }
                if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                    cursor.pos = None;
                    cursor.failed = true;
                }
            } else if result.notifies() {
                let names = env.notify_names(&ctx, host, params.clone())?;
                // A plan lists what a listed handler notifies: deferred on it when what it
                // does is unknown.
                let unknown = (!result.flag("changed"))
                    .then(|| env.view(&ctx).name)
                    .filter(|_| tack_report::plan_mark::PlanMark::unknown_in(result));
                handlers.plan_reason(host, &names, unknown.as_deref());
                for i in handlers.notify_now(host, &names)? {
                    cb.handler_notified(&env.view(&handlers.list[i].ctx), host);
                }
            }
            stats.count(result, rescued.contains(host));
            Ok(())
        };
        let kind = if controls.run_once {
            RunKind::HandlerOnce(reasons)
        } else {
            RunKind::Handler(reasons)
        };
        crate::play::fanout::run_task(
            env,
            &mut state.lost,
            &ctx,
            &notified,
            params.clone(),
            callback,
            kind,
            &mut judge,
        )?;
        if crate::play::fatal::after_handler(env, state, &controls, &results, cursors, callback) {
            handlers.forget_plan_reasons(hosts);
            handlers.drop_included();
            return Ok(());
        }
        env.update_play_hosts(state, cursors);
    }
    handlers.forget_plan_reasons(hosts);
    handlers.drop_included();
    Ok(())
}

/// A handler that is a `meta` task: `noop` shows its banner (and its `META:` line at `-vv`);
/// `flush_handlers` shows its banner, then ansible's error, which ends the run; the others are refused by name
/// where they would run.
fn meta_handler(
    env: &PlayEnv<'_, '_>,
    ctx: &tack_playbook::walk::TaskInContext<'_>,
    callback: &mut dyn Callback,
) -> Result<(), Diagnostic> {
    match crate::task::reading::meta_arg(ctx).as_str() {
        "noop" => {
            callback.handler_start(&env.view(ctx));
            callback.verbose_line(2, "META: noop");
            Ok(())
        }
        "flush_handlers" => {
            callback.handler_start(&env.view(ctx));
            Err(Diagnostic::new("flush_handlers cannot be used as a handler"))
        }
        other => Err(Diagnostic::at(
            format!("tack does not support 'meta: {other}' as a handler yet"),
            ctx.task.origin.clone(),
        )),
    }
}

/// A handler that is an `include_tasks`: the file each host names is loaded, and its tasks
/// run next in this flush as handlers, for the hosts that included them (ansible neither
/// filters them by tags nor lets a notification name them).
#[allow(clippy::too_many_arguments)]
fn include_handler<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'r>,
    index: usize,
    hosts: &[String],
    handlers: &mut Handlers<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<(), Diagnostic> {
    let params = handlers.list[index].params.clone();
    let included = crate::include::tasks::include(
        env,
        state,
        ctx,
        hosts,
        params.as_ref(),
        true,
        callback,
        stats,
    )?;
    let apply = crate::include::apply_block(env, ctx)?;
    let mut at = index + 1;
    for (included, layer, hosts_of) in included {
        let blocks: &'r [CompiledBlock] = env.blocks.alloc(included.blocks);
        let mut tasks = walk(env.play(), blocks, Sections::BlockOnly);
        for task in &mut tasks {
            crate::include::adopt(task, ctx, apply, true);
        }
        let count = tasks.len();
        handlers.insert_included(at, tasks, layer, &hosts_of);
        at += count;
    }
    Ok(())
}
