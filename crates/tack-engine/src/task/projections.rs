//! ansible 2.21's register projections (`register: {name: expression}`): what each
//! expression gives once the task is done, with `_task` and the other projections by name.

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_report::result::{HostResult, s};
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use super::TaskRun;

/// What a task's register projections gave: each variable's value (or ansible's undefined
/// for one that failed) and, when one failed, the task's failure.
pub(super) struct Projected {
    pub(super) values: Vec<(String, Node, Provenance)>,
    pub(super) failure: Option<Diagnostic>,
}

impl TaskRun<'_> {
    /// The register projections' values once the task is done: each expression evaluated
    /// with `_task` (`result`: the last result, `loop_result` for a loop, and
    /// `polymorphic_result`: the loop's or the task's) and the other projections by name,
    /// in any order. One that fails leaves its variable undefined with ansible's words, and
    /// fails the task.
    pub(super) fn project(
        &self,
        scope: &Scope,
        result: &HostResult,
        last_item: Option<&Mapping>,
        looped: bool,
        projections: &[(String, Node)],
    ) -> Projected {
        let mut current = Mapping::new();
        let whole = Node::bare(Value::Map(result.data.clone()));
        let last = last_item.map_or_else(|| whole.clone(), |d| Node::bare(Value::Map(d.clone())));
        current.insert(s("result"), last);
        if looped {
            current.insert(s("loop_result"), whole.clone());
        }
        current.insert(s("polymorphic_result"), whole);
        let mut layer = tack_template::Layer::new();
        // A loop's projections are evaluated with its last item's variables (ansible's
        // task variables are that item's once the loop ends): the loop and index variables
        // and `ansible_loop`, as the item's result names them.
        if let Some(data) = last_item {
            let named = |key: &str| data.get(key).and_then(Node::as_str).map(str::to_string);
            let mut names = vec!["ansible_loop".to_string()];
            for key in ["ansible_loop_var", "ansible_index_var"] {
                if let Some(name) = named(key) {
                    layer.insert(key, s(&name), Provenance::Trusted);
                    names.push(name);
                }
            }
            for name in names {
                if let Some(value) = data.get(name.as_str()) {
                    layer.insert(&name, value.clone(), Provenance::ManagedHost);
                }
            }
        }
        layer.insert("_task", Node::bare(Value::Map(current)), Provenance::ManagedHost);
        for (name, expression) in projections {
            layer.insert(
                name,
                crate::task::reading::expression_template(expression),
                Provenance::Trusted,
            );
        }
        let scope = scope.with_layer(Arc::new(layer));
        let mut values = Vec::new();
        let mut errors = Vec::new();
        for (name, expression) in projections {
            match self
                .reading
                .templar
                .render(&crate::task::reading::expression_template(expression), &scope)
            {
                Ok(rendered) => {
                    let provenance = if rendered.provenance.is_managed_host() {
                        Provenance::ManagedHost
                    } else {
                        Provenance::Trusted
                    };
                    values.push((name.clone(), rendered.value, provenance));
                }
                Err(e) => {
                    let why = e.to_diagnostic();
                    let message = format!(
                        "The variable {} is undefined because its register expression failed: {}",
                        tack_yaml::pyrepr::str_repr(name),
                        why.brief()
                    );
                    let undefined =
                        format!("{{{{ undef({}) }}}}", tack_yaml::pyrepr::str_repr(&message));
                    let node = Node::new(Value::Str(undefined), expression.origin.clone());
                    values.push((name.clone(), node, Provenance::Trusted));
                    errors.push(Diagnostic::caused_by(
                        format!(
                            "Register projection {} failed.",
                            tack_yaml::pyrepr::str_repr(name)
                        ),
                        None,
                        why,
                    ));
                }
            }
        }
        let failure = (!errors.is_empty()).then(|| {
            let message = format!(
                "Task failed due to errors in {} out of {} register projections.",
                errors.len(),
                projections.len()
            );
            Diagnostic::group(message, errors)
        });
        Projected { values, failure }
    }
}
