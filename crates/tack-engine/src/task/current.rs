//! ansible 2.21's `_task` variable: the current task's results as its conditionals, loop
//! labels and register projections see them (`result`, `loop_result`, `polymorphic_result`),
//! and what each item of a loop sees of the items before it.
//!
//! Builds scopes only: it never runs an action and never changes a host's variables.

use std::sync::Arc;

use tack_report::result::{HostResult, s};
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use crate::task::items::aggregate_data;
use crate::task::reading::{Reading, expression_template};

impl Reading<'_> {
    /// `scope` with `data` as the task's latest result: `_task.result` and
    /// `_task.polymorphic_result`, and the task's `register` name or projections. Inside a
    /// loop whose item scope carries `_task.loop_result` (see [`Reading::with_earlier_items`]),
    /// that preview gains this result, as ansible records an item's result before judging
    /// it. What `until`, `changed_when`/`failed_when`, `loop_control.break_when` and the
    /// label judge.
    pub(crate) fn with_registered(&self, scope: &Scope, data: &Mapping) -> Scope {
        let so_far = earlier_results(scope).map(|mut earlier| {
            earlier.push(data.clone());
            aggregate_data(earlier.iter())
        });
        self.with_task_state(scope, Some(data), so_far)
    }

    /// The scope of a loop's item: once an earlier item recorded its result, the item sees
    /// that result as `_task.result` and under the task's `register` name or projections
    /// (ansible enables a task's registered variables at its first result, for its later
    /// items too); `_task.loop_result` is the loop so far when the task reads `_task` at
    /// all (`reads_task`: the preview costs a copy of every earlier result per item).
    pub(crate) fn with_earlier_items(
        &self,
        scope: &Scope,
        done: &[HostResult],
        reads_task: bool,
    ) -> Scope {
        let so_far = reads_task.then(|| aggregate_data(done.iter().map(|r| &r.data)));
        match done.last() {
            Some(latest) => self.with_task_state(scope, Some(&latest.data), so_far),
            None if reads_task => self.with_task_state(scope, None, so_far),
            None => scope.clone(),
        }
    }

    /// Whether the task mentions `_task` anywhere in its keywords or arguments.
    pub(crate) fn reads_task_state(&self) -> bool {
        let task = &self.ctx.task;
        task.attrs.iter().any(|(_, node)| mentions_task(node))
            || task.args.iter().any(|(_, node)| mentions_task(node))
    }

    fn with_task_state(
        &self,
        scope: &Scope,
        latest: Option<&Mapping>,
        loop_result: Option<Mapping>,
    ) -> Scope {
        let mut current = Mapping::new();
        if let Some(data) = latest {
            // The result being judged always has its (possibly empty) `warnings` and
            // `deprecations`; the registered one drops them when empty.
            let mut judged = data.clone();
            for key in ["warnings", "deprecations"] {
                if judged.get(key).is_none() {
                    judged.insert(s(key), Node::bare(Value::Seq(Vec::new())));
                }
            }
            let judged = crate::task::result_order::registered(&judged);
            let judged = Node::bare(Value::Map(judged));
            current.insert(s("result"), judged.clone());
            current.insert(s("polymorphic_result"), judged);
        }
        if let Some(so_far) = loop_result {
            current.insert(s("loop_result"), Node::bare(Value::Map(so_far)));
        }
        let scope =
            scope.with_var("_task", Node::bare(Value::Map(current)), Provenance::ManagedHost);
        let Some(data) = latest else { return scope };
        // Projections are seen by their names, each its expression (read when used).
        if let Some(projections) = self.projections() {
            let mut layer = tack_template::Layer::new();
            for (name, expression) in &projections {
                layer.insert(name, expression_template(expression), Provenance::Trusted);
            }
            return scope.with_layer(Arc::new(layer));
        }
        match self.register() {
            Some(name) => {
                let registered = crate::task::result_order::registered(data);
                scope.with_var(&name, Node::bare(Value::Map(registered)), Provenance::ManagedHost)
            }
            None => scope,
        }
    }
}

/// The earlier items' results of the `_task.loop_result` preview in `scope`, if it has one.
fn earlier_results(scope: &Scope) -> Option<Vec<Mapping>> {
    let task = scope.get("_task")?;
    let preview = task.node().as_map()?.get("loop_result")?.as_map()?;
    let Value::Seq(results) = &preview.get("results")?.value else { return None };
    Some(results.iter().filter_map(|r| r.as_map().cloned()).collect())
}

fn mentions_task(node: &Node) -> bool {
    match &node.value {
        Value::Str(text) => text.contains("_task"),
        Value::Seq(items) => items.iter().any(mentions_task),
        Value::Map(map) => map.iter().any(|(k, v)| mentions_task(k) || mentions_task(v)),
        _ => false,
    }
}
