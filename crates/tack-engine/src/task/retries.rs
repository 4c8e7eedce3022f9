//! `until` / `retries` / `delay`: how many runs of a task's action (per loop item when the
//! task loops) ansible's `TaskExecutor._execute` allows and which run is good. The attempt
//! loop itself is the task's (`crate::task`), which shows each bad run but the last as a
//! `FAILED - RETRYING` line.
//!
//! ansible's rules, kept here because they surprise: `retries` counts the runs after the
//! first (3 by default when only `until` is set); without `until` a run is good when it did not
//! fail; a negative `delay` means one second; and when every run was bad the result is failed
//! with `attempts` one less than the number of runs.

use std::time::Duration;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::Scope;
use tack_yaml::{Node, Value};

use tack_report::result::HostResult;

use crate::task::reading::Reading;

/// How many runs a task gets and how long to wait between them.
pub(crate) struct Attempts {
    pub runs: i64,
    pub delay: Duration,
}

/// The task's `retries` and `delay` rendered in `scope`.
pub(crate) fn attempts(task: &Reading<'_>, scope: &Scope) -> Result<Attempts, Diagnostic> {
    let until = task.ctx.task.attrs.get(Keyword::Until).is_some();
    let runs = match task.int_keyword(Keyword::Retries, scope)? {
        Some(retries) => 1 + retries.max(0),
        None if until => 4,
        None => 1,
    };
    let delay = task.int_keyword(Keyword::Delay, scope)?.unwrap_or(5);
    let delay = if delay < 0 { 1 } else { delay };
    Ok(Attempts { runs, delay: Duration::from_secs(delay.unsigned_abs()) })
}

/// Whether a run is good: `until`, seeing the result under its `register` name; without
/// `until`, not failed.
pub(crate) fn good(
    task: &Reading<'_>,
    scope: &Scope,
    result: &HostResult,
) -> Result<bool, Diagnostic> {
    let Some(until) = task.ctx.task.attrs.get(Keyword::Until) else {
        return Ok(!result.flag("failed"));
    };
    let scope = task.with_registered(scope, &result.data);
    let items: Vec<&Node> = match &until.value {
        Value::Seq(items) => items.iter().collect(),
        _ => vec![until],
    };
    for item in items {
        let r = task.templar.evaluate_conditional(item, &scope).map_err(|e| {
            let cause = Diagnostic::caused_by(
                "An 'until' expression failed.",
                e.origin.clone().or_else(|| item.origin.clone()),
                e.to_diagnostic(),
            );
            Diagnostic::caused_by("Task failed.", task.origin(), cause)
        })?;
        if !r.value {
            return Ok(false);
        }
    }
    Ok(true)
}
