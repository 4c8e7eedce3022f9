//! A looped task's items and its looped result, as ansible's `TaskExecutor._run_loop` makes
//! them: the loop source rendered into items (`loop:`, which must give a list, or a
//! `with_<lookup>` given its terms), what the items' provenance is, and the loop's own result
//! built from its items' results. Running each item is the task's (`crate::task`); the
//! variables each item sees are `crate::task::loop_control`'s. Nothing here prints.

use tack_diag::Diagnostic;
use tack_template::{Provenance, ProvenanceSet, Scope, TemplateErrorKind};
use tack_yaml::{Mapping, Node, Value};

use tack_report::result::{HostResult, b, s};

use crate::task::reading::Reading;

/// The task's loop source rendered in `scope`: its items and what the render read.
pub(crate) fn items(
    task: &Reading<'_>,
    source: &Node,
    scope: &Scope,
) -> Result<(Vec<Node>, ProvenanceSet), LoopError> {
    items_with_trust(task, source, scope).map(|(items, read, _)| (items, read))
}

/// The places, inside each loop item, of the strings that are the user's though the items
/// are not as a whole (see `tack_template::LoopSource`); empty for an item with none.
pub(crate) type ItemTrust = Vec<Vec<Vec<tack_yaml::tagged::PathStep>>>;

/// [`items`], with the places inside each item that stay the user's: known only for a
/// `loop:` over (part of) a variable that holds a host's data, such as a registered result
/// whose items carry the playbook's loop items.
pub(crate) fn items_with_trust(
    task: &Reading<'_>,
    source: &Node,
    scope: &Scope,
) -> Result<(Vec<Node>, ProvenanceSet, ItemTrust), LoopError> {
    let undefined = std::cell::Cell::new(false);
    let found = match &task.ctx.task.loop_with {
        Some(lookup) => {
            with_items(task, lookup, source, scope, &undefined).map(|(i, r)| (i, r, Vec::new()))
        }
        None => loop_items(task, source, scope, &undefined),
    };
    found.map_err(|error| LoopError { error, undefined: undefined.get() })
}

/// A loop whose items could not be worked out, and whether for an undefined variable
/// (ansible's executor keeps that one until the task's `when` has had its say).
pub(crate) struct LoopError {
    pub error: Diagnostic,
    pub undefined: bool,
}

impl From<LoopError> for Diagnostic {
    fn from(e: LoopError) -> Diagnostic {
        e.error
    }
}

/// A task whose loop items failed for an undefined variable: ansible evaluates the task's
/// `when` without an item first. A false one skips the task (`Ok` with the condition); one
/// that cannot be evaluated is shown and the loop's error stands, as does a true one.
pub(crate) fn when_before_loop_error(
    ctx: &tack_playbook::walk::TaskInContext<'_>,
    templar: &tack_template::Templar,
    scope: &Scope,
    failed: LoopError,
) -> Result<Node, Diagnostic> {
    if !failed.undefined {
        return Err(failed.error);
    }
    match crate::task::when::evaluate(ctx, templar, scope) {
        crate::task::when::When::False(cond) => Ok(cond),
        crate::task::when::When::Failed(error) => {
            // ansible shows the expression's failure, not the task's, then raises the loop's.
            tack_diag::show_error(error.cause.as_deref().unwrap_or(&error));
            Err(failed.error)
        }
        _ => Err(failed.error),
    }
}

/// `loop:`: a template that must give a list.
fn loop_items(
    task: &Reading<'_>,
    items: &Node,
    scope: &Scope,
    undefined: &std::cell::Cell<bool>,
) -> Result<(Vec<Node>, ProvenanceSet, ItemTrust), Diagnostic> {
    let (mut rendered, source) =
        task.templar.render_loop(items, scope).map_err(|e| loop_error(task, e, undefined))?;
    tack_template::Templar::untrust_computed_strings(items, &mut rendered.value, scope);
    match rendered.value.value {
        Value::Seq(list) => {
            // Only items a host's data is part of need places of their own; a list whose
            // items were dropped (`omit`) no longer lines up with its variable's.
            let trust = match provenance(&rendered.provenance) {
                Provenance::Trusted => Vec::new(),
                _ => source.trusted_leaves().filter(|t| t.len() == list.len()).unwrap_or_default(),
            };
            Ok((list, rendered.provenance, trust))
        }
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
fn with_items(
    task: &Reading<'_>,
    lookup: &str,
    terms: &Node,
    scope: &Scope,
    undefined: &std::cell::Cell<bool>,
) -> Result<(Vec<Node>, ProvenanceSet), Diagnostic> {
    tack_template::lookups::run_task_loop(
        task.templar,
        lookup,
        terms,
        scope,
        Some(&task.ctx.task.action),
    )
    .map_err(|e| loop_error(task, e, undefined))
}

fn loop_error(
    task: &Reading<'_>,
    e: tack_template::TemplateError,
    undefined: &std::cell::Cell<bool>,
) -> Diagnostic {
    if e.kind == TemplateErrorKind::Undefined {
        undefined.set(true);
        Diagnostic::caused_by("Task failed.", task.origin(), e.to_diagnostic())
    } else {
        e.to_diagnostic()
    }
}

/// Loop items come from the loop's render: whatever it read decides their provenance.
pub(crate) fn provenance(read: &ProvenanceSet) -> Provenance {
    read.derived()
}

/// The result of a loop over no items.
pub(crate) fn no_items(host: &str) -> HostResult {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("results"), Node::bare(Value::Seq(Vec::new())));
    data.insert(s("skip_reason"), s("No items in the list"));
    data.insert(s("skipped"), b(true));
    data.insert(s("skipped_reason"), s("No items in the list"));
    data.insert(s("failed"), b(false));
    let mut result = HostResult::new(host, data);
    result.deprecated_values.push(skipped_reason_deprecated());
    result
}

/// ansible tags the `skipped_reason` of a loop over no items `Deprecated`: reading it warns.
pub(crate) fn skipped_reason_deprecated() -> tack_yaml::tagged::DeprecatedAt {
    let mut deprecated =
        tack_diag::Deprecated::core("The 'skipped_reason' value is deprecated.", "2.24");
    deprecated.help = Some("Use 'skip_reason' instead.".into());
    tack_yaml::tagged::DeprecatedAt {
        path: vec![tack_yaml::tagged::PathStep::Key("skipped_reason".into())],
        deprecated: std::sync::Arc::new(deprecated),
    }
}

/// A looped task's result from its items, as ansible's `TaskExecutor._run_loop` builds it.
pub(crate) fn aggregate(host: &str, items: Vec<HostResult>) -> HostResult {
    let data = aggregate_data(items.iter().map(|r| &r.data));
    let mut result = HostResult::new(host, data);
    result.hidden_items = items.iter().map(|item| item.no_log).collect();
    // A warning shown with where it came from is shown (once) the same way again.
    for item in &items {
        result.warning_blocks.extend(item.warning_blocks.clone());
    }
    // Each was shown with its item.
    result.shown_deprecations =
        result.data.get("deprecations").and_then(Node::as_seq).map_or(0, |l| l.len());
    result.plan = tack_report::plan_mark::merge(&items);
    // An item's tagged values sit in its place of `results`.
    for (i, item) in items.iter().enumerate() {
        use tack_yaml::tagged::PathStep;
        result.deprecated_values.extend(
            item.deprecated_values
                .iter()
                .map(|d| d.under(PathStep::Index(i)).under(PathStep::Key("results".into()))),
        );
        result.trusted_values.extend(item.trusted_values.iter().map(|place| {
            let at = [PathStep::Key("results".into()), PathStep::Index(i)];
            at.into_iter().chain(place.iter().cloned()).collect()
        }));
    }
    result
}

/// The data of a loop's result from its items' data (`build_loop_result`): also the preview
/// `_task.loop_result` shows while the loop runs, skipped while no item has a result yet.
pub(crate) fn aggregate_data<'m>(items: impl Iterator<Item = &'m Mapping> + Clone) -> Mapping {
    let flag = |m: &Mapping, key: &str| m.get(key).is_some_and(|v| v.value.is_truthy());
    let mut data = Mapping::new();
    let changed = items.clone().any(|m| flag(m, "changed"));
    let failed = items.clone().any(|m| flag(m, "failed"));
    let all_skipped = items.clone().all(|m| flag(m, "skipped"));
    let unreachable = items.clone().any(|m| flag(m, "unreachable"));
    data.insert(s("changed"), b(changed));
    if failed {
        data.insert(s("failed"), b(true));
        data.insert(s("msg"), s("One or more items failed"));
    } else {
        // An unreachable loop's result says nothing of failing, as an unreachable item's.
        if !unreachable {
            data.insert(s("failed"), b(false));
        }
        if all_skipped {
            data.insert(s("msg"), s("All items skipped"));
        } else {
            data.insert(s("msg"), s("All items completed"));
        }
    }
    // The items' deprecations, each item's in order, are the loop's too.
    let deprecations: Vec<Node> = items
        .clone()
        .filter_map(|m| m.get("deprecations").and_then(Node::as_seq))
        .flat_map(|list| list.iter().cloned())
        .collect();
    if !deprecations.is_empty() {
        data.insert(s("deprecations"), Node::bare(Value::Seq(deprecations)));
    }
    // And their warnings (`_extend_warnings`), each item's in order.
    let warnings: Vec<Node> = items
        .clone()
        .filter_map(|m| m.get("warnings").and_then(Node::as_seq))
        .flat_map(|list| list.iter().cloned())
        .collect();
    if !warnings.is_empty() {
        data.insert(s("warnings"), Node::bare(Value::Seq(warnings)));
    }
    let list: Vec<Node> = items.map(|m| Node::bare(Value::Map(m.clone()))).collect();
    data.insert(s("results"), Node::bare(Value::Seq(list)));
    if all_skipped {
        data.insert(s("skipped"), b(true));
    }
    if unreachable {
        data.insert(s("unreachable"), b(true));
    }
    data
}
