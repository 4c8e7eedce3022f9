//! `module_defaults`, as ansible applies them to a task: the play's, blocks', roles' and
//! task's mappings (their keys resolved when loaded, see `tack_playbook::ActionGroups`)
//! merged outermost first, a later entry for the same action or group replacing the earlier
//! one's value where it stands; the defaults of the groups the task's resolved action is in
//! (in merged order), then the action's own, fill the arguments the task did not give.
//!
//! It decides which default arguments apply and renders a template that gives them; rendering
//! the arguments themselves is `crate::task::args`'s.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::{Ancestor, TaskInContext};
use tack_yaml::{Mapping, Node, Value};

use tack_template::Scope;

use tack_actions::Action;

pub(crate) fn layers<'a>(ctx: &TaskInContext<'a>) -> Vec<&'a Node> {
    let mut out = Vec::new();
    for ancestor in ctx.ancestry.iter().rev() {
        if let Some(node) = ancestor.get(Keyword::ModuleDefaults) {
            out.push(node);
        }
    }
    if let Some(node) = ctx.task.attrs.get(Keyword::ModuleDefaults) {
        out.push(node);
    }
    out
}

/// Each layer's mappings, outermost first (the loader made every layer a list of them).
pub(crate) fn mappings<'a>(ctx: &TaskInContext<'a>) -> Vec<&'a Mapping> {
    let mut out = Vec::new();
    for layer in layers(ctx) {
        match &layer.value {
            Value::Seq(items) => out.extend(items.iter().filter_map(Node::as_map)),
            Value::Map(map) => out.push(map),
            _ => {}
        }
    }
    out
}

/// Refuses `module_defaults` tack cannot apply as ansible does: defaults for `apt` on a
/// `package` task (ansible hands the backend it picks that module's defaults too).
pub(crate) fn check(ctx: &TaskInContext<'_>) -> Result<(), Diagnostic> {
    if !Action::of(ctx.task).is_some_and(|a| a.is("package")) {
        return Ok(());
    }
    for map in mappings(ctx) {
        for (key, _) in map.iter() {
            if key.as_str() == Some("ansible.builtin.apt") {
                return Err(Diagnostic::at(
                    "tack does not support module_defaults for 'ansible.builtin.apt' on a \
                     'package' task yet",
                    key.origin.clone(),
                ));
            }
        }
    }
    Ok(())
}

/// The defaults for `action` in `ctx`, as written: each a mapping of arguments or a template
/// giving one, the later overriding the earlier.
pub(crate) fn defaults(ctx: &TaskInContext<'_>, action: Action) -> Vec<Node> {
    let groups = ctx.ancestry.iter().find_map(|a| match a {
        Ancestor::Play(play) => Some(&*play.action_groups),
        _ => None,
    });
    defaults_in(&mappings(ctx), groups, &action.defaults_name())
}

/// [`defaults`] for the resolved action `fqcn` from `module_defaults` mappings (outermost
/// first) and the play's action groups: what a task's defaults are, and what an action
/// hands the module it runs (`gather_facts` its fact module).
pub(crate) fn defaults_in(
    mappings: &[&Mapping],
    groups: Option<&tack_playbook::ActionGroups>,
    fqcn: &str,
) -> Vec<Node> {
    let mut merged: Vec<(String, &Node)> = Vec::new();
    for map in mappings {
        for (key, value) in map.iter() {
            let key = tack_yaml::pyrepr::str(&key.value);
            match merged.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => merged.push((key, value)),
            }
        }
    }
    let mut out = Vec::new();
    for (key, value) in &merged {
        if let Some(group) = key.strip_prefix("group/")
            && groups.is_some_and(|g| g.has(group, fqcn))
        {
            out.push((*value).clone());
        }
    }
    if let Some((_, value)) = merged.iter().find(|(k, _)| *k == fqcn) {
        out.push((*value).clone());
    }
    out
}

/// `defaults` merged into one mapping, the later winning (a default written as a template
/// rendered in `scope` first); the values stay as written, to render with the arguments.
pub(crate) fn merge_defaults(
    defaults: Vec<Node>,
    templar: &tack_template::Templar,
    scope: &Scope,
) -> Result<Mapping, Diagnostic> {
    let mut out = Mapping::new();
    for value in defaults {
        let map = match value.as_map() {
            Some(map) => map.clone(),
            None => {
                let rendered = templar.render(&value, scope).map_err(|e| e.to_diagnostic())?;
                match rendered.value.value {
                    Value::Map(map) => map,
                    _ => continue,
                }
            }
        };
        for (k, v) in map.iter() {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(out)
}

/// The default arguments `ctx`'s task did not give for `action`, ready to render with its
/// own.
pub(crate) fn default_args(
    ctx: &TaskInContext<'_>,
    action: Action,
    templar: &tack_template::Templar,
    scope: &Scope,
) -> Result<Mapping, Diagnostic> {
    let out = merge_defaults(defaults(ctx, action), templar, scope)?;
    let given: Vec<String> =
        ctx.task.args.iter().filter_map(|(k, _)| k.as_str().map(str::to_string)).collect();
    let mut kept = Mapping::new();
    for (k, v) in out.iter() {
        if !given.iter().any(|g| Some(g.as_str()) == k.as_str()) {
            kept.insert(k.clone(), v.clone());
        }
    }
    Ok(kept)
}
