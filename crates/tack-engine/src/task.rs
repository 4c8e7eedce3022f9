//! One task on one host, as ansible's `TaskExecutor` runs it: the `when` conditions, the loop,
//! the action with its rendered arguments, `changed_when`/`failed_when`, `ignore_errors` and
//! `register`. Results go to the callback through the play runner; nothing here prints.

use std::path::Path;
use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_template::{Provenance, ProvenanceSet, Scope, Templar, TemplateErrorKind};
use tack_yaml::{Mapping, Node, Value};

use crate::vars::PlayScope;
use tack_actions::{self as actions, Action, ActionInput, ActionOutput};
use tack_links::link_target::LinkTarget;
use tack_links::{Reach, Trace};
use tack_report::result::{HostResult, b, s};

/// Everything a task needs besides the host.
pub struct TaskRun<'a> {
    pub ctx: &'a TaskInContext<'a>,
    pub action: Action,
    pub templar: &'a Templar,
    pub vars: &'a Arc<PlayScope>,
    pub verbosity: i64,
    pub role: crate::roles::RoleLayers,
    pub play: &'a tack_playbook::Play,
    /// `--check` on the command line.
    pub check_flag: bool,
    /// `tack plan` (see `crate::plan`).
    pub planning: bool,
    /// `tack plan`, a handler at a flush: why it is listed for each host.
    pub(crate) plan_handler: Option<crate::plan::HandlerReasons>,
    /// `--diff` on the command line (or `DIFF_ALWAYS`).
    pub diff_flag: bool,
    pub diff_settings: &'a tack_report::callback::diff::DiffSettings,
    /// The `async_dir` setting (ansible's sh shell option), under `ansible_async_dir`.
    pub async_dir: &'a str,
    /// The include parameters of the `include_tasks` that brought the task in (its `vars`
    /// and loop variable).
    pub params: Option<Arc<tack_template::Layer>>,
    /// `run_once`: the other hosts of the batch, which get the one host's facts and
    /// registered result as ansible applies a run-once result to every host.
    pub fanout: Vec<String>,
    pub inventory: &'a tack_inventory::live::LiveInventory,
    /// The renders `--events` made of this task's arguments, for the hosts' runs to reuse.
    pub(crate) rendered: crate::render_cache::RenderCache,
    /// The run's links to its hosts.
    pub links: &'a tack_links::pool::Links<'a>,
    /// The configuration's ssh settings, under each host's variables.
    pub ssh_defaults: &'a tack_links::link_target::SshDefaults,
    /// The `-vvv` notes of a gathering of the play's variables (a delegated run gathers the
    /// delegated host's in its worker).
    pub(crate) reads: crate::read_notes::ReadNotes,
    /// The name the task's banner showed (the action's when unnamed).
    pub banner_name: String,
    /// Interpreter discovery as configured.
    pub interpreter: &'a tack_links::interpreter::InterpreterSettings,
    /// `tack plan`: the paths an earlier task would change, per host.
    pub pending: &'a crate::plan_pending::Pending,
    /// The hosts this task has discovered an interpreter for (a loop's first item does it).
    pub(crate) discovered: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// What the callback hears about a host before its final result, in the order it happened.
pub enum TaskEvent {
    /// One loop item's result.
    Item(HostResult),
    /// A bad run that `until`/`retries` runs again (`v2_runner_retry`).
    Retry(HostResult),
    /// An `ASYNC POLL`/`ASYNC OK`/`ASYNC FAILED` line of a job the task waits for.
    Async(String),
    /// A line about reaching the host, shown from the `-v` count it carries (`-vvv` for most;
    /// see `crate::transport`).
    Transport(u8, String),
}

/// A task's arguments as rendered for one host.
#[derive(Default)]
pub(crate) struct RenderedArgs {
    pub args: Mapping,
    pub provenance: ProvenanceSet,
    /// Arguments whose value came from a managed host.
    pub host_named: Vec<String>,
    /// Arguments whose render read a `!vault` value.
    pub sealed: Vec<String>,
}

/// A host's outcome for one task: the retries and per-item results, and the final one.
pub struct TaskOutcome {
    pub items: Vec<TaskEvent>,
    pub result: HostResult,
    /// The task's effective diff mode (`diff:` on it or its parents, else `--diff`), which
    /// decides whether each loop item's diff is shown.
    pub diff: bool,
    /// `ansible_failed_task` for a rescue, when the task failed (see `failed_task`).
    pub failed_task: Option<Node>,
}

impl TaskOutcome {
    /// Tells `callback` what happened before the final result, in order: each item (after its
    /// diff, when the task's diff mode is on), retry, async note and `-vvv` connection line.
    pub(crate) fn show_events(
        &self,
        view: &tack_report::callback::TaskView,
        callback: &mut dyn tack_report::callback::Callback,
    ) {
        for event in &self.items {
            match event {
                TaskEvent::Item(item) => {
                    if self.diff && tack_report::callback::diff::sent_for(item) {
                        callback.file_diff(view, item);
                    }
                    callback.item_result(view, item);
                }
                TaskEvent::Retry(retry) => callback.retry(view, retry),
                TaskEvent::Async(note) => callback.async_note(note),
                // The command a `no_log` task hands the shell may carry its secrets.
                TaskEvent::Transport(_, line) if self.result.no_log && line.contains("> EXEC ") => {
                    let address = line.split_once(' ').map_or(line.as_str(), |(a, _)| a);
                    callback.verbose_line(3, &format!("{address} EXEC (command hidden: no_log)"));
                }
                TaskEvent::Transport(level, line) => callback.verbose_line(*level, line),
            }
        }
    }
}

impl TaskRun<'_> {
    pub(crate) fn task_origin(&self) -> Option<tack_diag::Origin> {
        self.ctx.task.origin.clone()
    }

    /// The task's and its parents' `vars`, outermost first.
    pub fn scope(&self, host: &str) -> Option<Scope> {
        let mut layers: Vec<&Mapping> = Vec::new();
        for ancestor in self.ctx.ancestry.iter().rev() {
            match ancestor {
                tack_playbook::walk::Ancestor::Block(block) => layers.push(&block.vars),
                tack_playbook::walk::Ancestor::Import(task) => layers.push(&task.vars),
                _ => {}
            }
        }
        layers.push(&self.ctx.task.vars);
        let task = crate::vars::TaskVars {
            role: self.role.clone(),
            vars: layers,
            params: self.params.clone(),
        };
        self.vars.task_scope(host, &task)
    }

    /// The `when` conditions, parents' first; `Some(text)` of the first false one.
    pub(crate) fn false_condition(&self, scope: &Scope) -> Result<Option<Node>, Diagnostic> {
        let mut conditions: Vec<&Node> = self.ctx.extended(Keyword::When);
        conditions.reverse();
        for cond in conditions {
            let items: Vec<&Node> = match &cond.value {
                Value::Seq(items) => items.iter().collect(),
                _ => vec![cond],
            };
            for item in items {
                match self.templar.evaluate_conditional(item, scope) {
                    Ok(r) if r.value => {}
                    // The condition as written: a string, or `false` itself.
                    Ok(_) => return Ok(Some(Node::bare(item.value.clone()))),
                    Err(e) => {
                        let cause = Diagnostic::at(
                            format!("A 'when' expression failed: {}", e.message),
                            e.origin.clone().or_else(|| item.origin.clone()),
                        );
                        return Err(Diagnostic::caused_by(
                            "Task failed.",
                            self.task_origin(),
                            cause,
                        ));
                    }
                }
            }
        }
        Ok(None)
    }

    pub(crate) fn flag(&self, keyword: Keyword, scope: &Scope) -> Result<bool, Diagnostic> {
        let Some(node) = self.ctx.inherited(keyword) else { return Ok(false) };
        let rendered = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        Ok(rendered.value.value.is_truthy())
    }

    /// Runs the task on `host`.
    pub fn run(&self, host: &str) -> TaskOutcome {
        // Each run of the task on a host announces its connection anew (ansible makes a
        // connection object per task executor).
        let trace = Trace::new();
        let Some(scope) = self.scope(host) else {
            let diag = Diagnostic::new(format!("host {host} is not in the inventory"));
            let result = self.finish(host, errored(diag));
            return TaskOutcome { items: Vec::new(), result, diff: false, failed_task: None };
        };
        crate::reserved::warn_scope(&scope, self.vars.extra());
        let diff = match self.diff_mode(&scope) {
            Ok(diff) => diff,
            Err(d) => {
                let mut result = self.finish(host, errored(d));
                result.data.insert(s("changed"), b(false));
                return TaskOutcome { items: Vec::new(), result, diff: false, failed_task: None };
            }
        };
        let ignore_errors = match self.flag(Keyword::IgnoreErrors, &scope) {
            Ok(v) => v,
            Err(d) => {
                let result = self.finish(host, errored(d));
                return TaskOutcome { items: Vec::new(), result, diff, failed_task: None };
            }
        };
        let mut events = Vec::new();
        let outcome = match &self.ctx.task.loop_items {
            None => self.run_once(host, &scope, &trace, &mut events).map(|r| (Vec::new(), r)),
            Some(items) => self.run_loop(host, &scope, &trace, items, ignore_errors),
        };
        let (mut items, mut result) = match outcome {
            Ok((items, result)) => {
                events.extend(items);
                (events, result)
            }
            Err(diag) => (events, self.finish(host, errored(diag))),
        };
        // A loop's own result is hidden when the task's `no_log` (rendered without an item)
        // or any item's is; each item and retry decided for itself in the loop.
        let hidden = self.no_log(&scope);
        result.no_log = hidden;
        if self.ctx.task.loop_items.is_none() {
            let delegated =
                self.delegated(host, &scope).ok().flatten().map(|o| self.delegated_label(&o));
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
                TaskEvent::Retry(r) if self.ctx.task.loop_items.is_none() => r.no_log = hidden,
                TaskEvent::Item(r) => result.no_log |= r.no_log,
                TaskEvent::Retry(_) | TaskEvent::Async(_) | TaskEvent::Transport(..) => {}
            }
        }
        if result.flag("failed") && ignore_errors {
            result.ignored = true;
        }
        if result.flag("unreachable") {
            result.ignore_unreachable =
                self.flag(Keyword::IgnoreUnreachable, &scope).unwrap_or(false);
        }
        self.plan_leaves(host, &result);
        if let Some(node) = self.ctx.task.attrs.get(Keyword::Register) {
            let name = tack_yaml::pyrepr::str(&node.value);
            crate::reserved::warn_name(&name, node.origin.as_ref());
            let provenance = if let Some(unknown) = self.plan_register_provenance(&result) {
                unknown
            } else if self.action.trusted_result() {
                Provenance::Trusted
            } else {
                Provenance::ManagedHost
            };
            for target in std::iter::once(host).chain(self.fanout.iter().map(String::as_str)) {
                self.vars.set_host_var(
                    target,
                    &name,
                    Node::bare(Value::Map(result.data.clone())),
                    provenance.clone(),
                );
            }
        }
        let failed_task =
            (result.flag("failed") && !result.ignored).then(|| self.failed_task(&scope));
        TaskOutcome { items, result, diff, failed_task }
    }

    fn run_once(
        &self,
        host: &str,
        scope: &Scope,
        trace: &Arc<Trace>,
        events: &mut Vec<TaskEvent>,
    ) -> Result<HostResult, Diagnostic> {
        let gate = self.plan_gate(host, scope)?;
        if let Some(planned) = gate.planned {
            self.plan_note(host, &gate.writes, &planned);
            return Ok(planned);
        }
        // ansible works out the delegation (gathering the delegated host's variables) before
        // it evaluates the conditions.
        let delegated = self.delegated(host, scope);
        if self.gathers_delegated(host, scope, &delegated) {
            events.extend(self.reads.lines().iter().map(|l| TaskEvent::Transport(3, l.clone())));
        }
        if let Some(cond) = self.false_condition(scope)? {
            return Ok(tack_report::result::skipped(host, &cond));
        }
        let mut result = match delegated? {
            Some(other) => {
                self.attempts(host, &self.delegated_scope(scope, host, &other), trace, events)
            }
            None => self.attempts(host, scope, trace, events),
        }?;
        self.plan_mark_ran(scope, &mut result);
        self.plan_note(host, &gate.writes, &result);
        Ok(result)
    }

    /// The task's effective check mode: its own or an ancestor's `check_mode`, else `--check`.
    pub(crate) fn check_mode(&self, scope: &Scope) -> bool {
        match self.ctx.inherited(Keyword::CheckMode) {
            Some(node) => {
                self.templar.render(node, scope).map(|r| r.value.value.is_truthy()).unwrap_or(false)
            }
            None => self.check_flag,
        }
    }

    /// The task's effective diff mode: its own or an ancestor's `diff` (templated, then
    /// converted as ansible's bool keywords are), else `--diff`.
    pub(crate) fn diff_mode(&self, scope: &Scope) -> Result<bool, Diagnostic> {
        let Some(node) = self.ctx.inherited(Keyword::Diff) else { return Ok(self.diff_flag) };
        bool_keyword(self.templar, "diff", node, scope, self.task_origin())
    }

    /// `Task.get_search_path`: the task's role and the roles above it, then the play's
    /// directory.
    fn search_path(&self) -> actions::copy::SearchPath {
        let mut roles = Vec::new();
        for id in self.ctx.dep_chain.iter().rev() {
            roles.push(self.play.role(*id).path.clone());
        }
        let basedir = tack_playbook::play_vars::play_basedir(self.play);
        let task_dir = self
            .ctx
            .task
            .origin
            .as_ref()
            .and_then(|o| o.path.as_ref())
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| basedir.clone());
        actions::copy::SearchPath { basedir, roles, task_dir }
    }

    /// What `pause` announces on `host` before it waits (nothing when its `when` is false
    /// or its arguments do not render; running it then reports that).
    pub(crate) fn announce(&self, host: &str) -> Vec<String> {
        let Some(scope) = self.scope(host) else { return Vec::new() };
        if !matches!(self.false_condition(&scope), Ok(None)) {
            return Vec::new();
        }
        let mut args = Mapping::new();
        for (key, value) in self.ctx.task.args.iter() {
            match self.templar.render(value, &scope) {
                Ok(rendered) => {
                    args.insert(key.clone(), rendered.value);
                }
                Err(e) if e.kind == TemplateErrorKind::Omitted => {}
                Err(_) => return Vec::new(),
            }
        }
        actions::pause::announce(&args)
    }

    /// Renders the arguments and runs the action; the notes of an `async` job it waits for
    /// go to `events`.
    pub(crate) fn execute(
        &self,
        host: &str,
        scope: &Scope,
        trace: &Arc<Trace>,
        events: &mut Vec<TaskEvent>,
    ) -> ActionOutput {
        if self.action == Action::Unresolvable {
            let name = &self.ctx.task.action;
            let cause = Diagnostic::at(
                format!("Cannot resolve '{name}' to an action or module."),
                self.ctx.task.action_origin.clone(),
            );
            return actions::errored(Diagnostic::caused_by(
                "Task failed.",
                self.task_origin(),
                cause,
            ));
        }
        if !self.action.takes_raw_params() && self.ctx.task.args.get("_raw_params").is_some() {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let msg = format!(
                "Task failed: Action '{}' does not support raw params.",
                self.action.fqcn()
            );
            data.insert(s("msg"), s(&msg));
            data.insert(s("failed"), b(true));
            return ActionOutput {
                data,
                verbose_always: false,
                error: Some(Diagnostic::at(msg, self.task_origin())),
                facts: Vec::new(),
                included: Vec::new(),
                raised: true,
                unavailable: None,
            };
        }
        let kept = self.rendered.take(&self.vars.versions, host);
        let rendered = match kept.map_or_else(|| self.render_args(scope), Ok) {
            Ok(rendered) => rendered,
            Err(diag) => return actions::errored(diag),
        };
        let RenderedArgs { args, provenance, host_named, .. } = rendered;
        let search = self.search_path();
        let environment = match self.environment(scope) {
            Ok(env) => env,
            Err(d) => {
                return actions::errored(Diagnostic::caused_by(
                    "Task failed.",
                    self.task_origin(),
                    d,
                ));
            }
        };
        let async_keywords = match self.async_keywords(scope) {
            Ok(keywords) => keywords,
            Err(d) => return actions::errored(d),
        };
        let notes = std::cell::RefCell::new(Vec::new());
        let async_task = async_keywords.map(|(limit, poll)| tack_actions::async_job::AsyncTask {
            limit,
            poll,
            host,
            notes: &notes,
        });
        let link = if self.action.touches_host() {
            match self.link(host, scope, trace) {
                Ok(link) => Some(link),
                Err(output) => {
                    // What the connection said while it failed to open (a retried ssh) shows
                    // with the task.
                    let address = crate::verbose::address(self, host, scope);
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
        let discovered =
            link.as_deref().and_then(|conn| self.discover_interpreter(host, scope, conn, trace));
        let relink = |connect_timeout| self.fresh_link(host, scope, connect_timeout, trace);
        // Actions that never touch the host get the controller itself, as ansible's do.
        let local = tack_links::Traced::new(Arc::new(tack_links::InProcess), Reach::Local, trace);
        let python = match self.action {
            Action::Python(_) | Action::Unarchive | Action::Dnf | Action::Package => {
                self.python_for(scope, discovered.as_deref())
            }
            _ => None,
        };
        // Only the actions that ask are told which link the host's is (`reboot` refuses a
        // local one, `fetch` skips its stat under become).
        let link_target = matches!(self.action, Action::Reboot | Action::Fetch)
            .then(|| self.link_target(host, scope).ok())
            .flatten();
        let output = actions::run(&ActionInput {
            action: self.action,
            args: &args,
            scope,
            templar: self.templar,
            task_origin: self.task_origin(),
            task_name: &self.banner_name,
            verbosity: self.verbosity,
            derived: provenance.derived(),
            check_mode: self.check_mode(scope),
            // An unconvertible `diff` already failed the task before it got here. A plan asks
            // every module for its diff, for the fields a change would touch; it is shown only
            // where diff mode is on.
            diff: self.diff_mode(scope).unwrap_or(false) || self.planning,
            diff_settings: self.diff_settings,
            async_dir: self.async_dir,
            search: &search,
            host_named: &host_named,
            inventory: self.inventory,
            environment: &environment,
            timeout: self.timeout(scope),
            async_task: async_task.as_ref(),
            delegated: self.ctx.task.delegate_to.is_some(),
            local_connection: matches!(&link_target, Some((LinkTarget::Local, _))),
            becomes: matches!(&link_target, Some((_, Some(_)))),
            conn: link.as_deref().unwrap_or(&local),
            trace,
            relink: &relink,
            python: python.as_deref(),
        });
        let uses = trace.take();
        if !uses.is_empty() {
            let address = crate::verbose::address(self, host, scope);
            events.extend(
                trace
                    .lines(&address, uses)
                    .into_iter()
                    .map(|(level, line)| TaskEvent::Transport(level, line)),
            );
        }
        events.extend(notes.into_inner().into_iter().map(TaskEvent::Async));
        let mut output = output;
        if let Some(path) = discovered {
            // The result that discovered the interpreter carries it, as ansible's does.
            let mut facts = output
                .data
                .get("ansible_facts")
                .and_then(Node::as_map)
                .cloned()
                .unwrap_or_default();
            facts.insert(s(tack_links::interpreter::FACT), s(&path));
            output.data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
        }
        output
    }

    /// The interpreter a Python-path module runs with when no `ansible_python_interpreter`
    /// is set: a path `interpreter_python` names, else the one discovered now or before.
    fn python_for(&self, scope: &Scope, discovered: Option<&str>) -> Option<String> {
        let mode = &self.interpreter.mode;
        if !mode.is_empty() && !self.interpreter.discovers() {
            return Some(mode.clone());
        }
        discovered.map(str::to_string).or_else(|| {
            tack_links::interpreter::known(scope).map(|found| tack_yaml::pyrepr::str(&found.value))
        })
    }

    /// Interpreter discovery for `host` before its first module (see `crate::interpreter`):
    /// the interpreter found, when this run of the task discovered one. Not for a delegated
    /// task, whose delegated host's facts ansible would keep it in.
    fn discover_interpreter(
        &self,
        host: &str,
        scope: &Scope,
        conn: &dyn tack_links::Connection,
        trace: &Trace,
    ) -> Option<String> {
        let runs_python = !matches!(self.action, Action::Raw | Action::Script);
        if !runs_python
            || !self.interpreter.discovers()
            || self.ctx.task.delegate_to.is_some()
            || scope.get("ansible_python_interpreter").is_some()
        {
            return None;
        }
        let known = tack_links::interpreter::known(scope).is_some();
        // A panic while the set was held leaves it whole (inserts are single calls).
        let mut done = self.discovered.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if known || !done.insert(host.to_string()) {
            return None;
        }
        drop(done);
        let names = tack_links::interpreter::names(scope, self.interpreter);
        Some(tack_links::interpreter::discover(conn, trace, host, self.interpreter, &names))
    }

    /// The task's `async` seconds and `poll` interval, when it runs as a job (`async` above
    /// 0; `poll` is 15 when unset, as ansible's `DEFAULT_POLL_INTERVAL`).
    fn async_keywords(&self, scope: &Scope) -> Result<Option<(u64, u64)>, Diagnostic> {
        let limit = self.int_keyword(Keyword::Async, scope)?.unwrap_or(0);
        if limit <= 0 {
            return Ok(None);
        }
        let poll = self.int_keyword(Keyword::Poll, scope)?.unwrap_or(15).max(0);
        Ok(Some((limit.unsigned_abs(), poll.unsigned_abs())))
    }

    /// The task's `timeout`, when it has a positive one.
    fn timeout(&self, scope: &Scope) -> Option<u64> {
        let secs = self.int_keyword(Keyword::Timeout, scope).ok().flatten()?;
        u64::try_from(secs).ok().filter(|s| *s > 0)
    }

    /// The task's arguments rendered in `scope` (those the action takes raw kept as written;
    /// omitted ones dropped), with what the renders read; the error is ansible's chain for an
    /// argument that failed to render.
    pub(crate) fn render_args(&self, scope: &Scope) -> Result<RenderedArgs, Diagnostic> {
        let raw = self.action.raw_args();
        let mut out = RenderedArgs::default();
        let defaults = self
            .default_args(scope)
            .map_err(|d| Diagnostic::caused_by("Task failed.", self.task_origin(), d))?;
        for (key, value) in self.ctx.task.args.iter().chain(defaults.iter()) {
            let name = key.as_str().unwrap_or_default();
            if raw.contains(&name) {
                out.args.insert(key.clone(), value.clone());
                continue;
            }
            match self.templar.render(value, scope) {
                Ok(rendered) => {
                    out.provenance.extend(&rendered.provenance);
                    if rendered.provenance.is_managed_host() {
                        out.host_named.push(name.to_string());
                    }
                    if rendered.provenance.is_sealed() {
                        out.sealed.push(name.to_string());
                    }
                    out.args.insert(key.clone(), rendered.value);
                }
                Err(e) if e.kind == TemplateErrorKind::Omitted => {}
                Err(e) => {
                    let mut cause = Diagnostic::at(
                        format!("Error while resolving value for '{name}': {}", e.message),
                        e.origin.clone().or_else(|| value.origin.clone()),
                    );
                    // A value written outside any file (`-a` of the ad-hoc command) is shown
                    // as itself under its origin, as ansible shows an untagged source.
                    if cause.origin == value.origin
                        && value.origin.as_ref().is_some_and(|o| o.path.is_none())
                        && let Value::Str(text) = &value.value
                    {
                        cause.value_repr = Some(text.clone());
                    }
                    let middle = Diagnostic::caused_by(
                        format!("Finalization of task args for '{}' failed.", self.action.fqcn()),
                        None,
                        cause,
                    );
                    return Err(Diagnostic::caused_by("Task failed.", self.task_origin(), middle));
                }
            }
        }
        Ok(out)
    }

    /// The facts and variables an action set, made the host's.
    pub(crate) fn apply_facts(
        &self,
        host: &str,
        facts: &[(String, Node, Provenance)],
        included: &[(String, Node)],
    ) {
        // `run_once`: the facts are every host's of the batch.
        for (name, value, provenance) in facts {
            for target in std::iter::once(host).chain(self.fanout.iter().map(String::as_str)) {
                self.vars.set_host_var(target, name, value.clone(), provenance.clone());
            }
        }
        for (name, value) in included {
            self.vars.set_included_var(host, name, value.clone());
        }
    }

    /// Applies the action's facts (unless `apply` is false: the retry loop applies those of
    /// the run it keeps), then `changed_when` and `failed_when`, which see `attempts`.
    pub(crate) fn judge(
        &self,
        host: &str,
        scope: &Scope,
        output: ActionOutput,
        attempt: Option<i64>,
        apply: bool,
    ) -> HostResult {
        if apply {
            self.apply_facts(&self.fact_host(host, scope), &output.facts, &output.included);
            // What a module or action plugin returned as facts (`setup`, `gather_facts`, the
            // Python path's modules, `dnf`'s `pkg_mgr`); `set_fact` and `include_vars` set
            // host variables instead.
            let facts = output.data.get("ansible_facts").and_then(Node::as_map);
            let module_facts = !matches!(self.action, Action::SetFact | Action::IncludeVars);
            if let (true, Some(facts)) = (module_facts, facts)
                && !output.data.get("failed").is_some_and(|f| f.value.is_truthy())
            {
                let mut facts = facts.clone();
                if self.action == Action::GatherFacts {
                    // ansible's action marks what it gathered (`gather_facts: smart` reads it).
                    facts.insert(s("_ansible_facts_gathered"), b(true));
                }
                self.vars.merge_module_facts(&self.fact_host(host, scope), &facts);
            } else if let Some(path) = facts.and_then(|f| f.get(tack_links::interpreter::FACT)) {
                // The interpreter discovery found is the host's fact, failed task or not.
                let mut only = Mapping::new();
                only.insert(s(tack_links::interpreter::FACT), path.clone());
                self.vars.merge_module_facts(&self.fact_host(host, scope), &only);
            }
        }
        // A render of the action's own that read unavailable output: the plan cannot know.
        if self.planning
            && let Some(producer) = &output.unavailable
        {
            return tack_report::plan_mark::deferred(host, producer);
        }
        let raised = output.raised;
        let mut result = self.finish(host, output);
        // A module that declined check mode did not run: in a plan, it would.
        if self.planning && tack_report::plan_mark::declined_check_mode(&result) {
            return tack_report::plan_mark::would_run(host);
        }
        if let Some(attempt) = attempt {
            result.data.insert(s("attempts"), Node::bare(Value::Int(attempt)));
        }
        if raised {
            return result;
        }
        let register =
            self.ctx.task.attrs.get(Keyword::Register).map(|n| tack_yaml::pyrepr::str(&n.value));
        let judged_scope = match &register {
            Some(name) => scope.with_var(
                name,
                Node::bare(Value::Map(result.data.clone())),
                Provenance::ManagedHost,
            ),
            None => scope.clone(),
        };
        if let Some(cond) = self.ctx.task.attrs.get(Keyword::ChangedWhen) {
            match self.all_true(cond, &judged_scope) {
                Ok(changed) => {
                    result.data.insert(s("changed"), b(changed));
                    result.data.insert(s("changed_when_result"), b(changed));
                }
                Err(d) => return self.finish(host, errored(d)),
            }
        }
        if let Some(cond) = self.ctx.task.attrs.get(Keyword::FailedWhen) {
            match self.all_true(cond, &judged_scope) {
                Ok(failed) => {
                    let module_failed =
                        matches!(self.action, Action::Module(_)) && result.flag("failed");
                    let error =
                        crate::failed_task::failed_when_judged(&mut result, module_failed, failed);
                    // A true `failed_when` replaces whatever error the action raised.
                    result.error = error.map(|text| Diagnostic::at(text, self.task_origin()));
                }
                Err(d) => return self.finish(host, errored(d)),
            }
        }
        result
    }

    fn all_true(&self, cond: &Node, scope: &Scope) -> Result<bool, Diagnostic> {
        let items: Vec<&Node> = match &cond.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![cond],
        };
        for item in items {
            let r = self.templar.evaluate_conditional(item, scope).map_err(|e| {
                Diagnostic::caused_by("Task failed.", self.task_origin(), e.to_diagnostic())
            })?;
            if !r.value {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn finish(&self, host: &str, output: ActionOutput) -> HostResult {
        let mut data = output.data;
        // Every result ansible registers says whether it failed.
        if data.get("failed").is_none() {
            data.insert(s("failed"), b(false));
        }
        let mut result = HostResult::new(host, data);
        result.verbose_always = output.verbose_always;
        // A result carrying facts is not shown, as ansible marks fact-gathering results.
        result.verbose_override =
            matches!(self.action, Action::Module("setup") | Action::GatherFacts);
        result.error = output.error;
        result
    }
}

fn errored(diag: Diagnostic) -> ActionOutput {
    actions::errored(diag)
}

/// A bool keyword as `TaskExecutor`'s `post_validate` reads it for one host: `node`
/// templated with `scope`, then converted (`yes`, `0`, ...), with ansible's three-part error
/// (`Task failed.` / `Error processing keyword 'NAME'.` / the conversion's words) when it
/// cannot be.
pub(crate) fn bool_keyword(
    templar: &Templar,
    name: &str,
    node: &Node,
    scope: &Scope,
    task_origin: Option<tack_diag::Origin>,
) -> Result<bool, Diagnostic> {
    let keyword_error = |cause: Diagnostic| {
        let middle = Diagnostic::caused_by(
            format!("Error processing keyword '{name}'."),
            node.origin.clone(),
            cause,
        );
        Diagnostic::caused_by("Task failed.", task_origin.clone(), middle)
    };
    let mut rendered =
        templar.render(node, scope).map_err(|e| keyword_error(e.to_diagnostic()))?.value;
    rendered.origin = Templar::sole_variable_origin(node, scope).or_else(|| node.origin.clone());
    let valid = tack_playbook::post_validate::validated_value(
        name,
        tack_playbook::tables::Isa::Bool,
        &[],
        false,
        rendered,
    )
    .map_err(keyword_error)?;
    Ok(valid.value.is_truthy())
}
