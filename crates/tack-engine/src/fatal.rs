//! What the `linear` strategy does after a task's results are in, beyond each host's own
//! result: `any_errors_fatal` and `run_once` failing every other host of the batch (each
//! going to its rescue if it is in one), and `max_fail_percentage` ending the play.
//! Also reads the task's `run_once` and `any_errors_fatal` once per round, as ansible
//! renders them for the first host.
//!
//! Moves hosts only through the play's [`Walk`]; prints only the `NO MORE HOSTS LEFT`
//! banner.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_yaml::Value;

use crate::iterator::HostCursor;
use crate::play::PlayRun;
use crate::segments::{Round, Walk};
use tack_actions::Action;
use tack_report::callback::Callback;
use tack_report::result::HostResult;

/// The task keywords the strategy reads once for the round.
pub(crate) struct Controls {
    pub run_once: bool,
    pub any_errors_fatal: bool,
    /// The task's `ignore_errors` (ansible tests it on every result, failed or not).
    pub ignore: bool,
}

/// What the strategy needs of one host's result.
pub(crate) struct RoundResult {
    pub host: String,
    /// Failed, ignored or not (ansible's `failed_hosts` list counts ignored failures).
    pub failed: bool,
    /// Unreachable, not ignored (it arms `any_errors_fatal` as a failure does).
    pub unreachable: bool,
    pub ignore_errors: bool,
}

impl RoundResult {
    pub fn of(host: &str, result: &HostResult, task_ignores: bool) -> RoundResult {
        RoundResult {
            host: host.to_string(),
            failed: result.flag("failed"),
            unreachable: result.lost(),
            ignore_errors: result.ignored || task_ignores,
        }
    }
}

impl PlayRun<'_, '_> {
    /// `run_once`, `any_errors_fatal` and `ignore_errors` rendered for the first host of the
    /// round.
    pub(crate) fn task_controls(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<std::sync::Arc<tack_template::Layer>>,
    ) -> Result<Controls, Diagnostic> {
        let none = Controls { run_once: false, any_errors_fatal: false, ignore: false };
        let Some(first) = hosts.first() else { return Ok(none) };
        let Some(action) = Action::find(&ctx.task.action) else { return Ok(none) };
        let runner = self.runner(ctx, action, params);
        let Some(scope) = runner.scope(first) else { return Ok(none) };
        // `throttle` caps how many hosts run the task at once (`forks`); an invalid one fails
        // here, before the task's banner, as in ansible.
        self.throttle(ctx, &scope)?;
        Ok(Controls {
            run_once: runner.flag(Keyword::RunOnce, &scope)?,
            any_errors_fatal: runner.flag(Keyword::AnyErrorsFatal, &scope)?,
            ignore: runner.flag(Keyword::IgnoreErrors, &scope).unwrap_or(false),
        })
    }

    /// `int(throttle)` rendered, with ansible's error when it is not a number.
    pub(crate) fn throttle(
        &self,
        ctx: &TaskInContext<'_>,
        scope: &tack_template::Scope,
    ) -> Result<i64, Diagnostic> {
        let Some(node) = ctx.inherited(Keyword::Throttle) else { return Ok(0) };
        let rendered = self.run.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        let value = match &rendered.value.value {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            Value::Float(f) if f.is_finite() => Some(f.trunc() as i64),
            Value::Str(s) | Value::Unsafe(s) => tack_py::num::int(s).ok(),
            _ => None,
        };
        value.ok_or_else(|| {
            Diagnostic::at(
                "Failed to convert the throttle value to an integer.",
                node.origin.clone(),
            )
        })
    }

    /// Fails `host` where it stands without a result of its own (ansible's
    /// `mark_host_failed`): into the rescue of the block it is in, else out of the play. A
    /// host that just ran the round's task still stands in that task's block (ansible's
    /// iterator moves on to the next block only when asked for the next task).
    fn force_fail(&self, host: &str, round: &Round, walk: &mut Walk<'_>) {
        self.fail_where_it_stands(host, round, walk, false);
    }

    /// [`force_fail`](Self::force_fail), into a rescue around the host's position unless
    /// `past_rescue` (ansible's removed hosts, which run `always` sections but no rescue).
    fn fail_where_it_stands(
        &self,
        host: &str,
        round: &Round,
        walk: &mut Walk<'_>,
        past_rescue: bool,
    ) {
        // A host that failed before the play is not in the walk and stays as it is.
        if walk.cursor(host).is_none() {
            return;
        }
        self.forced.borrow_mut().insert(host.to_string());
        if !walk.is_running(host) {
            return;
        }
        let at = if round.hosts.iter().any(|h| h == host) {
            Some((round.seg, round.next))
        } else {
            walk.at(host)
        };
        match at {
            Some((seg, next)) if past_rescue => walk.fail_past_rescue(host, seg, next),
            Some((seg, next)) => walk.advance(host, seg, next, true),
            None => {}
        }
    }

    /// The checks ansible's linear strategy makes once a round's results are in; `true`
    /// when the play must stop (`max_fail_percentage` was passed).
    pub(crate) fn after_round(
        &self,
        controls: &Controls,
        results: &[RoundResult],
        round: &Round,
        walk: &mut Walk<'_>,
        callback: &mut dyn Callback,
    ) -> bool {
        // Unreachable hosts leave the play where they stand: no rescue, no always.
        let lost = self.lost.borrow().clone();
        for host in &lost {
            walk.finish(host);
        }
        let failed: Vec<&str> =
            results.iter().filter(|r| r.failed).map(|r| r.host.as_str()).collect();
        // As in ansible, any result not ignoring errors arms the check, and any failed or
        // unreachable result (even an ignored failure) fires it.
        let armed = (controls.any_errors_fatal || controls.run_once)
            && results.iter().any(|r| !r.ignore_errors);
        if armed && (!failed.is_empty() || results.iter().any(|r| r.unreachable)) {
            // A failed `run_once` result fails every other host: ansible marks them failed and
            // leaves them among its removed hosts, which run `always` sections but no rescue
            // (only the host that ran it may be rescued).
            let remove = controls.run_once && !controls.any_errors_fatal;
            for host in self.hosts.clone() {
                if failed.contains(&host.as_str()) || lost.contains(&host) {
                    continue;
                }
                self.fail_where_it_stands(&host, round, walk, remove);
            }
        }
        let Some(fraction) = self.max_fail else { return false };
        if results.is_empty() {
            return false;
        }
        let forced = self.forced.borrow().clone();
        let count = self
            .hosts
            .iter()
            .filter(|h| forced.contains(*h) || walk.cursor(h).is_some_and(|c| c.failed))
            .count();
        if !crate::batches::over_max_fail(count, self.hosts.len(), fraction) {
            return false;
        }
        for host in self.hosts.clone() {
            if !failed.contains(&host.as_str()) {
                self.force_fail(&host, round, walk);
            }
        }
        // ansible sends the banner when the percentage is passed, and again when it then
        // finds every host failed.
        callback.no_hosts_remaining();
        callback.no_hosts_remaining();
        true
    }

    /// The same checks after a handler ran in a flush (the hosts then are only positions: a
    /// host failed there leaves the play, as a failed handler does). `true` when the play
    /// must stop.
    pub(crate) fn after_handler(
        &self,
        controls: &Controls,
        results: &[RoundResult],
        cursors: &mut [(String, HostCursor)],
        callback: &mut dyn Callback,
    ) -> bool {
        if self.free {
            return false;
        }
        let failed: Vec<&str> =
            results.iter().filter(|r| r.failed).map(|r| r.host.as_str()).collect();
        let fail_others = |forced: &mut std::collections::BTreeSet<String>,
                           cursors: &mut [(String, HostCursor)]| {
            for (host, cursor) in cursors.iter_mut() {
                if !failed.contains(&host.as_str()) {
                    forced.insert(host.clone());
                    if !cursor.failed {
                        cursor.pos = None;
                        cursor.failed = true;
                    }
                }
            }
        };
        let armed = (controls.any_errors_fatal || controls.run_once)
            && results.iter().any(|r| !r.ignore_errors);
        if armed && !failed.is_empty() {
            fail_others(&mut self.forced.borrow_mut(), cursors);
        }
        let Some(fraction) = self.max_fail else { return false };
        if results.is_empty() {
            return false;
        }
        let count = {
            let forced = self.forced.borrow();
            self.hosts
                .iter()
                .filter(|h| {
                    forced.contains(*h) || cursors.iter().any(|(c, cur)| c == *h && cur.failed)
                })
                .count()
        };
        if !crate::batches::over_max_fail(count, self.hosts.len(), fraction) {
            return false;
        }
        fail_others(&mut self.forced.borrow_mut(), cursors);
        callback.no_hosts_remaining();
        callback.no_hosts_remaining();
        self.stopped.set(true);
        true
    }
}
