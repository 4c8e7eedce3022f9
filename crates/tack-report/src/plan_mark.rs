//! What a plan could not know about a result (seed 003), and how a plan reads a result:
//! the marks the run puts on results it did not run for real, the outcome each result shows
//! as (`matched`, `would change`, `would run`, `deferred`, `ran`), the fields a change would
//! touch, and the results a plan gives in place of running a task.
//!
//! Deciding which task gets which mark is the run loop's (its plan gate); this module only
//! holds the marks and reads them.

use tack_yaml::{Mapping, Node, Value};

use crate::result::{HostResult, b, s};

/// The words a deferred outcome is shown with.
pub const DEFERRED: &str = "depends on output unavailable until apply";

/// What the plan could not know about a result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanMark {
    /// The task (or an item of it) would run: it was not run, so what it does is unknown.
    pub would_run: bool,
    /// The tasks whose unavailable output the task (or an item of it) read, sorted.
    pub deferred: Vec<String>,
    /// The task (or an item of it) ran for real: `check_mode: false` is the user's word that
    /// it is safe in a dry run, so its output is real and later tasks read it as such.
    pub ran: bool,
}

impl PlanMark {
    /// Whether the plan does not know what the task (or an item of it) does.
    pub fn unknown(&self) -> bool {
        self.would_run || !self.deferred.is_empty()
    }

    /// Whether `result` carries a mark of something the plan does not know.
    pub fn unknown_in(result: &HostResult) -> bool {
        result.plan.as_ref().is_some_and(PlanMark::unknown)
    }
}

/// A host's outcome for one task in a plan, as the transcript and `--format json` give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanOutcome {
    Matched,
    /// Check mode says it would change; `fields` are the keys its diff changes (empty when
    /// the module gives no diff). `deferred` names producers when some items were deferred.
    WouldChange {
        fields: Vec<String>,
        deferred: Vec<String>,
    },
    WouldRun {
        deferred: Vec<String>,
    },
    Deferred {
        producers: Vec<String>,
    },
    /// It ran for real (`check_mode: false`); `changed` is what it reported.
    Ran {
        changed: bool,
    },
    Skipped,
    Failed,
    Unreachable,
}

impl PlanOutcome {
    /// The outcome's name in `--format json`.
    pub fn name(&self) -> &'static str {
        match self {
            PlanOutcome::Matched => "matched",
            PlanOutcome::WouldChange { .. } => "would_change",
            PlanOutcome::WouldRun { .. } => "would_run",
            PlanOutcome::Deferred { .. } => "deferred",
            PlanOutcome::Ran { .. } => "ran",
            PlanOutcome::Skipped => "skipped",
            PlanOutcome::Failed => "failed",
            PlanOutcome::Unreachable => "unreachable",
        }
    }
}

/// How the plan reads a result.
pub fn outcome(result: &HostResult) -> PlanOutcome {
    use crate::result::Outcome;
    let mark = result.plan.clone().unwrap_or_default();
    match result.outcome() {
        Outcome::Failed => return PlanOutcome::Failed,
        Outcome::Unreachable => return PlanOutcome::Unreachable,
        _ => {}
    }
    if mark.ran && !mark.unknown() {
        return PlanOutcome::Ran { changed: result.flag("changed") };
    }
    if result.flag("changed") {
        return PlanOutcome::WouldChange {
            fields: changed_fields(result),
            deferred: mark.deferred,
        };
    }
    if mark.would_run {
        return PlanOutcome::WouldRun { deferred: mark.deferred };
    }
    if !mark.deferred.is_empty() {
        return PlanOutcome::Deferred { producers: mark.deferred };
    }
    if result.flag("skipped") { PlanOutcome::Skipped } else { PlanOutcome::Matched }
}

/// The fields a would-change result changes, from its diff (a loop's from its items'):
/// the keys whose before and after differ, `content` where the diff is of text.
pub fn changed_fields(result: &HostResult) -> Vec<String> {
    let mut fields = std::collections::BTreeSet::new();
    let mut from = |data: &Mapping| {
        let Some(diff) = data.get("diff") else { return };
        let diffs: Vec<&Node> = match &diff.value {
            Value::Seq(list) => list.iter().collect(),
            _ => vec![diff],
        };
        for diff in diffs {
            let Some(map) = diff.as_map() else { continue };
            match (map.get("before").map(|n| &n.value), map.get("after").map(|n| &n.value)) {
                (Some(Value::Map(before)), Some(Value::Map(after))) => {
                    for (key, _) in after.iter().chain(before.iter()) {
                        let was = before.get_value(&key.value).map(|n| &n.value);
                        if was != after.get_value(&key.value).map(|n| &n.value) {
                            fields.insert(tack_yaml::pyrepr::str(&key.value));
                        }
                    }
                }
                (Some(before), Some(after)) if before != after => {
                    fields.insert("content".to_string());
                }
                _ => {}
            }
        }
    };
    from(&result.data);
    if let Some(Value::Seq(items)) = result.data.get("results").map(|n| &n.value) {
        for item in items {
            if let Some(map) = item.as_map()
                && map.get("changed").is_some_and(|c| c.value.is_truthy())
            {
                from(map);
            }
        }
    }
    fields.into_iter().collect()
}

/// The result of a task that would run and did not.
pub fn would_run(host: &str) -> HostResult {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(false));
    data.insert(s("msg"), s("would run"));
    let mut result = HostResult::new(host, data);
    result.plan = Some(PlanMark { would_run: true, ..PlanMark::default() });
    result
}

/// The result of a task that read `producer`'s unavailable output.
pub fn deferred(host: &str, producer: &str) -> HostResult {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(false));
    data.insert(s("msg"), s(&format!("{DEFERRED} ({producer})")));
    let mut result = HostResult::new(host, data);
    result.plan = Some(PlanMark { deferred: vec![producer.to_string()], ..PlanMark::default() });
    result
}

/// A loop's mark from its items': it would run if any item would, and is deferred on every
/// producer any item was.
pub fn merge(items: &[HostResult]) -> Option<PlanMark> {
    let marks: Vec<&PlanMark> = items.iter().filter_map(|r| r.plan.as_ref()).collect();
    if marks.is_empty() {
        return None;
    }
    let mut deferred: Vec<String> = marks.iter().flat_map(|m| m.deferred.clone()).collect();
    deferred.sort();
    deferred.dedup();
    Some(PlanMark {
        would_run: marks.iter().any(|m| m.would_run),
        deferred,
        ran: marks.iter().any(|m| m.ran),
    })
}

/// The module result of a module that declined check mode: it did not run, so in a plan it
/// would run.
pub fn declined_check_mode(result: &HostResult) -> bool {
    result.flag("skipped")
        && result.data.get("msg").is_some_and(|m| {
            let text = tack_yaml::pyrepr::str(&m.value);
            text.ends_with("does not support check mode")
                || text.ends_with("does not support check mode.")
        })
}
