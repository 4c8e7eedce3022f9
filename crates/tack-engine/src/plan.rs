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

use crate::task::TaskRun;
use tack_actions::Action;
use tack_report::plan_mark::{PlanMark, PlanOutcome, deferred, outcome, would_run};
use tack_report::result::HostResult;

/// What the plan's gate says of a task for one host (or loop item).
pub(crate) struct Gate {
    /// The result the plan gives instead of running the task; `None` runs it in check mode.
    pub planned: Option<HostResult>,
    /// The paths on the host the task would change (see `crate::plan_pending`).
    pub writes: Vec<String>,
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
