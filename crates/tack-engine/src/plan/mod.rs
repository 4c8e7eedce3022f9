//! `tack plan` (seed 003): a dry run that says what it cannot know. The run is a check-mode
//! run with one gate in front of every task and loop item on every host:
//!
//! - what reads the output of a task that did not run (its `when`, loop source, arguments,
//!   `delegate_to`, `changed_when`/`failed_when`/`until`) is *deferred*, naming that task;
//! - `command`, `shell`, `raw`, `script` and `pause`, and any module that declines check
//!   mode, *would run* and do not (a `check_mode: false` task is the user's word that it is
//!   safe: it runs, its outcome is `ran`, and its output is real);
//! - what edits or reads a path an earlier task would change is deferred on that task
//!   (`crate::plan::pending`);
//! - a notified handler is listed, never run: *would run* when a known change notified it,
//!   *deferred* when only a task whose outcome is unknown did.
//!
//! The output of a task that did not run is an unavailable binding (`Provenance::Unavailable`)
//! in the host's variables, which a real assignment replaces; the template layer reports
//! reads of one, even from a render that failed. Nothing here fabricates a value to make a
//! condition pass or fail: a condition decided without reading the unknown value (`false and
//! x`) stands.
//!
//! Owns the gate and what it leaves for later tasks; the marks on results and their reading
//! are `tack_report::plan_mark`'s, printing is the callbacks', counting the recap's.

pub(crate) mod pending;

use std::collections::BTreeMap;
use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use tack_actions::{Action, InPlan};
use tack_report::plan_mark::{PlanMark, PlanOutcome, deferred, outcome, would_run};
use tack_report::result::HostResult;

use crate::task::args::Renders;
use crate::task::reading::Reading;
use crate::task::when::When;

/// What the plan's gate says of a task for one host (or loop item).
pub(crate) struct Gate {
    /// The result the plan gives instead of running the task; `None` runs it in check mode.
    pub planned: Option<HostResult>,
    /// The paths on the host the task would change (see `crate::plan::pending`).
    pub writes: Vec<String>,
}

/// Why a handler is listed for each host at a flush: `None` when a known change notified
/// it, else the task whose unknown outcome did.
pub(crate) type HandlerReasons = BTreeMap<String, Option<String>>;

/// The plan's view of one task: whether this run is a plan at all, and what the gate reads.
pub(crate) struct PlanGate<'a> {
    pub task: &'a Reading<'a>,
    pub action: Action,
    /// `tack plan` (else every method lets the task run as it would).
    pub planning: bool,
    /// The run's check mode (a plan's is on).
    pub check_flag: bool,
    /// A handler at a flush: why it is listed, for each host.
    pub handler: Option<&'a HandlerReasons>,
    /// The name the task's banner showed: what later tasks defer on.
    pub banner_name: &'a str,
    pub pending: &'a crate::plan::pending::Pending,
    /// The task's argument renders, shared with `--events` and the action.
    pub renders: &'a Renders,
}

impl PlanGate<'_> {
    /// In a plan, marks a result of a task that really ran (its check mode is off) as such.
    pub(crate) fn mark_ran(&self, scope: &Scope, result: &mut HostResult) {
        if self.planning
            && result.plan.is_none()
            && !result.flag("skipped")
            && !self.task.check_mode(scope, self.check_flag)
        {
            result.plan = Some(PlanMark { ran: true, ..PlanMark::default() });
        }
    }

    /// The plan's gate for `host` (and loop `item`) in `scope`: the result the plan gives
    /// instead of running the task, or `None` to run it in check mode (which skips it when
    /// its `when` is false, and reports its errors as ansible would).
    pub(crate) fn gate(
        &self,
        host: &str,
        item: Option<usize>,
        scope: &Scope,
    ) -> Result<Gate, Diagnostic> {
        let mut gate = Gate { planned: None, writes: Vec::new() };
        if !self.planning {
            return Ok(gate);
        }
        match crate::task::when::evaluate(self.task.ctx, self.task.templar, scope) {
            When::Unknown(producer) => {
                gate.planned = Some(deferred(host, &producer));
                return Ok(gate);
            }
            // The check-mode run skips the task, or reports the condition's error.
            When::False(_) | When::Failed(_) => return Ok(gate),
            When::Holds => {}
        }
        let mut rendered = None;
        let producer = self.unavailable_input(host, item, scope, &mut rendered).or_else(|| {
            // What acts on a path an earlier task would change depends on that change.
            let args = rendered.as_ref()?;
            let remote_src = self.action.is("fetch")
                || self.action == Action::Module("slurp")
                || args.get("remote_src").is_some_and(|n| n.value.is_truthy());
            let walks = self.action == Action::Module("find");
            let touched = crate::plan::pending::touched(args, remote_src);
            self.pending.producer(host, &touched, walks)
        });
        if let Some(args) = &rendered {
            gate.writes = crate::plan::pending::written(args);
        }
        if let Some(producer) = producer {
            gate.planned = Some(deferred(host, &producer));
            return Ok(gate);
        }
        if let Some(reasons) = self.handler {
            gate.planned = Some(match reasons.get(host) {
                Some(Some(producer)) => deferred(host, producer),
                _ => would_run(host),
            });
            return Ok(gate);
        }
        // What these do is only known by doing it; `pause` waits, or asks, and a plan does
        // neither. An `async` task would start a job on the host, which leaves its file.
        let async_job = self.task.ctx.task.attrs.get(Keyword::Async).is_some();
        if (self.action.in_plan() == InPlan::WouldRun || async_job)
            && self.task.check_mode(scope, self.check_flag)
        {
            gate.planned = Some(would_run(host));
        }
        Ok(gate)
    }

    /// After a host's (or loop item's) result in a plan: the paths of a task that would, or
    /// might, change them are pending for the tasks after it.
    pub(crate) fn note(&self, host: &str, writes: &[String], result: &HostResult) {
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
            self.pending.record(host, writes.to_vec(), self.banner_name);
        }
    }

    /// The producer of an unavailable value the task's input reads: its arguments (every
    /// name they refer to, and what their render reads through `vars[...]`/`hostvars[...]`),
    /// `delegate_to`, and `changed_when`/`failed_when`/`until` (apart from the task's own
    /// `register`, which they read once it ran).
    /// The rendered arguments are left in `rendered` when they render.
    fn unavailable_input(
        &self,
        host: &str,
        item: Option<usize>,
        scope: &Scope,
        rendered: &mut Option<Mapping>,
    ) -> Option<String> {
        let task = self.task.ctx.task;
        let templar = self.task.templar;
        let raw = self.action.raw_args();
        let mut args = Mapping::new();
        for (key, value) in task.args.iter() {
            if !raw.contains(&key.as_str().unwrap_or_default()) {
                args.insert(key.clone(), value.clone());
            }
        }
        let first =
            |set: &tack_template::ProvenanceSet| set.unavailable().next().map(str::to_string);
        let args = Node::bare(Value::Map(args));
        if let Some(p) = first(&templar.static_provenance(&args, scope)) {
            return Some(p);
        }
        // The render the action will take, kept unless the run delegates (then it renders
        // in the delegated host's scope).
        let keep = self.task.ctx.delegate_to().is_none();
        let versions = &self.task.vars.versions;
        let render = || crate::task::args::render(self.task.ctx, self.action, templar, scope);
        // What the render read, and its arguments but those the action reads raw (they
        // are not the host's input).
        let seen = |r: &crate::task::args::RenderedArgs| match first(&r.provenance) {
            Some(p) => Err(p),
            None => {
                let mut map = Mapping::new();
                for (key, value) in r.args.iter() {
                    if !raw.contains(&key.as_str().unwrap_or_default()) {
                        map.insert(key.clone(), value.clone());
                    }
                }
                Ok(map)
            }
        };
        match self.renders.read(versions, (host, item), keep, render, seen) {
            Ok(Ok(map)) => *rendered = Some(map),
            Ok(Err(p)) => return Some(p),
            Err(e) => {
                if let Some(p) = e.unavailable {
                    return Some(p);
                }
            }
        }
        if let Some(p) = self.unavailable_raw_args(scope) {
            return Some(p);
        }
        if let Some(node) = self.task.ctx.delegate_to()
            && let Some(p) = first(&templar.static_provenance(node, scope))
        {
            return Some(p);
        }
        let judged = match self.task.register() {
            Some(name) => scope.with_var(&name, Node::bare(Value::Null), Provenance::Trusted),
            None => scope.clone(),
        };
        // These are bare expressions (conditions), so each is read as the `{{ ... }}` it
        // stands for: every name it refers to counts, whether or not evaluation would reach it.
        for keyword in [Keyword::ChangedWhen, Keyword::FailedWhen, Keyword::Until] {
            let Some(node) = task.attrs.get(keyword) else { continue };
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
                if let Some(p) = first(&templar.static_provenance(&expression, &judged)) {
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
        let args = &self.task.ctx.task.args;
        let templar = self.task.templar;
        if self.action.is("assert") {
            let that = args.get("that")?;
            let conditions: Vec<&Node> = match &that.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![that],
            };
            for condition in conditions {
                match templar.evaluate_conditional(condition, scope) {
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
            return None;
        }
        if self.action.is("debug") {
            let var = args.get("var")?;
            let expr = tack_yaml::pyrepr::str(&var.value);
            let template = Node::bare(Value::Str(format!("{{{{ {expr} }}}}")));
            return match templar.render(&template, scope) {
                Ok(r) => r.provenance.unavailable().next().map(str::to_string),
                Err(e) => e.unavailable.first().map(|p| p.to_string()),
            };
        }
        None
    }

    /// After a task ran (or did not) in a plan: the `set_fact` names it leaves unavailable
    /// for later tasks, with their provenance. A task that did not run leaves unavailable
    /// values under its name, so no earlier value stands in for its output.
    pub(crate) fn leaves(&self, result: &HostResult) -> Vec<(String, Provenance)> {
        if !self.planning || !PlanMark::unknown_in(result) || !self.action.is("set_fact") {
            return Vec::new();
        }
        let unknown = self.unknown();
        self.task
            .ctx
            .task
            .args
            .iter()
            .map(|(key, _)| tack_yaml::pyrepr::str(&key.value))
            .filter(|name| name != "cacheable")
            .map(|name| (name, unknown.clone()))
            .collect()
    }

    /// The provenance a plan's `register` stores a result with: unavailable when the task
    /// (or an item of it) did not run.
    pub(crate) fn register_provenance(&self, result: &HostResult) -> Option<Provenance> {
        (self.planning && PlanMark::unknown_in(result)).then(|| self.unknown())
    }

    fn unknown(&self) -> Provenance {
        Provenance::Unavailable { producer: Arc::from(self.banner_name) }
    }
}

/// The plan's gate for an `include_tasks`/`include_role` (or a `meta` task, with no `nodes`)
/// on `host`: deferred when its `when`, its loop source or the names it includes (`nodes`)
/// read the output of a task that did not run. An include's tasks are then not shown: which
/// ones run is unknown until apply. `None` outside a plan.
pub(crate) fn include_gate(
    task: &Reading<'_>,
    planning: bool,
    host: &str,
    scope: &Scope,
    nodes: &[(&'static str, Option<&Node>)],
) -> Option<HostResult> {
    if !planning {
        return None;
    }
    let written = task.ctx.task;
    // With a loop, the `when` is each item's (read with the item, as a task's is).
    if written.loop_items.is_none()
        && let When::Unknown(producer) = crate::task::when::evaluate(task.ctx, task.templar, scope)
    {
        return Some(deferred(host, &producer));
    }
    let read = written.loop_items.iter().chain(nodes.iter().filter_map(|(_, n)| *n));
    read.into_iter().find_map(|node| {
        let read = task.templar.static_provenance(node, scope);
        let producer = read.unavailable().next()?;
        Some(deferred(host, producer))
    })
}
