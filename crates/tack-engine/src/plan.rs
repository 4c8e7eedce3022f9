//! `tack plan` (seed 003): a dry run that says what it cannot know. The run is a check-mode
//! run with one gate in front of every task and loop item on every host:
//!
//! - what reads the output of a task that did not run (its `when`, loop source, arguments,
//!   `delegate_to`, `changed_when`/`failed_when`/`until`) is *deferred*, naming that task;
//! - `command`, `shell`, `raw`, `script` and `pause`, and any module that declines check
//!   mode, *would run* and do not (a `check_mode: false` task is the user's word that it is
//!   safe: it runs, its outcome is `ran`, and its output is real);
//! - what edits or reads a path an earlier task would change is deferred on that task
//!   (`crate::plan_pending`);
//! - a notified handler is listed, never run: *would run* when a known change notified it,
//!   *deferred* when only a task whose outcome is unknown did.
//!
//! The output of a task that did not run is an unavailable binding (`Provenance::Unavailable`)
//! in the host's variables, which a real assignment replaces; the template layer reports
//! reads of one, even from a render that failed. Nothing here fabricates a value to make a
//! condition pass or fail: a condition decided without reading the unknown value (`false and
//! x`) stands.
//!
//! Owns the gate, the plan's marks on results and their reading (outcome, changed fields);
//! printing is the callbacks', counting the recap's.

use std::collections::BTreeMap;
use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use crate::actions::Action;
use crate::result::{HostResult, b, s};
use crate::task::TaskRun;

/// What the plan's gate says of a task for one host (or loop item).
pub(crate) struct Gate {
    /// The result the plan gives instead of running the task; `None` runs it in check mode.
    pub planned: Option<HostResult>,
    /// The paths on the host the task would change (see `crate::plan_pending`).
    pub writes: Vec<String>,
}

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
pub(crate) fn would_run(host: &str) -> HostResult {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(false));
    data.insert(s("msg"), s("would run"));
    let mut result = HostResult::new(host, data);
    result.plan = Some(PlanMark { would_run: true, ..PlanMark::default() });
    result
}

/// The result of a task that read `producer`'s unavailable output.
pub(crate) fn deferred(host: &str, producer: &str) -> HostResult {
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
pub(crate) fn merge(items: &[HostResult]) -> Option<PlanMark> {
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

/// What a task's `when` conditions say in a plan.
enum When {
    True,
    FalseOrBroken,
    /// A condition read the output of this task, which did not run.
    Unknown(String),
}

/// Why a handler is listed for each host at a flush: `None` when a known change notified
/// it, else the task whose unknown outcome did.
pub(crate) type HandlerReasons = BTreeMap<String, Option<String>>;

/// The module result of a module that declined check mode: it did not run, so in a plan it
/// would run.
pub(crate) fn declined_check_mode(result: &HostResult) -> bool {
    result.flag("skipped")
        && result.data.get("msg").is_some_and(|m| {
            let text = tack_yaml::pyrepr::str(&m.value);
            text.ends_with("does not support check mode")
                || text.ends_with("does not support check mode.")
        })
}

impl TaskRun<'_> {
    /// In a plan, marks a result of a task that really ran (its check mode is off) as such.
    pub(crate) fn plan_mark_ran(&self, scope: &Scope, result: &mut HostResult) {
        if self.planning
            && result.plan.is_none()
            && !result.flag("skipped")
            && !self.check_mode(scope)
        {
            result.plan = Some(PlanMark { ran: true, ..PlanMark::default() });
        }
    }

    /// The plan's gate for `host` in `scope` (a loop item's, when it loops): the result the
    /// plan gives instead of running the task, or `None` to run it in check mode (which
    /// skips it when its `when` is false, and reports its errors as ansible would).
    pub(crate) fn plan_gate(&self, host: &str, scope: &Scope) -> Result<Gate, Diagnostic> {
        let mut gate = Gate { planned: None, writes: Vec::new() };
        if !self.planning {
            return Ok(gate);
        }
        match self.when_known(scope) {
            When::Unknown(producer) => {
                gate.planned = Some(deferred(host, &producer));
                return Ok(gate);
            }
            // The check-mode run skips the task, or reports the condition's error.
            When::FalseOrBroken => return Ok(gate),
            When::True => {}
        }
        let mut rendered = None;
        let producer = self.unavailable_input(scope, &mut rendered).or_else(|| {
            // What acts on a path an earlier task would change depends on that change.
            let args = rendered.as_ref()?;
            let remote_src = matches!(self.action, Action::Fetch | Action::Module("slurp"))
                || args.get("remote_src").is_some_and(|n| n.value.is_truthy());
            let walks = self.action == Action::Module("find");
            let touched = crate::plan_pending::touched(args, remote_src);
            self.pending.producer(host, &touched, walks)
        });
        if let Some(args) = &rendered {
            gate.writes = crate::plan_pending::written(args);
        }
        if let Some(producer) = producer {
            gate.planned = Some(deferred(host, &producer));
            return Ok(gate);
        }
        if let Some(reasons) = &self.plan_handler {
            gate.planned = Some(match reasons.get(host) {
                Some(Some(producer)) => deferred(host, producer),
                _ => would_run(host),
            });
            return Ok(gate);
        }
        // What these do is only known by doing it; `pause` waits, or asks, and a plan does
        // neither.
        let known_only_at_apply = matches!(
            self.action,
            Action::Module("command" | "shell") | Action::Raw | Action::Script | Action::Pause
        );
        if known_only_at_apply && self.check_mode(scope) {
            gate.planned = Some(would_run(host));
        }
        Ok(gate)
    }

    /// The plan's gate for an `include_tasks`/`include_role` (or a `meta` task, with no
    /// `nodes`) on `host`: deferred when its `when`, its loop source or the names it includes
    /// (`nodes`) read the output of a task that did not run. An include's tasks are then not
    /// shown: which ones run is unknown until apply.
    pub(crate) fn plan_include_gate(
        &self,
        host: &str,
        scope: &Scope,
        nodes: &[(&'static str, Option<&Node>)],
    ) -> Option<HostResult> {
        if !self.planning {
            return None;
        }
        // With a loop, the `when` is each item's (read with the item, as a task's is).
        if self.ctx.task.loop_items.is_none()
            && let When::Unknown(producer) = self.when_known(scope)
        {
            return Some(deferred(host, &producer));
        }
        let read = self.ctx.task.loop_items.iter().chain(nodes.iter().filter_map(|(_, n)| *n));
        read.into_iter().find_map(|node| {
            let read = self.templar.static_provenance(node, scope);
            let producer = read.unavailable().next()?;
            Some(deferred(host, producer))
        })
    }

    /// After a host's (or loop item's) result in a plan: the paths of a task that would, or
    /// might, change them are pending for the tasks after it.
    pub(crate) fn plan_note(&self, host: &str, writes: &[String], result: &HostResult) {
        if !self.planning || writes.is_empty() {
            return;
        }
        let open = match outcome(result) {
            PlanOutcome::WouldChange { .. }
            | PlanOutcome::WouldRun { .. }
            | PlanOutcome::Deferred { .. } => true,
            PlanOutcome::Matched
            | PlanOutcome::Ran { .. }
            | PlanOutcome::Skipped
            | PlanOutcome::Failed
            | PlanOutcome::Unreachable => false,
        };
        if open {
            self.pending.record(host, writes.to_vec(), &self.banner_name);
        }
    }

    /// The `when` conditions in order, as they are evaluated (stopping at the first false
    /// one), in one pass: whether one read an unavailable value before it was decided.
    fn when_known(&self, scope: &Scope) -> When {
        for item in self.when_items() {
            match self.templar.evaluate_conditional(item, scope) {
                Ok(r) => {
                    if let Some(producer) = r.provenance.unavailable().next() {
                        return When::Unknown(producer.to_string());
                    }
                    if !r.value {
                        return When::FalseOrBroken;
                    }
                }
                Err(e) => {
                    return match e.unavailable.first() {
                        Some(producer) => When::Unknown(producer.to_string()),
                        None => When::FalseOrBroken,
                    };
                }
            }
        }
        When::True
    }

    fn when_items(&self) -> Vec<&Node> {
        let mut conditions: Vec<&Node> = self.ctx.extended(Keyword::When);
        conditions.reverse();
        conditions
            .into_iter()
            .flat_map(|cond| match &cond.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![cond],
            })
            .collect()
    }

    /// The producer of an unavailable value the task's input reads: its arguments (every
    /// name they refer to, and what their render reads through `vars[...]`/`hostvars[...]`),
    /// `delegate_to`, and `changed_when`/`failed_when`/`until` (apart from the task's own
    /// `register`, which they read once it ran).
    /// The rendered arguments are left in `rendered` when they render.
    fn unavailable_input(&self, scope: &Scope, rendered: &mut Option<Mapping>) -> Option<String> {
        let raw = self.action.raw_args();
        let mut args = Mapping::new();
        for (key, value) in self.ctx.task.args.iter() {
            if !raw.contains(&key.as_str().unwrap_or_default()) {
                args.insert(key.clone(), value.clone());
            }
        }
        let first =
            |set: &tack_template::ProvenanceSet| set.unavailable().next().map(str::to_string);
        let args = Node::bare(Value::Map(args));
        if let Some(p) = first(&self.templar.static_provenance(&args, scope)) {
            return Some(p);
        }
        match self.templar.render(&args, scope) {
            Ok(r) => {
                if let Some(p) = first(&r.provenance) {
                    return Some(p);
                }
                if let Value::Map(map) = r.value.value {
                    *rendered = Some(map);
                }
            }
            Err(e) => {
                if let Some(p) = e.unavailable.first() {
                    return Some(p.to_string());
                }
            }
        }
        if let Some(p) = self.unavailable_raw_args(scope) {
            return Some(p);
        }
        if let Some(node) = &self.ctx.task.delegate_to
            && let Some(p) = first(&self.templar.static_provenance(node, scope))
        {
            return Some(p);
        }
        let register =
            self.ctx.task.attrs.get(Keyword::Register).map(|n| tack_yaml::pyrepr::str(&n.value));
        let judged = match &register {
            Some(name) => scope.with_var(name, Node::bare(Value::Null), Provenance::Trusted),
            None => scope.clone(),
        };
        // These are bare expressions (conditions), so each is read as the `{{ ... }}` it
        // stands for: every name it refers to counts, whether or not evaluation would reach it.
        for keyword in [Keyword::ChangedWhen, Keyword::FailedWhen, Keyword::Until] {
            let Some(node) = self.ctx.task.attrs.get(keyword) else { continue };
            let conditions: Vec<&Node> = match &node.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![node],
            };
            for condition in conditions {
                let expression = match &condition.value {
                    Value::Str(text) if !text.contains("{{") => {
                        Node::bare(Value::Str(format!("{{{{ {text} }}}}")))
                    }
                    _ => condition.clone(),
                };
                if let Some(p) = first(&self.templar.static_provenance(&expression, &judged)) {
                    return Some(p);
                }
            }
        }
        None
    }

    /// The producer of an unavailable value read by an argument the action evaluates itself
    /// (`assert`'s `that` conditions, in order and stopping at the first false one as
    /// `assert` does; `debug`'s `var` expression).
    fn unavailable_raw_args(&self, scope: &Scope) -> Option<String> {
        let args = &self.ctx.task.args;
        match self.action {
            Action::Assert => {
                let that = args.get("that")?;
                let conditions: Vec<&Node> = match &that.value {
                    Value::Seq(items) => items.iter().collect(),
                    _ => vec![that],
                };
                for condition in conditions {
                    match self.templar.evaluate_conditional(condition, scope) {
                        Ok(r) => {
                            if let Some(p) = r.provenance.unavailable().next() {
                                return Some(p.to_string());
                            }
                            if !r.value {
                                return None;
                            }
                        }
                        Err(e) => return e.unavailable.first().map(|p| p.to_string()),
                    }
                }
                None
            }
            Action::Debug => {
                let var = args.get("var")?;
                let expr = tack_yaml::pyrepr::str(&var.value);
                let template = Node::bare(Value::Str(format!("{{{{ {expr} }}}}")));
                match self.templar.render(&template, scope) {
                    Ok(r) => r.provenance.unavailable().next().map(str::to_string),
                    Err(e) => e.unavailable.first().map(|p| p.to_string()),
                }
            }
            _ => None,
        }
    }

    /// After a task ran (or did not) in a plan: what its `register` and `set_fact` leave
    /// for later tasks. A task that did not run leaves unavailable values under its name,
    /// so no earlier value stands in for its output.
    pub(crate) fn plan_leaves(&self, host: &str, result: &HostResult) {
        if !self.planning || !PlanMark::unknown_in(result) {
            return;
        }
        let unknown = Provenance::Unavailable { producer: Arc::from(self.banner_name.as_str()) };
        if self.action == Action::SetFact {
            for (key, _) in self.ctx.task.args.iter() {
                let name = tack_yaml::pyrepr::str(&key.value);
                if name == "cacheable" {
                    continue;
                }
                for target in std::iter::once(host).chain(self.fanout.iter().map(String::as_str)) {
                    self.vars.set_host_var(target, &name, Node::bare(Value::Null), unknown.clone());
                }
            }
        }
    }

    /// The provenance a plan's `register` stores a result with: unavailable when the task
    /// (or an item of it) did not run.
    pub(crate) fn plan_register_provenance(&self, result: &HostResult) -> Option<Provenance> {
        (self.planning && PlanMark::unknown_in(result))
            .then(|| Provenance::Unavailable { producer: Arc::from(self.banner_name.as_str()) })
    }
}
