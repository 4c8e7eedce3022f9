//! `loop_control` as ansible's `TaskContext.start_loop` applies it: the loop and index
//! variable names, the label, `extended` (`ansible_loop` with its counters, neighbours and,
//! unless `extended_allitems: false`, every item), `pause` between items and `break_when`
//! (judged after each item, its own result under the task's `register` name; a true one ends
//! the loop after that item). It owns the per-item variables and result keys; running the
//! item is the executor's.

use std::time::Duration;

use tack_diag::Diagnostic;
use tack_playbook::tables::{Isa, Keyword};
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use crate::task::reading::Reading;
use tack_report::result::{b, s};

/// The options tack runs (the others are refused by name in `crate::refuse`).
pub(crate) const OPTIONS: &[&str] =
    &["loop_var", "index_var", "label", "extended", "extended_allitems", "pause", "break_when"];

pub(crate) struct LoopControl {
    pub loop_var: String,
    pub index_var: Option<String>,
    pub label: Option<Node>,
    extended: bool,
    allitems: bool,
    pause: Duration,
    /// The `break_when` conditions as written (a list of them all must hold).
    break_when: Option<Node>,
}

impl LoopControl {
    pub(crate) fn read(task: &Reading<'_>, scope: &Scope) -> Result<LoopControl, Diagnostic> {
        let mut control = LoopControl {
            loop_var: "item".into(),
            index_var: None,
            label: None,
            extended: false,
            allitems: true,
            pause: Duration::ZERO,
            break_when: None,
        };
        let Some(node) = task.ctx.task.attrs.get(Keyword::LoopControl) else { return Ok(control) };
        let Some(map) = node.as_map() else { return Ok(control) };
        for (key, value) in map.iter() {
            let name = key.as_str().unwrap_or_default();
            if name == "label" {
                control.label = Some(value.clone());
                continue;
            }
            if name == "break_when" {
                control.break_when = Some(value.clone());
                continue;
            }
            let v = task.templar.render(value, scope).map_err(|e| e.to_diagnostic())?.value.value;
            // ansible validates `loop_control` as it post-validates the task: names must be
            // variable names, the rest convert as their keywords' types do.
            let converted = |isa| {
                let rendered = Node::new(v.clone(), value.origin.clone());
                tack_playbook::post_validate::validated_value(name, isa, &[], false, rendered)
                    .map_err(|cause| {
                        Diagnostic::caused_by(
                            format!("Error processing keyword '{name}'."),
                            value.origin.clone(),
                            cause,
                        )
                    })
            };
            let variable_name = || {
                let rendered = Node::new(v.clone(), value.origin.clone());
                tack_playbook::validate_variable_name(&rendered)
                    .map(|()| tack_yaml::pyrepr::str(&v))
                    .map_err(|cause| {
                        Diagnostic::caused_by(format!("Invalid '{name}'."), None, cause)
                    })
            };
            match name {
                "loop_var" => control.loop_var = variable_name()?,
                "index_var" => control.index_var = Some(variable_name()?),
                "extended" => control.extended = converted(Isa::Bool)?.value.is_truthy(),
                "extended_allitems" => control.allitems = converted(Isa::Bool)?.value.is_truthy(),
                "pause" => {
                    let secs = match converted(Isa::Float)?.value {
                        Value::Int(i) => i as f64,
                        Value::Float(f) => f,
                        _ => 0.0,
                    };
                    control.pause = Duration::from_secs_f64(secs.max(0.0));
                }
                _ => {}
            }
        }
        Ok(control)
    }

    /// `break_when` on an item's `result` (the item's variables in `scope`, its result under
    /// the task's `register` name): records `break_when_result` and says whether the loop
    /// ends here. A condition that cannot be evaluated fails the item and ends the loop, as
    /// ansible does (the item's own exception kept as `break_when_suppressed_exception`).
    pub(crate) fn break_here(
        &self,
        task: &Reading<'_>,
        scope: &Scope,
        result: &mut tack_report::result::HostResult,
    ) -> bool {
        let Some(node) = &self.break_when else { return false };
        let conditions: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Null => Vec::new(),
            _ => vec![node],
        };
        if conditions.is_empty() {
            return false;
        }
        let scope = task.with_registered(scope, &result.data);
        let mut verdict = true;
        for cond in conditions {
            match task.templar.evaluate_conditional(cond, &scope) {
                Ok(r) if r.value => {}
                Ok(_) => {
                    verdict = false;
                    break;
                }
                Err(e) => {
                    result.data.insert(s("break_when_result"), s(&e.message));
                    if let Some((_, exception)) = result.data.remove("exception") {
                        result.data.insert(s("break_when_suppressed_exception"), exception);
                    }
                    result.data.insert(s("exception"), s("(traceback unavailable)"));
                    result.data.insert(s("failed"), b(true));
                    result.error = Some(Diagnostic::caused_by(
                        "A 'break_when' expression failed.",
                        e.origin.clone().or_else(|| cond.origin.clone()),
                        e.to_diagnostic(),
                    ));
                    return true;
                }
            }
        }
        result.data.insert(s("break_when_result"), b(verdict));
        verdict
    }

    /// Waits `pause` before every item but the first.
    pub(crate) fn pause_before(&self, index: usize) {
        if index > 0 && !self.pause.is_zero() {
            std::thread::sleep(self.pause);
        }
    }

    /// `ansible_loop` for item `index` of `items`, when `extended`.
    fn extended(&self, items: &[Node], index: usize) -> Option<Node> {
        if !self.extended {
            return None;
        }
        let len = items.len() as i64;
        let i = index as i64;
        let int = |v: i64| Node::bare(Value::Int(v));
        let mut map = Mapping::new();
        map.insert(s("index"), int(i + 1));
        map.insert(s("index0"), int(i));
        map.insert(s("first"), b(i == 0));
        map.insert(s("last"), b(i + 1 == len));
        map.insert(s("length"), int(len));
        map.insert(s("revindex"), int(len - i));
        map.insert(s("revindex0"), int(len - i - 1));
        if self.allitems {
            map.insert(s("allitems"), Node::bare(Value::Seq(items.to_vec())));
        }
        if let Some(next) = items.get(index + 1) {
            map.insert(s("nextitem"), next.clone());
        }
        if index > 0 {
            map.insert(s("previtem"), items[index - 1].clone());
        }
        Some(Node::bare(Value::Map(map)))
    }

    /// The variables item `index` of `items` sees: the item under the loop variable (with
    /// the provenance of what the loop read, the places `trust` names inside it still the
    /// user's), and what `loop_control` adds.
    pub(crate) fn item_scope(
        &self,
        scope: &Scope,
        items: &[Node],
        index: usize,
        read: &tack_template::ProvenanceSet,
        trust: &crate::task::items::ItemTrust,
    ) -> Scope {
        self.item_vars(items, index, read).into_iter().fold(
            scope.clone(),
            |scope, (name, value, provenance)| match trust.get(index) {
                Some(places) if name == self.loop_var && !places.is_empty() => {
                    let binding = tack_template::Binding::new(value, provenance)
                        .with_trusted_at(places.clone());
                    scope.with_binding(&name, binding)
                }
                _ => scope.with_var(&name, value, provenance),
            },
        )
    }

    /// The places in item `index`'s result that are the user's though a host said the rest:
    /// the item, under the loop variable, when the loop read only the user's data, else the
    /// places `trust` names inside it.
    pub(crate) fn trusted_in_result(
        &self,
        index: usize,
        read: &tack_template::ProvenanceSet,
        trust: &crate::task::items::ItemTrust,
    ) -> Vec<Vec<tack_yaml::tagged::PathStep>> {
        use tack_yaml::tagged::PathStep;
        let var = PathStep::Key(self.loop_var.clone());
        if crate::task::items::provenance(read) == tack_template::Provenance::Trusted {
            return vec![vec![var]];
        }
        let places = trust.get(index).map(Vec::as_slice).unwrap_or_default();
        places
            .iter()
            .map(|p| std::iter::once(var.clone()).chain(p.iter().cloned()).collect())
            .collect()
    }

    /// The variables of item `index`, in the order they are set: what [`item_scope`] adds,
    /// and what an include hands the tasks it brings in.
    ///
    /// [`item_scope`]: LoopControl::item_scope
    pub(crate) fn item_vars(
        &self,
        items: &[Node],
        index: usize,
        read: &tack_template::ProvenanceSet,
    ) -> Vec<(String, Node, Provenance)> {
        let mut vars = vec![
            (self.loop_var.clone(), items[index].clone(), crate::task::items::provenance(read)),
            ("ansible_loop_var".into(), s(&self.loop_var), Provenance::Trusted),
        ];
        if let Some(index_var) = &self.index_var {
            vars.push((
                index_var.clone(),
                Node::bare(Value::Int(index as i64)),
                Provenance::Trusted,
            ));
            vars.push(("ansible_index_var".into(), s(index_var), Provenance::Trusted));
        }
        if let Some(extended) = self.extended(items, index) {
            vars.push(("ansible_loop".into(), extended, Provenance::Trusted));
        }
        vars
    }

    /// The keys a loop item's result carries about its place in the loop.
    pub(crate) fn result_keys(&self, data: &mut Mapping, items: &[Node], index: usize) {
        data.insert(s(&self.loop_var), items[index].clone());
        if let Some(index_var) = &self.index_var {
            data.insert(s(index_var), Node::bare(Value::Int(index as i64)));
            data.insert(s("ansible_index_var"), s(index_var));
        }
        data.insert(s("ansible_loop_var"), s(&self.loop_var));
        if let Some(extended) = self.extended(items, index) {
            data.insert(s("ansible_loop"), extended);
        }
    }
}

/// What an include's `break_when` says of one item.
pub(crate) enum ItemBreak {
    /// The include has no `break_when`.
    Unset,
    /// Whether the loop ends after this item.
    Verdict(bool),
    /// The expression could not be evaluated: ansible fails the item (its
    /// `break_when_result` is the error's words) and the loop ends there.
    Failed { message: String, error: Diagnostic },
}

/// `break_when` of an include's loop on one item (`scope` holds the item's variables).
pub(crate) fn include_break(
    ctx: &tack_playbook::walk::TaskInContext<'_>,
    templar: &tack_template::Templar,
    scope: &Scope,
) -> ItemBreak {
    let Some(node) = ctx
        .task
        .attrs
        .get(Keyword::LoopControl)
        .and_then(Node::as_map)
        .and_then(|m| m.get("break_when"))
    else {
        return ItemBreak::Unset;
    };
    let conditions: Vec<&Node> = match &node.value {
        Value::Seq(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        _ => vec![node],
    };
    if conditions.is_empty() {
        return ItemBreak::Unset;
    }
    for cond in conditions {
        match templar.evaluate_conditional(cond, scope) {
            Ok(r) if r.value => {}
            Ok(_) => return ItemBreak::Verdict(false),
            Err(e) => {
                let error = Diagnostic::caused_by(
                    "A 'break_when' expression failed.",
                    e.origin.clone().or_else(|| cond.origin.clone()),
                    e.to_diagnostic(),
                );
                return ItemBreak::Failed { message: e.message, error };
            }
        }
    }
    ItemBreak::Verdict(true)
}
