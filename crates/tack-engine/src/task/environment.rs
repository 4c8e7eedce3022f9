//! The `environment` keyword, as ansible's `Task._post_validate_environment` resolves it: the
//! play's, blocks' and task's values, outermost first (later names win), each a mapping whose
//! values are templated one by one or a template giving a mapping; anything else is skipped
//! with ansible's warning. Values become text as Python's `str()` makes them.
//!
//! Only the module invocation receives the result (see `tack_agent::modules::environment`);
//! nothing here touches the controller's own environment.

use std::collections::BTreeMap;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_template::{Scope, Templar, TemplateErrorKind};
use tack_yaml::{Node, Value};

/// The `environment` values that apply to the task, outermost first.
pub(crate) fn layers<'a>(ctx: &TaskInContext<'a>) -> Vec<&'a Node> {
    let mut out = Vec::new();
    for ancestor in ctx.ancestry.iter().rev() {
        if let Some(node) = ancestor.get(Keyword::Environment) {
            out.push(node);
        }
    }
    if let Some(node) = ctx.task.attrs.get(Keyword::Environment) {
        out.push(node);
    }
    out
}

/// `ctx`'s environment, rendered in `scope`.
pub(crate) fn render(
    ctx: &TaskInContext<'_>,
    templar: &Templar,
    scope: &Scope,
) -> Result<BTreeMap<String, String>, Diagnostic> {
    render_layers(&layers(ctx), templar, scope)
}

/// The environment `layers` (outermost first) give, rendered in `scope`: what the implicit
/// fact gathering sees of the play's.
pub(crate) fn render_layers(
    layers: &[&Node],
    templar: &Templar,
    scope: &Scope,
) -> Result<BTreeMap<String, String>, Diagnostic> {
    let mut items: Vec<&Node> = Vec::new();
    for layer in layers.iter().copied() {
        match &layer.value {
            Value::Seq(list) => items.extend(list.iter()),
            Value::Null => {}
            _ => items.push(layer),
        }
    }
    let mut env = BTreeMap::new();
    for item in &items {
        if let Some(map) = item.as_map() {
            for (key, value) in map.iter() {
                match templar.render(value, scope) {
                    Ok(r) => {
                        env.insert(
                            tack_yaml::pyrepr::str(&key.value),
                            tack_yaml::pyrepr::str(&r.value.value),
                        );
                    }
                    Err(e) if e.kind == TemplateErrorKind::Omitted => {}
                    // ansible skips a variable whose value reads `ansible_env` before the
                    // facts that hold it are gathered (the fact gathering's own environment).
                    Err(e)
                        if e.kind == TemplateErrorKind::Undefined
                            && e.message.contains("ansible_env") => {}
                    Err(e) => return Err(e.to_diagnostic()),
                }
            }
            continue;
        }
        match templar.render(item, scope) {
            Ok(r) => match &r.value.value {
                Value::Map(map) => {
                    for (key, value) in map.iter() {
                        env.insert(
                            tack_yaml::pyrepr::str(&key.value),
                            tack_yaml::pyrepr::str(&value.value),
                        );
                    }
                }
                _ => {
                    let all = Value::Seq(items.iter().map(|n| (*n).clone()).collect());
                    tack_diag::warn(&Diagnostic::new(format!(
                        "could not parse environment value, skipping: {}",
                        tack_yaml::pyrepr::repr(&all)
                    )));
                }
            },
            Err(e) if e.kind == TemplateErrorKind::Omitted => {}
            Err(e) => return Err(e.to_diagnostic()),
        }
    }
    Ok(env)
}

/// The values of `ctx`'s environment whose render read a secret, rendered in `scope` (for
/// the run's stored views: a task that receives a secret this way has its output masked). A
/// value that fails to render is left to the run to report.
pub(crate) fn sealed_values(
    ctx: &TaskInContext<'_>,
    templar: &Templar,
    scope: &Scope,
) -> Vec<Node> {
    let mut sealed = Vec::new();
    for layer in layers(ctx) {
        let items: Vec<&Node> = match &layer.value {
            Value::Seq(list) => list.iter().collect(),
            _ => vec![layer],
        };
        for item in items {
            let values: Vec<&Node> = match item.as_map() {
                Some(map) => map.iter().map(|(_, v)| v).collect(),
                None => vec![item],
            };
            for value in values {
                if let Ok(r) = templar.render(value, scope)
                    && r.provenance.is_sealed()
                {
                    sealed.push(r.value);
                }
            }
        }
    }
    sealed
}
