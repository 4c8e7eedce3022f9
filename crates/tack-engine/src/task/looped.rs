//! A looped task on one host (`TaskRun::run_loop`): the items read once, then each in turn
//! with its own scope, plan gate, `when`, delegation, attempts and recorded deprecations,
//! folded into the loop's result (`crate::task::items::aggregate`). Split from `mod.rs`, the
//! runner, which calls it; the item's own rules live in `items`, `loop_control` and `when`.

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_links::Trace;
use tack_playbook::tables::Keyword;
use tack_report::result::{HostResult, b, s};
use tack_template::Scope;
use tack_yaml::{Mapping, Node};

use tack_actions as actions;

use super::TaskRun;
use super::label::LabelAt;
use super::outcome::{Shown, TaskEvent};

impl TaskRun<'_> {
    pub(super) fn run_loop(
        &self,
        host: &str,
        scope: &Scope,
        trace: &Arc<Trace>,
        source: &Node,
        shown: &mut Shown<'_>,
    ) -> Result<(HostResult, bool), Diagnostic> {
        let templar = self.reading.templar;
        // Without items, what needs none decides.
        let static_ignore = || self.reading.flag(Keyword::IgnoreErrors, scope).unwrap_or(false);
        // A plan does not loop over a list it cannot know yet.
        if self.planning
            && let Some(producer) = templar.static_provenance(source, scope).unavailable().next()
        {
            let deferred = tack_report::plan_mark::deferred(host, producer);
            return Ok((deferred, static_ignore()));
        }
        let found = crate::task::items::items_with_trust(&self.reading, source, scope);
        let (list, read, trust) = match found {
            Ok(found) => found,
            Err(failed) => {
                let ctx = self.reading.ctx;
                let cond = crate::task::items::when_before_loop_error(ctx, templar, scope, failed)?;
                let mut skipped = tack_report::result::skipped(host, &cond);
                skipped.data.insert(s("failed"), b(false));
                return Ok((skipped, static_ignore()));
            }
        };
        if self.planning
            && let Some(producer) = read.unavailable().next()
        {
            let deferred = tack_report::plan_mark::deferred(host, producer);
            return Ok((deferred, static_ignore()));
        }
        let control = crate::task::loop_control::LoopControl::read(&self.reading, scope)?;
        if list.is_empty() {
            return Ok((crate::task::items::no_items(host), static_ignore()));
        }
        let mut any_ignored = false;
        let mut any_unreachable_ignored = false;
        let gate = self.plan_gate();
        let delegation = self.delegation();
        let mut results = Vec::new();
        let reads_task = self.reading.reads_task_state();
        for (index, item) in list.iter().enumerate() {
            control.pause_before(index);
            // Each item sees what earlier items set (`set_fact` in a loop accumulates).
            let scope = &self.reading.scope(host).unwrap_or_else(|| scope.clone());
            let item_scope = control.item_scope(scope, &list, index, &read, &trust);
            let item_scope = self.reading.with_earlier_items(&item_scope, &results, reads_task);
            let mut retries = Vec::new();
            // Each item's result keeps the deprecations raised while it ran.
            let (ran, raised) = tack_diag::recording_deprecations(|| {
                let delegated = delegation.delegated(host, &item_scope);
                if delegation.gathers_delegated(host, &item_scope, &delegated) {
                    shown.extend(
                        self.reads.lines().iter().map(|(v, l)| TaskEvent::Transport(*v, l.clone())),
                    );
                }
                let delegated = delegated?;
                let verdict = gate.gate(host, Some(index), &item_scope)?;
                let planned = verdict.planned;
                let condition = match planned {
                    Some(_) => None,
                    None => self.false_condition(&item_scope)?,
                };
                // The scope of the host the item connects to, made once for the check and
                // the run.
                let connected = match (&planned, &condition, &delegated) {
                    (None, None, Some(other)) => {
                        Some(delegation.delegated_scope(&item_scope, host, other))
                    }
                    _ => None,
                };
                let connected = connected.as_ref().unwrap_or(&item_scope);
                // The connection's variables (converted before the task's own keywords, as
                // ansible's play context is), then `diff`.
                let keyword_error = match (&planned, &condition) {
                    (None, None) => self
                        .reading
                        .connection_variables(connected, delegated.as_deref())
                        .err()
                        .or_else(|| self.reading.diff_mode(&item_scope, self.diff_flag).err()),
                    _ => None,
                };
                let failed_keyword = keyword_error.is_some();
                let result = match (planned, condition) {
                    (Some(planned), _) => match self.refused_unrun(&planned, &item_scope) {
                        Some(refused) => self.judge(host, &item_scope, refused, None, true),
                        None => planned,
                    },
                    (None, Some(cond)) => tack_report::result::skipped(host, &cond),
                    (None, None) if let Some(d) = keyword_error => {
                        self.judge(host, &item_scope, actions::errored(d), None, true)
                    }
                    (None, None) => {
                        self.attempts(host, Some(index), connected, trace, &mut retries)?
                    }
                };
                self.report_setting_deprecations(host, &item_scope);
                Ok::<_, Diagnostic>((delegated, verdict.writes, failed_keyword, result))
            });
            let (delegated, writes, failed_keyword, mut result) = ran?;
            result.add_raised_deprecations(raised);
            gate.mark_ran(&item_scope, &mut result);
            gate.note(host, &writes, &result);
            // A value that cannot be rendered for an item does not ignore it, nor does an
            // item its `when` skipped (ansible renders the keyword only for one that runs).
            if failed_keyword {
                any_ignored |= self.literal_ignore_errors();
            } else if !result.flag("skipped") {
                any_ignored |=
                    self.reading.flag(Keyword::IgnoreErrors, &item_scope).unwrap_or(false);
            }
            let loop_keys = |data: &mut Mapping| control.result_keys(data, &list, index);
            loop_keys(&mut result.data);
            result.trusted_values = control.trusted_in_result(index, &read, &trust);
            result.no_log |= self.reading.no_log(&item_scope);
            result.delegated = delegated.map(|o| delegation.delegated_label(&o));
            for retry in retries {
                match retry {
                    TaskEvent::Retry(mut r) => {
                        loop_keys(&mut r.data);
                        r.no_log = result.no_log;
                        r.delegated = result.delegated.clone();
                        shown.push(TaskEvent::Retry(r));
                    }
                    note @ (TaskEvent::Async(_) | TaskEvent::Transport(..)) => shown.push(note),
                    TaskEvent::Item(_) => {}
                }
            }
            // An item whose host could not be reached has no `failed`; its own
            // `ignore_unreachable` counts for the loop (ansible's: any item's).
            if result.flag("unreachable") {
                if !result.flag("failed") {
                    result.data.remove("failed");
                }
                any_unreachable_ignored |=
                    self.reading.flag(Keyword::IgnoreUnreachable, &item_scope).unwrap_or(false);
            } else if result.data.get("failed").is_none() {
                result.data.insert(s("failed"), b(false));
            }
            result.item_label = Some(match &control.label {
                Some(label) => {
                    let at = LabelAt { item, scope: &item_scope };
                    self.item_label(label, &at, &mut result)
                }
                None => item.clone(),
            });
            if control.label.is_some() {
                result.data.insert(
                    s("_ansible_item_label"),
                    result.item_label.clone().unwrap_or_else(|| item.clone()),
                );
            }
            let broke = control.break_here(&self.reading, &item_scope, &mut result);
            shown.push(TaskEvent::Item(result.clone()));
            result.data.remove("_ansible_item_label");
            results.push(result);
            if broke {
                break;
            }
        }
        let mut looped = crate::task::items::aggregate(host, results);
        looped.ignore_unreachable = any_unreachable_ignored;
        Ok((looped, any_ignored))
    }
}
