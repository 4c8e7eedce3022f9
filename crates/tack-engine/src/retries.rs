//! `until` / `retries` / `delay`: the attempt loop around one run of a task's action (per loop
//! item when the task loops), as ansible's `TaskExecutor._execute` runs it. It owns the
//! `attempts`/`retries` result keys and the retry events the callback shows as
//! `FAILED - RETRYING` lines; it must not print or register anything itself.
//!
//! ansible's rules, kept here because they surprise: `retries` counts the runs after the
//! first (3 by default when only `until` is set); without `until` a run is good when it did not
//! fail; a negative `delay` means one second; and when every run was bad the result is failed
//! with `attempts` one less than the number of runs.

use std::time::Duration;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::{Provenance, Scope};
use tack_yaml::{Node, Value};

use crate::task::{TaskEvent, TaskRun};
use tack_report::result::{HostResult, b};

/// How many runs a task gets and how long to wait between them.
struct Plan {
    runs: i64,
    delay: Duration,
}

impl TaskRun<'_> {
    pub(crate) fn int_keyword(
        &self,
        keyword: Keyword,
        scope: &Scope,
    ) -> Result<Option<i64>, Diagnostic> {
        let Some(node) = self.ctx.task.attrs.get(keyword) else { return Ok(None) };
        let rendered = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        let value = match &rendered.value.value {
            Value::Int(i) => Some(*i),
            Value::Null => None,
            Value::Bool(v) => Some(i64::from(*v)),
            Value::Float(f) => Some(*f as i64),
            Value::Str(text) => tack_py::num::int(text.trim()).ok(),
            _ => None,
        };
        match value {
            Some(v) => Ok(Some(v)),
            None if rendered.value.value == Value::Null => Ok(None),
            None => Err(Diagnostic::at(
                format!(
                    "The field '{}' has an invalid value, which includes an undefined variable.",
                    keyword.as_str()
                ),
                node.origin.clone(),
            )),
        }
    }

    fn plan(&self, scope: &Scope) -> Result<Plan, Diagnostic> {
        let until = self.ctx.task.attrs.get(Keyword::Until).is_some();
        let runs = match self.int_keyword(Keyword::Retries, scope)? {
            Some(retries) => 1 + retries.max(0),
            None if until => 4,
            None => 1,
        };
        let delay = self.int_keyword(Keyword::Delay, scope)?.unwrap_or(5);
        let delay = if delay < 0 { 1 } else { delay };
        Ok(Plan { runs, delay: Duration::from_secs(delay.unsigned_abs()) })
    }

    /// `scope` with `result` under the task's `register` name (what `until` and
    /// `loop_control.break_when` judge).
    pub(crate) fn with_registered(&self, scope: &Scope, result: &HostResult) -> Scope {
        match self.ctx.task.attrs.get(Keyword::Register) {
            Some(node) => scope.with_var(
                &tack_yaml::pyrepr::str(&node.value),
                Node::bare(Value::Map(result.data.clone())),
                Provenance::ManagedHost,
            ),
            None => scope.clone(),
        }
    }

    /// Runs the action until its `until` holds (or it stops failing), at most `retries + 1`
    /// times; each bad run but the last is pushed to `events` as a retry.
    pub(crate) fn attempts(
        &self,
        host: &str,
        scope: &Scope,
        trace: &std::sync::Arc<tack_links::Trace>,
        events: &mut Vec<TaskEvent>,
    ) -> Result<HostResult, Diagnostic> {
        let plan = self.plan(scope)?;
        if plan.runs <= 1 {
            let output = self.execute(host, scope, trace, events);
            return Ok(self.judge(host, scope, output, None, true));
        }
        let mut last = None;
        for attempt in 1..=plan.runs {
            let output = self.execute(host, scope, trace, events);
            // An action that raised is not run again (ansible's exceptions leave the loop).
            if output.raised {
                return Ok(self.judge(host, scope, output, None, false));
            }
            let facts = (output.facts.clone(), output.included.clone());
            // `until` sees what this run set (not the next run's arguments: ansible's task
            // variables are only updated for the conditionals).
            let mut judged = scope.clone();
            for (name, value, provenance) in &facts.0 {
                judged = judged.with_var(name, value.clone(), provenance.clone());
            }
            let mut result = self.judge(host, &judged, output, Some(attempt), false);
            if self.good(&judged, &result)? {
                if !result.flag("failed") {
                    self.apply_facts(&self.fact_host(host, scope), &facts.0, &facts.1);
                }
                return Ok(result);
            }
            if attempt < plan.runs {
                result.data.insert(tack_report::result::s("retries"), int(plan.runs));
                result.data.insert(tack_report::result::s("attempts"), int(attempt + 1));
                events.push(TaskEvent::Retry(result));
                std::thread::sleep(plan.delay);
            } else {
                last = Some(result);
            }
        }
        // `runs` is at least 2 here, so the loop ran and kept its last result.
        let mut result = last.unwrap_or_else(|| HostResult::new(host, Default::default()));
        result.data.insert(tack_report::result::s("attempts"), int(plan.runs - 1));
        result.data.insert(tack_report::result::s("failed"), b(true));
        Ok(result)
    }

    /// `until`, seeing the result under its `register` name; without `until`, not failed.
    fn good(&self, scope: &Scope, result: &HostResult) -> Result<bool, Diagnostic> {
        let Some(until) = self.ctx.task.attrs.get(Keyword::Until) else {
            return Ok(!result.flag("failed"));
        };
        let scope = self.with_registered(scope, result);
        let items: Vec<&Node> = match &until.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![until],
        };
        for item in items {
            let r = self.templar.evaluate_conditional(item, &scope).map_err(|e| {
                let cause = Diagnostic::at(
                    format!("An 'until' expression failed: {}", e.message),
                    e.origin.clone().or_else(|| item.origin.clone()),
                );
                Diagnostic::caused_by("Task failed.", self.ctx.task.origin.clone(), cause)
            })?;
            if !r.value {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

fn int(value: i64) -> Node {
    Node::bare(Value::Int(value))
}
