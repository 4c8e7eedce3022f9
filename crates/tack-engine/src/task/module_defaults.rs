//! `module_defaults`, as ansible resolves them for a task: the play's, blocks' and task's
//! mappings merged outermost first (a later entry for the same action or group replaces the
//! earlier one whole), entries named by short name, `ansible.builtin.` or `ansible.legacy.`
//! name, or `group/<name>` of ansible-core's own action groups; the defaults of the groups the
//! action belongs to, then the action's own, fill the arguments the task did not give.
//!
//! It decides which default arguments apply and renders a template that gives them; rendering
//! the arguments themselves is `crate::task::args`'s.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_yaml::{Mapping, Node, Value};

use tack_template::Scope;

use tack_actions::Action;

/// ansible-core's built-in action groups (`config/ansible_builtin_runtime.yml`) and the
/// builtin actions in them; the groups of collections list none tack has.
const GROUPS: &[(&str, &[&str])] = &[
    ("testgroup", &["ansible.builtin.ping"]),
    ("testlegacy", &[]),
    ("aws", &[]),
    ("acme", &[]),
    ("azure", &[]),
    ("cpm", &[]),
    ("docker", &[]),
    ("gcp", &[]),
    ("os", &[]),
    ("ovirt", &[]),
    ("vmware", &[]),
];

enum Entry {
    Group(&'static str),
    Action(String),
}

fn entry(name: &str) -> Option<Entry> {
    if let Some(group) = name.strip_prefix("group/") {
        let group = tack_py::ansible::short_name(group, tack_py::ansible::CoreCollections::Builtin);
        return GROUPS.iter().find(|(g, _)| *g == group).map(|(g, _)| Entry::Group(g));
    }
    if let Some(action) = Action::find(name) {
        return Some(Entry::Action(action.fqcn()));
    }
    // A name ansible-core does not know, spelled as a module of no collection: a module a
    // `library/` directory may ship, which a task of that name then runs (ansible ignores an
    // entry nothing resolves, and so does this one).
    let core = tack_py::ansible::is_core_spelling(name) && !name.starts_with("ansible.builtin.");
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    (core && !tack_playbook::builtin_resolves(name) && !short.contains('.'))
        .then(|| Entry::Action(format!("ansible.legacy.{short}")))
}

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

fn mappings<'a>(ctx: &TaskInContext<'a>) -> Vec<&'a Mapping> {
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

/// Refuses `module_defaults` tack cannot resolve (a value that is not a mapping, an entry
/// naming an action tack does not have or a group ansible-core does not define).
pub(crate) fn check(ctx: &TaskInContext<'_>) -> Result<(), Diagnostic> {
    for layer in layers(ctx) {
        let items: Vec<&Node> = match &layer.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![layer],
        };
        for item in items {
            let Some(map) = item.as_map() else {
                return Err(Diagnostic::at(
                    "tack does not support a 'module_defaults' value that is not a mapping yet",
                    item.origin.clone().or_else(|| layer.origin.clone()),
                ));
            };
            for (key, _) in map.iter() {
                let name = tack_yaml::pyrepr::str(&key.value);
                if entry(&name).is_none() {
                    return Err(Diagnostic::at(
                        format!("tack does not support the module_defaults entry '{name}' yet"),
                        key.origin.clone(),
                    ));
                }
                // ansible gives a `package` task its backend's defaults too; tack applies
                // only the task's own action's.
                if matches!(entry(&name), Some(Entry::Action(ref a)) if a == "ansible.builtin.apt")
                    && Action::of(ctx.task).is_some_and(|a| a.is("package"))
                {
                    return Err(Diagnostic::at(
                        format!(
                            "tack does not support module_defaults for '{name}' on a 'package' \
                             task yet"
                        ),
                        key.origin.clone(),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The defaults for `action` in `ctx`, as written: each a mapping of arguments or a template
/// giving one, the later overriding the earlier.
pub(crate) fn defaults(ctx: &TaskInContext<'_>, action: Action) -> Vec<Node> {
    let fqcn = action.fqcn();
    let mut merged: Vec<(String, Node)> = Vec::new();
    for map in mappings(ctx) {
        for (key, value) in map.iter() {
            let resolved = match entry(&tack_yaml::pyrepr::str(&key.value)) {
                Some(Entry::Group(g)) => format!("group/{g}"),
                Some(Entry::Action(a)) => a,
                None => continue,
            };
            merged.retain(|(k, _)| *k != resolved);
            merged.push((resolved, value.clone()));
        }
    }
    let mut out = Vec::new();
    for (key, value) in &merged {
        if let Some(group) = key.strip_prefix("group/")
            && GROUPS.iter().any(|(g, members)| *g == group && members.contains(&fqcn.as_str()))
        {
            out.push(value.clone());
        }
    }
    if let Some((_, value)) = merged.iter().find(|(k, _)| *k == fqcn) {
        out.push(value.clone());
    }
    out
}

/// The default arguments `ctx`'s task did not give for `action`, ready to render with its
/// own.
pub(crate) fn default_args(
    ctx: &TaskInContext<'_>,
    action: Action,
    templar: &tack_template::Templar,
    scope: &Scope,
) -> Result<Mapping, Diagnostic> {
    let mut out = Mapping::new();
    for value in defaults(ctx, action) {
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
