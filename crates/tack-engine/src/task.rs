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

use crate::actions::{self, Action, ActionInput, ActionOutput};
use crate::result::{HostResult, b, s};
use crate::vars::PlayScope;

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
    /// The include parameters of the `include_tasks` that brought the task in (its `vars`
    /// and loop variable).
    pub params: Option<Arc<tack_template::Layer>>,
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

/// A host's outcome for one task: the per-item results (for loops) and the final one.
pub struct TaskOutcome {
    pub items: Vec<HostResult>,
    pub result: HostResult,
}

impl TaskRun<'_> {
    fn task_origin(&self) -> Option<tack_diag::Origin> {
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

    fn flag(&self, keyword: Keyword, scope: &Scope) -> Result<bool, Diagnostic> {
        let Some(node) = self.ctx.inherited(keyword) else { return Ok(false) };
        let rendered = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        Ok(rendered.value.value.is_truthy())
    }

    /// Runs the task on `host`.
    pub fn run(&self, host: &str) -> TaskOutcome {
        let Some(scope) = self.scope(host) else {
            let diag = Diagnostic::new(format!("host {host} is not in the inventory"));
            return TaskOutcome { items: Vec::new(), result: self.finish(host, errored(diag)) };
        };
        let ignore_errors = match self.flag(Keyword::IgnoreErrors, &scope) {
            Ok(v) => v,
            Err(d) => {
                return TaskOutcome { items: Vec::new(), result: self.finish(host, errored(d)) };
            }
        };
        let outcome = match &self.ctx.task.loop_items {
            None => self.run_once(host, &scope).map(|r| (Vec::new(), r)),
            Some(items) => self.run_loop(host, &scope, items, ignore_errors),
        };
        let (items, mut result) = match outcome {
            Ok(pair) => pair,
            Err(diag) => (Vec::new(), self.finish(host, errored(diag))),
        };
        if result.flag("failed") && ignore_errors {
            result.ignored = true;
        }
        if let Some(name) = self.ctx.task.attrs.get(Keyword::Register) {
            let name = tack_yaml::pyrepr::str(&name.value);
            let provenance = if self.action.trusted_result() {
                Provenance::Trusted
            } else {
                Provenance::ManagedHost
            };
            self.vars.set_host_var(
                host,
                &name,
                Node::bare(Value::Map(result.data.clone())),
                provenance,
            );
        }
        TaskOutcome { items, result }
    }

    fn run_once(&self, host: &str, scope: &Scope) -> Result<HostResult, Diagnostic> {
        if let Some(cond) = self.false_condition(scope)? {
            return Ok(crate::result::skipped(host, &cond));
        }
        let output = self.execute(scope);
        Ok(self.judge(host, scope, output))
    }

    fn run_loop(
        &self,
        host: &str,
        scope: &Scope,
        items: &Node,
        ignore_errors: bool,
    ) -> Result<(Vec<HostResult>, HostResult), Diagnostic> {
        let _ = ignore_errors;
        let (list, read) = match &self.ctx.task.loop_with {
            Some(lookup) => self.with_items(lookup, items, scope)?,
            None => self.loop_items(items, scope)?,
        };
        let control = LoopControl::read(self, scope)?;
        let mut results = Vec::new();
        let mut shown = Vec::new();
        if list.is_empty() {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            data.insert(s("results"), Node::bare(Value::Seq(Vec::new())));
            data.insert(s("skip_reason"), s("No items in the list"));
            data.insert(s("skipped"), b(true));
            data.insert(s("skipped_reason"), s("No items in the list"));
            data.insert(s("failed"), b(false));
            return Ok((Vec::new(), HostResult::new(host, data)));
        }
        for (index, item) in list.iter().enumerate() {
            // Each item sees what earlier items set (`set_fact` in a loop accumulates).
            let scope = &self.scope(host).unwrap_or_else(|| scope.clone());
            let mut item_scope =
                scope.with_var(&control.loop_var, item.clone(), loop_provenance(&read));
            if let Some(index_var) = &control.index_var {
                item_scope = item_scope.with_var(
                    index_var,
                    Node::bare(Value::Int(index as i64)),
                    Provenance::Trusted,
                );
            }
            let mut result = match self.false_condition(&item_scope)? {
                Some(cond) => crate::result::skipped(host, &cond),
                None => {
                    let output = self.execute(&item_scope);
                    self.judge(host, &item_scope, output)
                }
            };
            result.data.insert(s(&control.loop_var), item.clone());
            if let Some(index_var) = &control.index_var {
                result.data.insert(s(index_var), Node::bare(Value::Int(index as i64)));
                result.data.insert(s("ansible_index_var"), s(index_var));
            }
            result.data.insert(s("ansible_loop_var"), s(&control.loop_var));
            if result.data.get("failed").is_none() {
                result.data.insert(s("failed"), b(false));
            }
            result.item_label = Some(match &control.label {
                Some(label) => self
                    .templar
                    .render(label, &item_scope)
                    .map(|r| r.value)
                    .map_err(|e| e.to_diagnostic())?,
                None => item.clone(),
            });
            if let Some(label) = &control.label {
                let _ = label;
                result.data.insert(
                    s("_ansible_item_label"),
                    result.item_label.clone().unwrap_or_else(|| item.clone()),
                );
            }
            shown.push(result.clone());
            result.data.remove("_ansible_item_label");
            results.push(result);
        }
        Ok((shown, aggregate(host, results)))
    }

    /// The task's effective check mode: its own or an ancestor's `check_mode`, else `--check`.
    fn check_mode(&self, scope: &Scope) -> bool {
        match self.ctx.inherited(Keyword::CheckMode) {
            Some(node) => {
                self.templar.render(node, scope).map(|r| r.value.value.is_truthy()).unwrap_or(false)
            }
            None => self.check_flag,
        }
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

    /// `loop:`: a template that must give a list.
    pub(crate) fn loop_items(
        &self,
        items: &Node,
        scope: &Scope,
    ) -> Result<(Vec<Node>, ProvenanceSet), Diagnostic> {
        let rendered = self.templar.render(items, scope).map_err(|e| self.loop_error(e))?;
        match rendered.value.value {
            Value::Seq(list) => Ok((list, rendered.provenance)),
            other => Err(Diagnostic::at(
                format!(
                    "The `loop` value must resolve to a 'list', not '{}'.",
                    Node::bare(other).python_type()
                ),
                items.origin.clone(),
            )
            .with_help("Provide a list of items/templates, or a template resolving to a list.")),
        }
    }

    /// `with_<lookup>:`: the terms given to the lookup, as ansible's task executor does.
    pub(crate) fn with_items(
        &self,
        lookup: &str,
        terms: &Node,
        scope: &Scope,
    ) -> Result<(Vec<Node>, ProvenanceSet), Diagnostic> {
        tack_template::lookups::run_task_loop(
            self.templar,
            lookup,
            terms,
            scope,
            Some(&self.ctx.task.action),
        )
        .map_err(|e| self.loop_error(e))
    }

    fn loop_error(&self, e: tack_template::TemplateError) -> Diagnostic {
        if e.kind == TemplateErrorKind::Undefined {
            Diagnostic::caused_by(
                "Task failed.",
                self.task_origin(),
                Diagnostic::at(e.message.clone(), e.origin.clone()),
            )
        } else {
            e.to_diagnostic()
        }
    }

    /// Renders the arguments and runs the action.
    fn execute(&self, scope: &Scope) -> ActionOutput {
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
            };
        }
        let rendered = match self.render_args(scope) {
            Ok(rendered) => rendered,
            Err(diag) => return actions::errored(diag),
        };
        let RenderedArgs { args, provenance, host_named, .. } = rendered;
        let search = self.search_path();
        actions::run(&ActionInput {
            action: self.action,
            args: &args,
            scope,
            templar: self.templar,
            task_origin: self.task_origin(),
            verbosity: self.verbosity,
            derived: provenance.derived(),
            check_mode: self.check_mode(scope),
            diff: false,
            search: &search,
            host_named: &host_named,
        })
    }

    /// The task's arguments rendered in `scope` (those the action takes raw kept as written;
    /// omitted ones dropped), with what the renders read; the error is ansible's chain for an
    /// argument that failed to render.
    pub(crate) fn render_args(&self, scope: &Scope) -> Result<RenderedArgs, Diagnostic> {
        let raw = self.action.raw_args();
        let mut out = RenderedArgs::default();
        for (key, value) in self.ctx.task.args.iter() {
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

    /// Applies the action's facts, then `changed_when` and `failed_when`.
    fn judge(&self, host: &str, scope: &Scope, output: ActionOutput) -> HostResult {
        for (name, value, provenance) in &output.facts {
            self.vars.set_host_var(host, name, value.clone(), provenance.clone());
        }
        for (name, value) in &output.included {
            self.vars.set_included_var(host, name, value.clone());
        }
        let raised = output.raised;
        let mut result = self.finish(host, output);
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
                    result.data.insert(s("failed_when_result"), b(failed));
                    result.data.insert(s("failed"), b(failed));
                    if !failed {
                        result.error = None;
                    } else if result.error.is_none() {
                        result.error =
                            Some(Diagnostic::at("Task failed: Action failed.", self.task_origin()));
                    }
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
        result.verbose_override = matches!(self.action, Action::Module("setup"));
        result.error = output.error;
        result
    }
}

fn errored(diag: Diagnostic) -> ActionOutput {
    actions::errored(diag)
}

/// Loop items come from the loop's render: whatever it read decides their provenance.
fn loop_provenance(read: &ProvenanceSet) -> Provenance {
    read.derived()
}

/// `loop_control` as far as tack runs it.
pub(crate) struct LoopControl {
    pub loop_var: String,
    pub index_var: Option<String>,
    label: Option<Node>,
}

impl LoopControl {
    pub(crate) fn read(run: &TaskRun<'_>, scope: &Scope) -> Result<LoopControl, Diagnostic> {
        let mut control = LoopControl { loop_var: "item".into(), index_var: None, label: None };
        let Some(node) = run.ctx.task.attrs.get(Keyword::LoopControl) else { return Ok(control) };
        let Some(map) = node.as_map() else { return Ok(control) };
        for (key, value) in map.iter() {
            match key.as_str().unwrap_or_default() {
                "loop_var" => {
                    let v = run.templar.render(value, scope).map_err(|e| e.to_diagnostic())?;
                    control.loop_var = tack_yaml::pyrepr::str(&v.value.value);
                }
                "index_var" => {
                    let v = run.templar.render(value, scope).map_err(|e| e.to_diagnostic())?;
                    control.index_var = Some(tack_yaml::pyrepr::str(&v.value.value));
                }
                "label" => control.label = Some(value.clone()),
                _ => {}
            }
        }
        Ok(control)
    }
}

/// A looped task's result from its items, as ansible's `TaskExecutor._run_loop` builds it.
fn aggregate(host: &str, items: Vec<HostResult>) -> HostResult {
    let mut data = Mapping::new();
    let changed = items.iter().any(|r| r.flag("changed"));
    let failed = items.iter().any(|r| r.flag("failed"));
    let all_skipped = !items.is_empty() && items.iter().all(|r| r.flag("skipped"));
    data.insert(s("changed"), b(changed));
    if failed {
        data.insert(s("failed"), b(true));
        data.insert(s("msg"), s("One or more items failed"));
    } else {
        data.insert(s("failed"), b(false));
        if all_skipped {
            data.insert(s("msg"), s("All items skipped"));
        } else {
            data.insert(s("msg"), s("All items completed"));
        }
    }
    let list: Vec<Node> = items.iter().map(|r| Node::bare(Value::Map(r.data.clone()))).collect();
    data.insert(s("results"), Node::bare(Value::Seq(list)));
    if all_skipped {
        data.insert(s("skipped"), b(true));
    }
    HostResult::new(host, data)
}
