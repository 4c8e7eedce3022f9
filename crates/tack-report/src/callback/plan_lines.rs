//! `tack plan`'s transcript on the default callback: each host's line in the plan's words
//! (`matched`, `would change` with the fields, `would run`, `deferred` naming the task whose
//! output is unavailable, `ran` / `ran, changed` for a `check_mode: false` task that really
//! ran) and the line after the recap that says whether the plan is
//! complete. Skips, failures and unreachable hosts are shown as a run shows them.

use std::io::Write;

use super::Stats;
use super::TaskView;
use super::color::Hue;
use super::default::DefaultCallback;
use crate::plan_mark::{DEFERRED, PlanOutcome};
use crate::result::HostResult;

/// `(from "a", "b")`: the tasks whose output was unavailable.
fn producers(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("{DEFERRED} (from {})", quoted.join(", "))
}

impl<W: Write> DefaultCallback<W> {
    /// Shows `result` (a loop item's, when `item` is its label) in the plan's words; false
    /// for an outcome a run's words already say (skipped, failed, unreachable).
    pub(super) fn plan_result(
        &mut self,
        task: &TaskView,
        result: &HostResult,
        item: Option<&str>,
    ) -> bool {
        let outcome = crate::plan_mark::outcome(result);
        let (word, hue, mut tail) = match &outcome {
            PlanOutcome::Matched => ("matched", Hue::Ok, String::new()),
            PlanOutcome::WouldChange { fields, .. } if fields.is_empty() => {
                ("would change", Hue::Changed, String::new())
            }
            PlanOutcome::WouldChange { fields, .. } => {
                ("would change", Hue::Changed, format!(" ({})", fields.join(", ")))
            }
            PlanOutcome::WouldRun { .. } => ("would run", Hue::Changed, String::new()),
            PlanOutcome::Ran { changed: false } => ("ran", Hue::Ok, String::new()),
            PlanOutcome::Ran { changed: true } => ("ran, changed", Hue::Changed, String::new()),
            PlanOutcome::Deferred { producers: names } => {
                ("deferred", Hue::Skip, format!(": {}", producers(names)))
            }
            PlanOutcome::Skipped | PlanOutcome::Failed | PlanOutcome::Unreachable => return false,
        };
        if let PlanOutcome::WouldChange { deferred, .. } | PlanOutcome::WouldRun { deferred } =
            &outcome
            && !deferred.is_empty()
        {
            tail.push_str(&format!("; partly deferred: {}", producers(deferred)));
        }
        // A loop's items said what it does; its own line is only for what no item said.
        let items_shown = task.looped && result.data.get("results").is_some();
        if item.is_none() && items_shown {
            return true;
        }
        let host = result.label();
        let mut msg = match item {
            Some(label) => format!("{word}: [{host}] => (item={label}){tail}"),
            None => format!("{word}: [{host}]{tail}"),
        };
        if self.verbose(result) {
            let data = super::default::clean(task, result, &crate::no_log::shown(result));
            msg.push_str(&format!(" => {}", self.dump(&data, result)));
        }
        self.colored(&msg, hue);
        true
    }

    /// After the recap: whether the plan knows every outcome.
    pub(super) fn plan_end(&mut self, stats: &Stats) {
        match stats.deferred() {
            0 => self.line("Plan complete: every outcome above is known."),
            n => self.line(&format!(
                "Plan incomplete: {n} outcome{} {} on output unavailable until apply.",
                if n == 1 { "" } else { "s" },
                if n == 1 { "depends" } else { "depend" },
            )),
        }
        self.line("");
    }
}
