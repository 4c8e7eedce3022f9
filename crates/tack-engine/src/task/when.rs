//! A task's `when`, evaluated in one place for every caller: the task's run (and each loop
//! item's), the plan's gate, includes, `meta` tasks and the input `--events` shows. The
//! conditions are the parents' then the task's, each list item one condition, evaluated in
//! order and stopping at the first false one, as ansible's `Conditional` does.
//!
//! In a plan, a condition that reads the output of a task that did not run (an unavailable
//! value) leaves the verdict unknown, whether or not it came out true; outside a plan no value
//! is unavailable, so the verdict is always known.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_template::{Scope, Templar};
use tack_yaml::{Node, Value};

/// What a task's `when` says on one host (or loop item).
#[derive(Debug)]
pub(crate) enum When {
    /// Every condition holds (or there is none).
    Holds,
    /// This condition, as written (a string, or `false` itself), is false.
    False(Node),
    /// A condition read the output of this task, which did not run, before the conditions
    /// were decided (plans only).
    Unknown(String),
    /// A condition could not be evaluated: ansible's error for the task.
    Failed(Diagnostic),
}

impl When {
    /// The verdict as the run reads it: `Some(condition)` for a false one, the error for a
    /// broken one. An unknown verdict (a plan's gate defers it before the run gets here) is
    /// read as holding.
    pub(crate) fn false_condition(self) -> Result<Option<Node>, Diagnostic> {
        match self {
            When::Holds | When::Unknown(_) => Ok(None),
            When::False(condition) => Ok(Some(condition)),
            When::Failed(error) => Err(error),
        }
    }
}

/// The `when` conditions of `ctx` (parents' first, outermost first), each list item one
/// condition in its list's order, as ansible's `_extend_value` prepends each parent's.
pub(crate) fn conditions<'a>(ctx: &'a TaskInContext<'_>) -> Vec<&'a Node> {
    let own = ctx.task.attrs.get(Keyword::When);
    let levels = ctx.ancestry.iter().rev().filter_map(|a| a.get(Keyword::When)).chain(own);
    levels
        .flat_map(|cond| match &cond.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Null => Vec::new(),
            _ => vec![cond],
        })
        .collect()
}

/// Evaluates `ctx`'s `when` in `scope`.
pub(crate) fn evaluate(ctx: &TaskInContext<'_>, templar: &Templar, scope: &Scope) -> When {
    evaluate_conditions(&conditions(ctx), templar, scope, ctx.task.origin.clone())
}

/// Evaluates `conditions` in order in `scope`; a broken one is the failure of the task at
/// `origin`.
pub(crate) fn evaluate_conditions(
    conditions: &[&Node],
    templar: &Templar,
    scope: &Scope,
    origin: Option<tack_diag::Origin>,
) -> When {
    for item in conditions.iter().copied() {
        match templar.evaluate_conditional(item, scope) {
            Ok(r) => {
                if let Some(producer) = r.provenance.unavailable().next() {
                    return When::Unknown(producer.to_string());
                }
                if !r.value {
                    let reported = r.rendered.map_or_else(|| item.value.clone(), |n| n.value);
                    return When::False(Node::bare(reported));
                }
            }
            Err(e) => {
                if let Some(producer) = e.unavailable.first() {
                    return When::Unknown(producer.to_string());
                }
                // The frame takes its cause's origin: a template that rendered to nothing
                // (an empty conditional with no origin of its own) joins the task's frame.
                let cause = Diagnostic::caused_by(
                    "A 'when' expression failed.",
                    e.origin.clone(),
                    e.to_diagnostic(),
                );
                return When::Failed(Diagnostic::caused_by("Task failed.", origin, cause));
            }
        }
    }
    When::Holds
}
