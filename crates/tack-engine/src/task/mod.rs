//! One task on one host, as ansible's `TaskExecutor` runs it: the plan's gate, the `when`
//! conditions, the loop (each item in turn), the `until`/`retries` attempts, the action with
//! its rendered arguments over the host's link, `changed_when`/`failed_when`,
//! `ignore_errors` and `register`. Results go to the callback through the strategy
//! (`crate::play::fanout`); nothing here prints.
//!
//! The pieces it calls each own one rule and know nothing of this runner: reading the
//! task's keywords (`reading`), `when` (`when`), the loop (`looped`), its source and result
//! (`items`, `loop_control`), `until` (`retries`), the arguments (`args`), delegation (`delegate`),
//! the link (`task_link`), the plan (`plan`), `ansible_failed_task` (`failed_task`).

mod current;
mod label;
mod looped;
mod projections;
mod refusals;
pub(crate) mod result_order;
mod templated;

use projections::Projected;
pub(crate) mod args;
pub(crate) mod delegate;
pub(crate) mod environment;
pub(crate) mod failed_task;
pub(crate) mod items;
mod judge;
pub(crate) mod link;
pub(crate) mod loop_control;
pub(crate) mod module_defaults;
pub(crate) mod name;
pub(crate) mod outcome;
mod panics;
pub(crate) mod params;
pub(crate) mod reading;
pub(crate) mod retries;
pub(crate) mod when;

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use tack_actions::{self as actions, Action, ActionInput, ActionOutput};
use tack_links::{InterpreterSettings, Links, Reach, SshDefaults, Trace, Traced};
use tack_report::callback::diff::DiffSettings;
use tack_report::result::{HostResult, b, s};

use crate::plan::{HandlerReasons, PlanGate};
use crate::task::args::{RenderedArgs, Renders};
use crate::task::delegate::Delegation;
pub(crate) use crate::task::judge::add_warnings;
use crate::task::link::TaskLinks;
use crate::task::outcome::{Live, Shown, TaskEvent, TaskOutcome};
use crate::task::reading::Reading;
use crate::task::when::When;

/// The largest `timeout` ansible takes (its alarm's bound, `_MAX_TIMEOUT`).
const MAX_TIMEOUT: i64 = 100_000_000;

/// Everything a task needs besides the host.
pub(crate) struct TaskRun<'a> {
    pub reading: Reading<'a>,
    pub action: Action,
    pub verbosity: i64,
    /// `--check` on the command line (or a plan).
    pub check_flag: bool,
    /// `tack plan` (see `crate::plan`).
    pub planning: bool,
    /// `tack plan`, a handler at a flush: why it is listed for each host.
    pub plan_handler: Option<HandlerReasons>,
    /// `--diff` on the command line (or `DIFF_ALWAYS`).
    pub diff_flag: bool,
    pub diff_settings: &'a DiffSettings,
    /// The `async_dir` setting (ansible's sh shell option), under `ansible_async_dir`.
    pub async_dir: &'a str,
    /// The `python_module_rlimit_nofile` setting, under its variable.
    pub rlimit_setting: Option<u64>,
    /// The `inject_invocation` setting, under its variable.
    pub inject_invocation: bool,
    /// Results carry their connection (see `RunFacts::result_connections`).
    pub result_connections: bool,
    /// `run_once`: the other hosts of the batch, which get the one host's facts and
    /// registered result as ansible applies a run-once result to every host.
    pub fanout: Vec<String>,
    pub inventory: &'a tack_inventory::live::LiveInventory,
    /// The renders of this task's arguments, shared by `--events`, the plan and the action.
    pub renders: Renders,
    /// The run's links to its hosts.
    pub links: &'a Links<'a>,
    /// The configuration's ssh settings, under each host's variables.
    pub ssh_defaults: &'a SshDefaults,
    /// The `-vvv` notes of a gathering of the play's variables (a delegated run gathers the
    /// delegated host's in its worker).
    pub reads: crate::vars::read_notes::ReadNotes,
    /// The name the task's banner showed (the action's when unnamed).
    pub banner_name: String,
    /// Interpreter discovery as configured.
    pub interpreter: &'a InterpreterSettings,
    /// `tack plan`: the paths an earlier task would change, per host.
    pub pending: &'a crate::plan::pending::Pending,
    pub discovered: Arc<crate::task::link::Discovered>,
    /// What the run refuses of an action a templated name rendered to (the run's refusal
    /// rules, handed down so a task does not reach up into them).
    pub refuse_action: RefuseAction,
}

/// The run's refusal of what a task asks of an action (`crate::refuse::check_action`).
pub(crate) type RefuseAction = fn(&tack_playbook::Task, Action) -> Result<(), Diagnostic>;

impl TaskRun<'_> {
    /// The connection the task reaches `host` with, by ansible's resolved name, as callback
    /// plugins read it from the task (`None` when none reads it, or it cannot be worked out).
    fn connection_name(&self, host: &str, scope: &Scope) -> Option<String> {
        if !self.result_connections {
            return None;
        }
        self.resolved_connection(host, scope)
    }

    /// The task's connection plugin by ansible's resolved name (`ansible.builtin.ssh`).
    fn resolved_connection(&self, host: &str, scope: &Scope) -> Option<String> {
        let (target, _) = self.task_links().link_target(host, scope).ok()?;
        Some(match target {
            tack_links::LinkTarget::Local => "ansible.builtin.local".into(),
            tack_links::LinkTarget::Ssh(_) => "ansible.builtin.ssh".into(),
            tack_links::LinkTarget::Plugin(settings) => settings.name.clone(),
        })
    }

    /// Raises the deprecations reading settings raised while the task's templates rendered
    /// (`config` lookups), as ansible reports them: as its connection plugin's, the next
    /// plugin to set its options.
    pub(crate) fn report_setting_deprecations(&self, host: &str, scope: &Scope) {
        let pending = tack_template::lookups::config::take_pending_deprecations();
        if pending.is_empty() {
            return;
        }
        let deprecator = tack_diag::Deprecator {
            resolved_name: self.resolved_connection(host, scope),
            kind: Some("connection".into()),
        };
        for mut deprecated in pending {
            deprecated.deprecator = deprecator.clone();
            tack_diag::deprecate_with(&deprecated, None);
        }
    }

    fn delegation(&self) -> Delegation<'_> {
        Delegation { task: &self.reading, ssh: self.ssh_defaults }
    }

    pub(crate) fn task_links(&self) -> TaskLinks<'_> {
        TaskLinks {
            delegation: self.delegation(),
            links: self.links,
            ssh: self.ssh_defaults,
            interpreter: self.interpreter,
            discovered: &self.discovered,
        }
    }

    pub(crate) fn plan_gate(&self) -> PlanGate<'_> {
        PlanGate {
            task: &self.reading,
            action: self.action,
            planning: self.planning,
            check_flag: self.check_flag,
            handler: self.plan_handler.as_ref(),
            banner_name: &self.banner_name,
            pending: self.pending,
            renders: &self.renders,
        }
    }

    /// The `when` on `host` in `scope`, as the run reads it.
    fn false_condition(&self, scope: &Scope) -> Result<Option<Node>, Diagnostic> {
        crate::task::when::evaluate(self.reading.ctx, self.reading.templar, scope).false_condition()
    }

    /// Runs the task on `host`.
    pub(crate) fn run(&self, host: &str) -> TaskOutcome {
        self.run_live(host, None)
    }

    /// Runs the task on `host`, a loop handing each item's line to `live` as it is made
    /// (see `outcome::Live`).
    pub(crate) fn run_live(&self, host: &str, live: Option<&Live<'_>>) -> TaskOutcome {
        // The lookups of its renders know the task's action, as ansible's task context says.
        // Each run of the task on a host announces its connection anew (ansible makes a
        // connection object per task executor).
        let trace = Trace::new();
        tack_template::task_context::with_task_action(&self.reading.ctx.task.action, || {
            if crate::verbose::noted(self.verbosity) < 5 {
                return self.run_live_in_context(host, live, &trace);
            }
            // `-vvvvv`: every place a file is looked for, in order with the run's other lines.
            let heard = Arc::clone(&trace);
            tack_loader::notes::observe(
                move |level, line| heard.note_at(level, line),
                || self.run_live_in_context(host, live, &trace),
            )
        })
    }

    fn run_live_in_context(
        &self,
        host: &str,
        live: Option<&Live<'_>>,
        trace: &Arc<Trace>,
    ) -> TaskOutcome {
        let Some(scope) = self.reading.scope(host) else {
            let diag = Diagnostic::new(format!("host {host} is not in the inventory"));
            let result = self.finish(host, actions::errored(diag));
            return TaskOutcome::of(result);
        };
        crate::vars::reserved::warn_scope(&scope, self.reading.vars.extra());
        // A `diff` that cannot be read fails the task as ansible's `post_validate` does: the
        // result is still ignored and registered like any other failure.
        let (diff, keyword_error) = match self.reading.diff_mode(&scope, self.diff_flag) {
            Ok(diff) => (diff, None),
            Err(d) => (false, Some(d)),
        };
        // A loop's items each render `ignore_errors` with their own variables, and the loop
        // is ignored when any item's says so (ansible's `UnifiedTaskResult.ignore_errors`);
        // a task without a loop renders it once, here.
        let looped = self.reading.ctx.task.loop_items.is_some();
        let mut ignore_errors = false;
        if !looped && keyword_error.is_none() {
            ignore_errors = match self.reading.flag(Keyword::IgnoreErrors, &scope) {
                Ok(v) => v,
                Err(d) => {
                    let result = self.finish(host, actions::errored(d));
                    return TaskOutcome { diff, ..TaskOutcome::of(result) };
                }
            };
        }
        let mut events = Vec::new();
        let mut raised_before_error = Vec::new();
        let mut stream = Shown::new(live, diff, crate::verbose::noted(self.verbosity));
        let connection = self.connection_name(host, &scope);
        stream.connection = connection.clone();
        let outcome = match (&self.reading.ctx.task.loop_items, keyword_error) {
            // A loop's items each read it (`run_loop`).
            (None, Some(d)) => {
                ignore_errors = self.literal_ignore_errors();
                Err(d)
            }
            (None, None) => {
                // The result keeps the deprecations raised while the task ran.
                let (ran, raised) = tack_diag::recording_deprecations(|| {
                    let ran = self.run_once(host, &scope, trace, &mut events);
                    self.report_setting_deprecations(host, &scope);
                    ran
                });
                match ran {
                    Ok(mut result) => {
                        result.add_raised_deprecations(raised);
                        Ok((Vec::new(), result))
                    }
                    Err(d) => {
                        raised_before_error = raised;
                        Err(d)
                    }
                }
            }
            (Some(items), _) => match self.run_loop(host, &scope, trace, items, &mut stream) {
                Ok((result, any_ignored)) => {
                    ignore_errors = any_ignored;
                    Ok((std::mem::take(&mut stream.events), result))
                }
                Err(d) => {
                    // Before any item: only a value that needs no item's variables counts.
                    ignore_errors =
                        self.reading.flag(Keyword::IgnoreErrors, &scope).unwrap_or(false);
                    Err(d)
                }
            },
        };
        let (mut items, mut result) = match outcome {
            Ok((items, result)) => {
                events.extend(items);
                (events, result)
            }
            Err(diag) => {
                let mut result = self.finish(host, actions::errored(diag));
                result.add_raised_deprecations(std::mem::take(&mut raised_before_error));
                (events, result)
            }
        };
        // What callback plugins read as the task's connection, where the task ran.
        if !result.flag("skipped") {
            result.connection = connection.clone();
        }
        for event in &mut items {
            if let TaskEvent::Item(r) | TaskEvent::Retry(r) = event
                && r.connection.is_none()
                && !r.flag("skipped")
            {
                r.connection = connection.clone();
            }
        }
        // A loop's own result is hidden when the task's `no_log` (rendered without an item)
        // or any item's is; each item and retry decided for itself in the loop.
        let hidden = self.reading.no_log(&scope);
        result.no_log |= hidden;
        if !looped {
            let delegation = self.delegation();
            let delegated = delegation
                .delegated(host, &scope)
                .ok()
                .flatten()
                .map(|o| delegation.delegated_label(&o));
            result.delegated = delegated.clone();
            for event in &mut items {
                if let TaskEvent::Retry(r) = event {
                    r.delegated = delegated.clone();
                }
            }
        } else if let Some(TaskEvent::Item(last)) =
            items.iter().rev().find(|e| matches!(e, TaskEvent::Item(_)))
        {
            result.delegated = last.delegated.clone();
        }
        for event in &mut items {
            match event {
                TaskEvent::Retry(r) if !looped => r.no_log = hidden,
                TaskEvent::Item(r) => result.no_log |= r.no_log,
                TaskEvent::Retry(_) | TaskEvent::Async(_) | TaskEvent::Transport(..) => {}
            }
        }
        // ansible 2.21's register projections (`register: {name: expression}`), evaluated once
        // the task is done, failed or skipped; one that fails fails the task.
        let projected = self.reading.projections().map(|projections| {
            let last_item = items.iter().rev().find_map(|e| match e {
                TaskEvent::Item(r) => Some(&r.data),
                _ => None,
            });
            self.project(&scope, &result, last_item, looped, &projections)
        });
        if let Some(Projected { failure: Some(failure), .. }) = &projected {
            result.data.insert(s("failed"), b(true));
            result.error = Some(failure.clone());
        }
        if result.flag("failed") && ignore_errors {
            result.ignored = true;
        }
        // A loop's items said it already (any of them).
        if result.flag("unreachable") && !result.ignore_unreachable {
            result.ignore_unreachable =
                self.reading.flag(Keyword::IgnoreUnreachable, &scope).unwrap_or(false);
        }
        let gate = self.plan_gate();
        for (name, provenance) in gate.leaves(&result) {
            self.set_everywhere(host, &name, Node::bare(Value::Null), provenance);
        }
        if let Some(projected) = projected {
            for (name, value, provenance) in projected.values {
                self.set_everywhere(host, &name, value, provenance);
            }
        } else if let Some(node) = self.reading.ctx.task.attrs.get(Keyword::Register) {
            let name = tack_yaml::pyrepr::str(&node.value);
            crate::vars::reserved::warn_name(&name, node.origin.as_ref());
            let provenance = if let Some(unknown) = gate.register_provenance(&result) {
                unknown
            } else if self.action.trusted_result() || result.written_by_user {
                Provenance::Trusted
            } else {
                Provenance::ManagedHost
            };
            let value = Node::bare(Value::Map(result_order::registered(&result.data)));
            let vars = self.reading.vars;
            for other in self.fanout.iter().map(String::as_str).chain([host]) {
                let tags = crate::vars::RegisteredTags {
                    deprecated: result.deprecated_values.clone(),
                    trusted: result.trusted_values.clone(),
                };
                vars.set_registered(other, &name, value.clone(), provenance.clone(), tags);
            }
        }
        let failed_task = (result.flag("failed") && !result.ignored).then(|| {
            let dump = crate::task::failed_task::FailedTask {
                task: &self.reading,
                action: self.action,
                check_flag: self.check_flag,
                diff_flag: self.diff_flag,
            };
            dump.dump(&scope)
        });
        // What went out live is the events' beginning: nothing comes before a loop's.
        TaskOutcome { items, result, diff, failed_task, shown_live: stream.streamed }
    }

    /// `ignore_errors` when a keyword failed to validate: ansible's result takes the keyword
    /// only when it is already a bool as written (its `post_validate` stopped before a
    /// template in it was rendered).
    fn literal_ignore_errors(&self) -> bool {
        let node = self.reading.ctx.inherited(Keyword::IgnoreErrors);
        matches!(node.map(|n| &n.value), Some(Value::Bool(true)))
    }

    /// Sets a host variable on `host` and, under `run_once`, on every other host of the
    /// batch.
    fn set_everywhere(&self, host: &str, name: &str, value: Node, provenance: Provenance) {
        let vars = self.reading.vars;
        for other in &self.fanout {
            vars.set_host_var(other, name, value.clone(), provenance.clone());
        }
        vars.set_host_var(host, name, value, provenance);
    }

    /// [`Self::set_everywhere`] for a value whose strings each say their own trust (see
    /// `ActionOutput::facts_trust_marked`).
    fn set_marked_everywhere(&self, host: &str, name: &str, value: &Node, provenance: &Provenance) {
        let vars = self.reading.vars;
        for other in self.fanout.iter().map(String::as_str).chain([host]) {
            vars.set_marked_host_var(other, name, value.clone(), provenance.clone());
        }
    }

    fn run_once(
        &self,
        host: &str,
        scope: &Scope,
        trace: &Arc<Trace>,
        events: &mut Vec<TaskEvent>,
    ) -> Result<HostResult, Diagnostic> {
        let gate = self.plan_gate();
        let verdict = gate.gate(host, None, scope)?;
        if let Some(planned) = verdict.planned {
            if let Some(refused) = self.refused_unrun(&planned, scope) {
                return Ok(self.judge(host, scope, refused, None, true));
            }
            gate.note(host, &verdict.writes, &planned);
            return Ok(planned);
        }
        // ansible works out the delegation (gathering the delegated host's variables) before
        // it evaluates the conditions.
        let delegation = self.delegation();
        let delegated = delegation.delegated(host, scope);
        if delegation.gathers_delegated(host, scope, &delegated) {
            events.extend(
                self.reads.lines().iter().map(|(v, l)| TaskEvent::Transport(*v, l.clone())),
            );
        }
        if let Some(cond) = self.false_condition(scope)? {
            // ansible's result of a skip says it did not fail, as a loop's items do.
            let mut skipped = tack_report::result::skipped(host, &cond);
            skipped.data.insert(s("failed"), b(false));
            return Ok(skipped);
        }
        let delegated = delegated?;
        let there = match &delegated {
            Some(other) => delegation.delegated_scope(scope, host, other),
            None => scope.clone(),
        };
        // The connection's variables are converted once the task is known to run.
        if let Err(d) = self.reading.connection_variables(&there, delegated.as_deref()) {
            return Ok(self.judge(host, scope, actions::errored(d), None, true));
        }
        let mut result = self.attempts(host, None, &there, trace, events)?;
        gate.mark_ran(scope, &mut result);
        gate.note(host, &verdict.writes, &result);
        Ok(result)
    }

    /// Runs the action until its `until` holds (or it stops failing), at most `retries + 1`
    /// times; each bad run but the last is pushed to `events` as a retry.
    fn attempts(
        &self,
        host: &str,
        item: Option<usize>,
        scope: &Scope,
        trace: &Arc<Trace>,
        events: &mut Vec<TaskEvent>,
    ) -> Result<HostResult, Diagnostic> {
        if self.action == Action::Templated {
            return match self.templated(scope) {
                Ok(run) => {
                    let mut result = run.attempts(host, item, scope, trace, events)?;
                    result.action = Some(run.action.name().to_string());
                    Ok(result)
                }
                Err(failed) => {
                    let (output, rendered) = *failed;
                    let mut result = self.judge(host, scope, output, None, true);
                    result.action = rendered;
                    Ok(result)
                }
            };
        }
        let plan = crate::task::retries::attempts(&self.reading, scope)?;
        if plan.runs <= 1 {
            let output = self.execute(host, item, scope, trace, events);
            return Ok(self.judge(host, scope, output, None, true));
        }
        let mut last = None;
        for attempt in 1..=plan.runs {
            let output = self.execute(host, item, scope, trace, events);
            // An action that raised is not run again (ansible's exceptions leave the loop).
            if output.raised {
                return Ok(self.judge(host, scope, output, None, false));
            }
            let facts = (output.facts.clone(), output.included.clone());
            let marked = output.facts_trust_marked;
            // `until` sees what this run set (not the next run's arguments: ansible's task
            // variables are only updated for the conditionals).
            let mut judged = scope.clone();
            for (name, value, provenance) in &facts.0 {
                judged = judged.with_var(name, value.clone(), provenance.clone());
            }
            let mut result = self.judge(host, &judged, output, Some(attempt), false);
            if crate::task::retries::good(&self.reading, &judged, &result)? {
                if !result.flag("failed") {
                    let fact_host = self.delegation().fact_host(host, scope);
                    self.apply_facts(&fact_host, &facts.0, marked, &facts.1);
                }
                return Ok(result);
            }
            if attempt < plan.runs {
                result.data.insert(s("retries"), Node::bare(Value::Int(plan.runs)));
                result.data.insert(s("attempts"), Node::bare(Value::Int(attempt + 1)));
                events.push(TaskEvent::Retry(result));
                std::thread::sleep(plan.delay);
            } else {
                last = Some(result);
            }
        }
        // `runs` is at least 2 here, so the loop ran and kept its last result.
        let mut result = last.unwrap_or_else(|| HostResult::new(host, Default::default()));
        result.data.insert(s("attempts"), Node::bare(Value::Int(plan.runs - 1)));
        // Out of attempts the result is failed, unless `failed_when` judged it: ansible's
        // `failed` is the `failed_when` verdict whenever there is one.
        let judged = result.data.get("failed_when_result").map(|v| v.value.clone());
        let failed = match judged {
            Some(Value::Bool(verdict)) => verdict,
            _ => true,
        };
        result.data.insert(s("failed"), b(failed));
        if !failed {
            result.error = None;
        }
        Ok(result)
    }

    /// What `pause` announces on `host` before it waits (nothing when its `when` is false
    /// or its arguments do not render; running it then reports that).
    pub(crate) fn announce(&self, host: &str) -> Vec<String> {
        let Some(scope) = self.reading.scope(host) else { return Vec::new() };
        if !matches!(
            crate::task::when::evaluate(self.reading.ctx, self.reading.templar, &scope),
            When::Holds | When::Unknown(_)
        ) {
            return Vec::new();
        }
        let mut args = Mapping::new();
        for (key, value) in self.reading.ctx.task.args.iter() {
            match self.reading.templar.render(value, &scope) {
                Ok(rendered) => {
                    args.insert(key.clone(), rendered.value);
                }
                Err(e) if e.kind == tack_template::TemplateErrorKind::Omitted => {}
                Err(_) => return Vec::new(),
            }
        }
        actions::pause::announce(&args)
    }

    /// The task's arguments for `host` (and loop `item`) in `scope`: the render `--events`
    /// or the plan's gate made when nothing it read has changed since, else a new one.
    fn args(
        &self,
        host: &str,
        item: Option<usize>,
        scope: &Scope,
    ) -> Result<RenderedArgs, crate::task::args::ArgsFailed> {
        let reading = &self.reading;
        let render = || crate::task::args::render(reading.ctx, self.action, reading.templar, scope);
        // An item after the first sees the items before it (the task's `register` name,
        // `_task`), which a render made before the loop ran (`--events`, a plan) could not.
        let sees_earlier = item.is_some_and(|i| i > 0)
            && (reading.ctx.task.attrs.get(Keyword::Register).is_some()
                || reading.reads_task_state());
        if sees_earlier {
            return self.renders.take_fresh((host, item), render);
        }
        self.renders.take(&reading.vars.versions, (host, item), render)
    }

    /// Renders the arguments and runs the action; the notes of an `async` job it waits for
    /// go to `events`. What rendering the arguments warned is the result's, first.
    fn execute(
        &self,
        host: &str,
        item: Option<usize>,
        scope: &Scope,
        trace: &Arc<Trace>,
        events: &mut Vec<TaskEvent>,
    ) -> ActionOutput {
        let task = self.reading.ctx.task;
        if task.action_looked_up_at_run {
            // ansible's lookup of the action, now: its routing's deprecations (each shown once).
            let collection = task.library.as_ref().and_then(|m| m.collection.as_ref());
            for message in collection.iter().flat_map(|c| &c.deprecations) {
                let at = task.action_origin.clone().or_else(|| task.origin.clone());
                tack_diag::deprecate_formatted(&Diagnostic::at(message.clone(), at));
            }
        }
        let mut warnings = Vec::new();
        let mut output = self.execute_action(host, item, scope, trace, events, &mut warnings);
        if !warnings.is_empty() {
            crate::task::judge::prepend_warnings(&mut output, warnings);
        }
        output
    }

    fn execute_action(
        &self,
        host: &str,
        item: Option<usize>,
        scope: &Scope,
        trace: &Arc<Trace>,
        events: &mut Vec<TaskEvent>,
        warnings: &mut Vec<Diagnostic>,
    ) -> ActionOutput {
        let ctx = self.reading.ctx;
        // ansible's `ActionBase.run`: an action plugin that cannot run as a job fails here.
        if !self.action.takes_async()
            && self
                .reading
                .int_keyword(Keyword::Async, scope)
                .ok()
                .flatten()
                .is_some_and(|a| a != 0)
        {
            let message = format!("This action ({}) does not support async.", ctx.task.action);
            let origin = self.reading.origin();
            let cause = Diagnostic::at(message.clone(), origin.clone());
            let mut out = actions::errored(Diagnostic::caused_by("Task failed.", origin, cause));
            out.data.insert(s("msg"), s(&message));
            return out;
        }
        if self.action == Action::Unresolvable {
            let name = &ctx.task.action;
            let cause = Diagnostic::at(
                format!("Cannot resolve '{name}' to an action or module."),
                ctx.task.action_origin.clone(),
            );
            return actions::errored(Diagnostic::caused_by(
                "Task failed.",
                self.reading.origin(),
                cause,
            ));
        }
        // Free-form text that is all one template is a mapping of arguments (`args::render`).
        let raw = ctx.task.args.get("_raw_params");
        let splatted = raw.and_then(Node::as_str).is_some_and(tack_playbook::is_all_template);
        if !self.action.takes_raw_params() && raw.is_some() && !splatted {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let cause = format!("Action '{}' does not support raw params.", self.action.fqcn());
            data.insert(s("msg"), s(&format!("Task failed: {cause}")));
            data.insert(s("failed"), b(true));
            let mut output = ActionOutput::new(data);
            // The task's origin, and the action's where it differs (a named task).
            output.error = Some(Diagnostic::caused_by(
                "Task failed.",
                self.reading.origin(),
                Diagnostic::at(cause, ctx.task.action_origin.clone()),
            ));
            output.raised = true;
            return output;
        }
        let rendered = match self.args(host, item, scope) {
            Ok(rendered) => rendered,
            Err(failed) => {
                *warnings = failed.warnings;
                return actions::errored(failed.error);
            }
        };
        let RenderedArgs {
            args, provenance, host_named, warnings: rendering, trust_marked, ..
        } = rendered;
        *warnings = rendering;
        let search = self.reading.search_path();
        let environment = match crate::task::environment::render(ctx, self.reading.templar, scope) {
            Ok(env) => env,
            Err(d) => {
                return actions::errored(Diagnostic::caused_by(
                    "Task failed.",
                    self.reading.origin(),
                    d,
                ));
            }
        };
        let async_keywords = match self.reading.async_keywords(scope) {
            Ok(keywords) => keywords,
            Err(d) => return actions::errored(d),
        };
        let async_task =
            async_keywords.map(|(limit, poll)| actions::AsyncTask { limit, poll, host });
        let links = self.task_links();
        let delegation = self.delegation();
        let link = if self.action.touches_host() {
            match links.link(host, scope, trace, self.action.transfers_files()) {
                Ok(link) => Some(link),
                Err(mut output) => {
                    // ansible's interpreter discovery is what first reaches the host: it says
                    // so, and the connection's failure is raised under the task's error.
                    if links.discovers_first(self.action, host, scope) {
                        trace.record(
                            Reach::Local,
                            tack_links::trace::Use::Step(format!(
                                "<{host}> Attempting python interpreter discovery."
                            )),
                        );
                        if let Some(error) = output.error.take() {
                            let inner = error
                                .message
                                .strip_prefix("Task failed: ")
                                .unwrap_or(&error.message);
                            // Raised while handling the discovery's failure: not folded.
                            let cause = Diagnostic::new(inner.to_string()).while_handling();
                            output.error =
                                Some(Diagnostic::caused_by("Task failed.", error.origin, cause));
                        }
                    }
                    // What the connection said while it failed to open (a retried ssh) shows
                    // with the task.
                    let address = crate::verbose::address(&delegation, self.inventory, host, scope);
                    events.extend(
                        trace
                            .drain_lines(&address)
                            .into_iter()
                            .map(|(level, line)| TaskEvent::Transport(level, line)),
                    );
                    return output;
                }
            }
        } else {
            None
        };
        // ansible checks the bounds of `timeout` (its alarm's) as each attempt starts, once
        // the connection is made; the error leaves the attempts.
        if let Ok(Some(secs)) = self.reading.int_keyword(Keyword::Timeout, scope)
            && !(0..=MAX_TIMEOUT).contains(&secs)
        {
            let message =
                format!("Timeout {secs} is invalid, it must be between 0 and {MAX_TIMEOUT}.");
            let cause = Diagnostic::new(message);
            let mut out = actions::errored(Diagnostic::caused_by(
                "Task failed.",
                self.reading.origin(),
                cause,
            ));
            out.raised = true;
            return out;
        }
        let discovered = link
            .as_deref()
            .and_then(|conn| links.discover_interpreter(self.action, host, scope, conn, trace));
        let relink = |connect_timeout| links.fresh_link(host, scope, connect_timeout, trace);
        let python = if self.action.runs_python() {
            links.python_for(scope, discovered.as_ref().map(|d| d.path.as_str()))
        } else {
            None
        };
        // Only the actions that ask are told which link the host's is.
        let link_target =
            self.action.traits().asks_link.then(|| links.link_target(host, scope).ok()).flatten();
        // Actions that never touch the host get the controller itself, as ansible's do.
        let local = Traced::new(Arc::new(tack_links::InProcess), Reach::Local, trace);
        let templar = self.reading.templar;
        let defaults_for = |fqcn: &str| -> Result<tack_yaml::Mapping, Diagnostic> {
            let groups = ctx.ancestry.iter().find_map(|a| match a {
                tack_playbook::walk::Ancestor::Play(play) => Some(&*play.action_groups),
                _ => None,
            });
            let nodes = crate::task::module_defaults::defaults_in(
                &crate::task::module_defaults::mappings(ctx),
                groups,
                fqcn,
            );
            let merged = crate::task::module_defaults::merge_defaults(nodes, templar, scope)?;
            let rendered = templar
                .render(&Node::bare(Value::Map(merged)), scope)
                .map_err(|e| e.to_diagnostic())?;
            Ok(rendered.value.as_map().cloned().unwrap_or_default())
        };
        let input = ActionInput {
            args: &args,
            scope,
            templar: self.reading.templar,
            task_origin: self.reading.origin(),
            task_name: &self.banner_name,
            action_name: &self.reading.ctx.task.action,
            verbosity: self.verbosity,
            derived: provenance.derived(),
            check_mode: self.reading.check_mode(scope, self.check_flag),
            // An unconvertible `diff` already failed the task before it got here. A plan asks
            // every module for its diff, for the fields a change would touch; it is shown only
            // where diff mode is on.
            diff: self.reading.diff_mode(scope, self.diff_flag).unwrap_or(false) || self.planning,
            diff_settings: self.diff_settings,
            async_dir: self.async_dir,
            rlimit_setting: self.rlimit_setting,
            inject_setting: self.inject_invocation,
            search: &search,
            host_named: &host_named,
            trust_marked,
            inventory: self.inventory,
            environment: &environment,
            timeout: self.reading.timeout(scope),
            async_task: async_task.as_ref(),
            delegated: ctx.delegate_to().is_some(),
            local_connection: matches!(&link_target, Some((tack_links::LinkTarget::Local, _))),
            plugin: match &link_target {
                Some((tack_links::LinkTarget::Plugin(settings), _)) => Some(settings),
                _ => None,
            },
            becomes: matches!(&link_target, Some((_, Some(_)))),
            conn: link.as_deref().unwrap_or(&local),
            trace,
            relink: &relink,
            python: python.as_deref(),
            modules: ctx.task.library_search.as_deref(),
            module_defaults: &defaults_for,
        };
        // ansible's module loader warns of a deprecated ansible-core module each time an action
        // resolves it to run: shown once per place it is written, kept in every result (loop
        // items' too), `deprecation_warnings` off or not.
        let deprecation = match self.action {
            Action::Module(_) | Action::Python(_) | Action::Library(_) => {
                ctx.task.module_deprecation.as_ref()
            }
            _ => None,
        };
        if let Some((message, version)) = deprecation {
            let at = ctx.task.action_origin.clone().or_else(|| ctx.task.origin.clone());
            tack_diag::deprecate(&Diagnostic::at(message.clone(), at), version);
        }
        // One host's action never takes the run down: a panic in it (a bug of tack's) fails
        // that host's task, with what the panic said, and the run goes on.
        let output = crate::task::panics::contained(
            || actions::run(self.action, &input),
            input.task_origin.clone(),
        );
        let uses = trace.take();
        if !uses.is_empty() {
            let address = crate::verbose::address(&delegation, self.inventory, host, scope);
            events.extend(
                trace
                    .lines(&address, uses)
                    .into_iter()
                    .map(|(level, line)| TaskEvent::Transport(level, line)),
            );
        }
        events.extend(trace.take_job_notes().into_iter().map(TaskEvent::Async));
        let mut output = output;
        if self.action.is("set_fact") {
            keep_vaulted_facts(ctx.task, scope, &mut output.facts);
        }
        if matches!(self.action, Action::Module(_) | Action::Python(_) | Action::Library(_)) {
            drop_internal_facts(&mut output.data);
        }
        // An unreachable host's result is ansible's connection failure alone.
        let unreachable =
            output.data.get("unreachable").is_some_and(|n| n.value == Value::Bool(true));
        if let Some(found) = discovered.filter(|_| !unreachable) {
            // The result that discovered the interpreter carries it and discovery's warnings,
            // as ansible's does.
            let mut facts = output
                .data
                .get("ansible_facts")
                .and_then(Node::as_map)
                .cloned()
                .unwrap_or_default();
            facts.insert(s(tack_links::interpreter::FACT), s(&found.path));
            output.data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
            add_warnings(&mut output.data, &found.warnings);
        }
        output
    }
}

/// ansible's `remove_internal_keys`: interpreter discovery's facts are the controller's to
/// set; a module that returns them has them dropped.
fn drop_internal_facts(data: &mut Mapping) {
    let Some(Value::Map(facts)) = data.get("ansible_facts").map(|n| &n.value) else { return };
    let internal =
        |k: &Node| crate::vars::restricted_facts::is_internal(&tack_yaml::pyrepr::str(&k.value));
    if !facts.iter().any(|(k, _)| internal(k)) {
        return;
    }
    let kept: Mapping =
        facts.iter().filter(|(k, _)| !internal(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    data.insert(s("ansible_facts"), Node::bare(Value::Map(kept)));
}

/// ansible 2.21 keeps a `set_fact` value that is a `!vault` value (written so, or one variable
/// holding one: `"{{ secret }}"`) encrypted in the fact, decrypted where it is used; the
/// `vault_encrypted` test still says so of the fact. What the task's result shows is the
/// plaintext, as ansible's does.
fn keep_vaulted_facts(
    task: &tack_playbook::Task,
    scope: &Scope,
    facts: &mut [(String, Node, Provenance)],
) {
    for (key, written) in task.args.iter() {
        let Some(name) = key.as_str().filter(|k| !tack_template::is_possibly_template(k)) else {
            continue;
        };
        let vaulted = match &written.value {
            Value::Vault(_) => Some(written.clone()),
            _ => tack_template::Templar::sole_variable(written, scope)
                .filter(|node| matches!(node.value, Value::Vault(_))),
        };
        if let Some(vaulted) = vaulted
            && let Some(fact) = facts.iter_mut().find(|(n, _, _)| n == name)
        {
            fact.1 = vaulted;
        }
    }
}
