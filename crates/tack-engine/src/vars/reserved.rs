//! ansible's `warn_if_reserved` during a run: `[WARNING]: Found variable using reserved name
//! 'port'.` for a variable named like a playbook keyword or a template global, pointing at
//! where the name was first written.
//!
//! ansible warns each time `VariableManager.get_vars` gathers a host's variables (before the
//! magic ones), and when a task sets variables (`set_fact`, `register`, `include_vars`); the
//! merged variables keep the key of the lowest layer that has it, so that layer's origin is
//! the one shown. The display shows each distinct warning once, which makes the repeated
//! passes free of noise. This module only warns; it never changes a variable.

use tack_diag::Origin;
use tack_template::Scope;
use tack_yaml::{Mapping, Node, Value};

/// Whether ansible reserves `name` (`vars` excepted: ansible sets it itself). The list is
/// sorted (a test below keeps it so): this runs for every variable before every task.
fn reserved(name: &str) -> bool {
    name != "vars" && tack_loader::vars::RESERVED_NAMES.binary_search(&name).is_ok()
}

/// Warns for `name`, written at `origin`, when it is reserved.
pub(crate) fn warn_name(name: &str, origin: Option<&Origin>) {
    if !reserved(name) {
        return;
    }
    let mut one = Mapping::new();
    let key = Node { value: Value::Str(name.to_string()), origin: origin.cloned() };
    one.insert(key, Node::bare(Value::Null));
    tack_loader::vars::warn_if_reserved(&one);
}

/// One `get_vars` pass over a host's scope: every reserved name whose lowest binding says
/// where it was written, lowest layer first. Layers made by the engine itself (magic
/// variables, facts) carry no key origin and are passed over. The play's layer also holds
/// the extra vars (tack's play-level view); ansible has them only on top, so a copy of an
/// `extra` binding below is not a lower occurrence.
pub(crate) fn warn_scope(scope: &Scope, extra: &tack_template::Layer) {
    let mut seen: Vec<&str> = Vec::new();
    for layer in scope.layers() {
        for (name, binding) in layer.bindings() {
            if !reserved(name) || seen.contains(&name) {
                continue;
            }
            let copied = extra.get(name).is_some_and(|top| {
                !std::ptr::eq(&**top, &**binding)
                    && top.key_origin().is_some()
                    && top.key_origin() == binding.key_origin()
            });
            if copied {
                continue;
            }
            seen.push(name);
            if let Some(origin) = binding.key_origin() {
                warn_name(name, Some(origin));
            }
        }
    }
}

/// The play-level passes ansible makes before the play's first task (`get_vars(play=...)`,
/// once before and once after the play's roles are public): the play's own variables and
/// the extra vars, then the roles' defaults and everything again.
pub(crate) fn warn_play(play: &tack_playbook::Play, role_defaults: &Mapping, vars: &Mapping) {
    let in_role = |key: &Node| {
        key.origin
            .as_ref()
            .and_then(|o| o.path.as_ref())
            .is_some_and(|path| play.role_arena.iter().any(|role| path.starts_with(&role.path)))
    };
    let keys = |map: &Mapping, skip_roles: bool| {
        for (key, _) in map.iter() {
            if key.origin.is_none() || (skip_roles && in_role(key)) {
                continue;
            }
            if let Some(name) = key.as_str() {
                warn_name(name, key.origin.as_ref());
            }
        }
    };
    keys(vars, true);
    keys(role_defaults, false);
    keys(vars, false);
}

/// The passes ansible makes while it loads a playbook, before any play runs: one
/// `get_vars(play, task)` for each `include_tasks` and `import_tasks` (the play's `vars`, the
/// vars of the blocks and imports around the task, the task's own, then the extra vars).
/// `vars_files` are not read here: they are warned about when the play starts.
pub(crate) fn warn_loaded(play: &tack_playbook::Play, extra: &Mapping) {
    use tack_playbook::walk::{Ancestor, Sections, walk};
    let keys = |map: &Mapping| {
        for (key, _) in map.iter() {
            if let Some(name) = key.as_str()
                && key.origin.is_some()
            {
                warn_name(name, key.origin.as_ref());
            }
        }
    };
    let pass = |outer: &[Ancestor<'_>], own: &Mapping| {
        keys(&play.vars);
        for ancestor in outer.iter().rev() {
            match ancestor {
                Ancestor::Block(block) => keys(&block.vars),
                Ancestor::Import(task) => keys(&task.vars),
                _ => {}
            }
        }
        keys(own);
        keys(extra);
    };
    let compiled = tack_playbook::compile::compile_play(play);
    let mut done: Vec<*const tack_playbook::Task> = Vec::new();
    for ctx in walk(play, &compiled, Sections::All) {
        for (at, ancestor) in ctx.ancestry.iter().enumerate().rev() {
            if let Ancestor::Import(task) = ancestor {
                let ptr = std::ptr::from_ref(*task);
                if !done.contains(&ptr) {
                    done.push(ptr);
                    pass(&ctx.ancestry[at + 1..], &task.vars);
                }
            }
        }
        if matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks) {
            pass(&ctx.ancestry, &ctx.task.vars);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reserved_names_are_sorted_for_binary_search() {
        let names = tack_loader::vars::RESERVED_NAMES;
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        assert!(super::reserved("port") && super::reserved("with_") && !super::reserved("vars"));
        assert!(!super::reserved("ports"));
    }
}
