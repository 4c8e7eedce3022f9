//! A looped task on one host, as ansible's `TaskExecutor._run_loop` runs it: the loop
//! source rendered into items (`loop:` or a `with_<lookup>`), each item's `when`, action and
//! loop controls, and the looped result built from the items' results. A plan's gate is
//! asked before each item (see `crate::plan`). Nothing here prints.

use tack_diag::Diagnostic;
use tack_template::{Provenance, ProvenanceSet, Scope, TemplateErrorKind};
use tack_yaml::{Mapping, Node, Value};

use crate::loop_control::LoopControl;
use crate::task::{TaskEvent, TaskRun};
use tack_report::result::{HostResult, b, s};

impl TaskRun<'_> {
    pub(crate) fn run_loop(
        &self,
        host: &str,
        scope: &Scope,
        trace: &std::sync::Arc<tack_links::Trace>,
        items: &Node,
        ignore_errors: bool,
    ) -> Result<(Vec<TaskEvent>, HostResult), Diagnostic> {
        let _ = ignore_errors;
        // A plan does not loop over a list it cannot know yet.
        if self.planning
            && let Some(producer) =
                self.templar.static_provenance(items, scope).unavailable().next()
        {
            return Ok((Vec::new(), tack_report::plan_mark::deferred(host, producer)));
        }
        let (list, read) = match &self.ctx.task.loop_with {
            Some(lookup) => self.with_items(lookup, items, scope)?,
            None => self.loop_items(items, scope)?,
        };
        if self.planning
            && let Some(producer) = read.unavailable().next()
        {
            return Ok((Vec::new(), tack_report::plan_mark::deferred(host, producer)));
        }
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
            control.pause_before(index);
            // Each item sees what earlier items set (`set_fact` in a loop accumulates).
            let scope = &self.scope(host).unwrap_or_else(|| scope.clone());
            let item_scope = control.item_scope(
                scope.with_var(&control.loop_var, item.clone(), loop_provenance(&read)),
                &list,
                index,
            );
            let mut retries = Vec::new();
            let delegated = self.delegated(host, &item_scope);
            if self.gathers_delegated(host, &item_scope, &delegated) {
                shown.extend(self.reads.lines().iter().map(|l| TaskEvent::Transport(3, l.clone())));
            }
            let delegated = delegated?;
            let gate = self.plan_gate(host, &item_scope)?;
            let planned = gate.planned;
            let condition = match planned {
                Some(_) => None,
                None => self.false_condition(&item_scope)?,
            };
            let mut result = match (planned, condition) {
                (Some(planned), _) => planned,
                (None, Some(cond)) => tack_report::result::skipped(host, &cond),
                (None, None) => match &delegated {
                    Some(other) => {
                        let there = self.delegated_scope(&item_scope, host, other);
                        self.attempts(host, &there, trace, &mut retries)?
                    }
                    None => self.attempts(host, &item_scope, trace, &mut retries)?,
                },
            };
            self.plan_mark_ran(&item_scope, &mut result);
            self.plan_note(host, &gate.writes, &result);
            let loop_keys = |data: &mut Mapping| control.result_keys(data, &list, index);
            loop_keys(&mut result.data);
            result.no_log = self.no_log(&item_scope);
            result.delegated = delegated.map(|o| self.delegated_label(&o));
            for retry in retries {
                match retry {
                    TaskEvent::Retry(mut r) => {
                        loop_keys(&mut r.data);
                        r.no_log = result.no_log;
                        r.delegated = result.delegated.clone();
                        shown.push(TaskEvent::Retry(r));
                    }
                    note @ (TaskEvent::Async(_) | TaskEvent::Transport(..)) => shown.push(note),
                    TaskEvent::Item(_) => {}
                }
            }
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
            let broke = control.break_here(self, &item_scope, &mut result);
            shown.push(TaskEvent::Item(result.clone()));
            result.data.remove("_ansible_item_label");
            results.push(result);
            if broke {
                break;
            }
        }
        Ok((shown, aggregate(host, results)))
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

    pub(crate) fn loop_error(&self, e: tack_template::TemplateError) -> Diagnostic {
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
}

/// Loop items come from the loop's render: whatever it read decides their provenance.
fn loop_provenance(read: &ProvenanceSet) -> Provenance {
    read.derived()
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
    let mut result = HostResult::new(host, data);
    result.plan = tack_report::plan_mark::merge(&items);
    result
}
