//! One task (or handler) run on a round's hosts: its banner, its input for the callbacks that
//! show it, `run_once` (the first host runs it, its result is every host's), `pause`'s
//! announcement, up to `forks` hosts at once (`throttle` capping them, later hosts' links
//! opened meanwhile), and each host's outcome handed to the strategy's judge before its lines
//! are shown, in the hosts' order, as ansible processes a result before its callback.
//!
//! Moves no host: what an outcome does to the play is the judge's.

use std::collections::BTreeSet;
use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::walk::TaskInContext;
use tack_template::Layer;

use tack_actions::Action;
use tack_report::callback::Callback;

use crate::plan::HandlerReasons;
use crate::play::env::PlayEnv;
use crate::play::forks::Note;
use crate::task::outcome::{TaskOutcome, show_live};

/// What [`run_task`] runs: a task on every host given, a `run_once` task (on the first, its
/// result every host's), or a handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunKind {
    Task,
    /// A task whose banner is already the last shown (the free strategies).
    Continued,
    /// A task of the free strategies whose banner comes with its first line: an item or
    /// retry line, else its result (after what processing the result prints).
    Deferred,
    Once,
    /// A handler, with why a plan lists it on each host.
    Handler(Option<HandlerReasons>),
    /// A `run_once` handler.
    HandlerOnce(Option<HandlerReasons>),
}

impl RunKind {
    fn handler(&self) -> Option<Option<&HandlerReasons>> {
        match self {
            RunKind::Handler(reasons) | RunKind::HandlerOnce(reasons) => Some(reasons.as_ref()),
            _ => None,
        }
    }

    fn once(&self) -> bool {
        matches!(self, RunKind::Once | RunKind::HandlerOnce(_))
    }
}

/// What a task's caller does with each host's result before its line is shown (stats,
/// notifications, the host's next position); it may show lines of its own through the callback.
pub(crate) type Judge<'j> =
    dyn FnMut(&str, &TaskOutcome, &mut dyn Callback) -> Result<(), Diagnostic> + 'j;

/// Runs `ctx` on `hosts` in order; each host's outcome goes to `judge` (the strategy's
/// result processing: stats, notifications, the host's next position) before its result
/// line is shown. A host found unreachable joins `lost`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_task(
    env: &PlayEnv<'_, '_>,
    lost: &mut BTreeSet<String>,
    ctx: &TaskInContext<'_>,
    hosts: &[String],
    params: Option<Arc<Layer>>,
    callback: &mut dyn Callback,
    kind: RunKind,
    judge: &mut Judge<'_>,
) -> Result<(), Diagnostic> {
    let task = ctx.task;
    let Some(action) = Action::resolve_task(task) else {
        return Err(Diagnostic::at(
            format!("tack does not support the action '{}' yet", task.action),
            task.origin.clone(),
        ));
    };
    let view = if kind == RunKind::Continued {
        env.view(ctx)
    } else {
        env.banner(ctx, hosts.first(), params.clone())
    };
    // The first host's gathering comes before the banner; see `crate::vars::read_notes`.
    if !hosts.is_empty() && kind != RunKind::Continued {
        env.reads.show(callback);
    }
    if kind.handler().is_some() {
        callback.handler_start(&view);
    } else if !matches!(kind, RunKind::Continued | RunKind::Deferred) {
        callback.task_start(&view);
    }
    let mut banner_due = kind == RunKind::Deferred;
    let mut runner = env.runner(ctx, action, params);
    runner.banner_name = view.name.clone();
    if let Some(reasons) = kind.handler() {
        runner.plan_handler = reasons.cloned().filter(|_| runner.planning);
    }
    if callback.wants_params() {
        callback.task_params(&view, &crate::task::params::collect(&runner, hosts));
    }
    // `run_once`: the first host runs it; its result is every host's.
    let hosts = if kind.once() && !hosts.is_empty() {
        runner.fanout = env.hosts.iter().filter(|h| **h != hosts[0]).cloned().collect();
        &hosts[..1]
    } else {
        hosts
    };
    callback.task_hosts(hosts.len());
    if action.is("pause") {
        for host in hosts {
            for line in runner.announce(host) {
                callback.display(&line);
            }
        }
    }
    let throttle = match hosts.first().and_then(|host| runner.reading.scope(host)) {
        Some(scope) => env.throttle(ctx, &scope)?,
        None => 0,
    };
    let width = forks_width(env, action, throttle, hosts);
    // The hosts ansible would have queued at once, which their start events follow.
    let window = crate::play::forks::width(env.run.facts.forks, throttle, hosts.len());
    let ahead = if width < hosts.len() && action.touches_host() {
        let links = runner.task_links();
        hosts.iter().map(|h| links.unopened_link(h)).collect()
    } else {
        Vec::new()
    };
    let runner = &runner;
    // The host whose lines have begun (its read notes and the deferred banner are out).
    let mut begun: Option<String> = None;
    tack_links::pool::opening_ahead(ahead, width, || {
        crate::play::forks::run_hosts_streaming(
            hosts,
            (width, window),
            |host, sink| runner.run_live(host, Some(&|event, diff| sink((event, diff)))),
            |host, note| {
                let outcome = match note {
                    Note::Start => {
                        callback.host_start(&view, host, kind.handler().is_some());
                        return Ok(());
                    }
                    Note::Line((event, diff)) => {
                        if begun.as_deref() != Some(host) {
                            env.reads.before_result(hosts, host, callback);
                            begun = Some(host.to_string());
                        }
                        if banner_due {
                            callback.task_start(&view);
                            banner_due = false;
                        }
                        show_live(&view, &event, diff, callback);
                        return Ok(());
                    }
                    Note::Done(outcome) => outcome,
                };
                if begun.take().as_deref() != Some(host) {
                    env.reads.before_result(hosts, host, callback);
                }
                if outcome.result.lost() {
                    lost.insert(host.to_string());
                }
                if banner_due && outcome.has_lines() {
                    callback.task_start(&view);
                    banner_due = false;
                }
                outcome.show_events(&view, callback);
                env.note_role_ran(ctx, host, &outcome.result);
                judge(host, &outcome, callback)?;
                if banner_due {
                    callback.task_start(&view);
                    banner_due = false;
                }
                // A looped task's diffs went out with its items; ansible's strategy sends one
                // for the task's own result when `--diff` or the task's `diff` is on.
                let diff_on = env.run.facts.diff_mode || outcome.diff;
                if diff_on
                    && !outcome.has_items()
                    && tack_report::callback::diff::sent_for(&outcome.result)
                {
                    callback.file_diff(&view, &outcome.result);
                }
                callback.host_result(&view, &outcome.result);
                Ok(())
            },
        )
    })
}

/// Runs `ctx` on `host` alone, as the free strategy's one worker does (its result shown when
/// the strategy processes it).
pub(crate) fn run_one(
    env: &PlayEnv<'_, '_>,
    ctx: &TaskInContext<'_>,
    host: &str,
    params: Option<Arc<Layer>>,
) -> Result<TaskOutcome, Diagnostic> {
    Ok(runner_for(env, ctx, params)?.run(host))
}

/// The runner of `ctx` on its own (made on the play's thread; it runs on any), or the
/// refusal of an action tack has no way to run.
pub(crate) fn runner_for<'t>(
    env: &'t PlayEnv<'_, '_>,
    ctx: &'t TaskInContext<'t>,
    params: Option<Arc<Layer>>,
) -> Result<crate::task::TaskRun<'t>, Diagnostic> {
    let Some(action) = Action::of(ctx.task) else {
        return Err(Diagnostic::at(
            format!("tack does not support the action '{}' yet", ctx.task.action),
            ctx.task.origin.clone(),
        ));
    };
    Ok(env.runner(ctx, action, params))
}

/// How many hosts run the task at once: only what runs on the host is worth a thread
/// (controller actions are quick, and some, like `set_fact` in a loop, read what the
/// previous host's run wrote).
fn forks_width(env: &PlayEnv<'_, '_>, action: Action, throttle: i64, hosts: &[String]) -> usize {
    if hosts.len() <= 1 || !action.uses_link() {
        return 1;
    }
    crate::play::forks::width(env.run.facts.forks, throttle, hosts.len())
}
