//! `module_defaults` as ansible-core 2.21 loads them: every entry's key resolved, when the
//! play, block, role or task is loaded, to the action or action group it names, so the run
//! only compares names (a task's resolved action, the groups it was found in).
//!
//! Resolves action groups too: ansible-core's own and each collection's (`meta/runtime.yml`
//! `action_groups`), their `metadata: {extend_group: ...}` followed, their members resolved
//! as modules or action plugins, into the play's [`ActionGroups`]. Reads
//! collection files; never renders a value (the run renders what applies to a task).

use std::sync::OnceLock;

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::collections::is_valid_fqcr;
use super::modargs::ModuleSearch;
use super::{Loader, parser_error};
use crate::action_groups::ActionGroups;
use crate::tables::{self, Routing};

const NOT_A_MAPPING: &str = "The field 'module_defaults' is supposed to be a dictionary or list \
     of dictionaries, the keys of which must be static action, module, or group names. Only the \
     values may contain templates. For example: {'ping': \"{{ ping_defaults }}\"}";

/// ansible-core's own runtime metadata (its `action_groups`), parsed once.
fn builtin_metadata() -> Option<&'static Node> {
    static PARSED: OnceLock<Option<Node>> = OnceLock::new();
    PARSED.get_or_init(|| tack_yaml::load_one(tables::BUILTIN_ACTION_GROUPS, None).ok()).as_ref()
}

/// What ansible-core alone resolves a core-spelled name to (`ansible.builtin.<short>`, its
/// own redirects followed), the name as [`crate::ast::Task`]s naming a builtin resolve.
fn builtin_fqcn(name: &str) -> Option<String> {
    let mut short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy)
            .to_string();
    if !tack_py::ansible::is_core_spelling(name) {
        return None;
    }
    // ansible-core's own redirects are few and never loop; the bound only guards the table.
    for _ in 0..8 {
        if short.contains('.') {
            return None;
        }
        let redirect =
            ["modules", "action"].iter().find_map(|kind| match tables::routing(kind, &short) {
                Some(Routing::Redirect(target)) => Some(target),
                _ => None,
            });
        match redirect {
            Some(target) => short = target.to_string(),
            None => break,
        }
    }
    (tables::BUILTIN_MODULES.contains(&short.as_str())
        || tables::BUILTIN_ACTIONS.contains(&short.as_str()))
    .then(|| format!("ansible.builtin.{short}"))
}

impl Loader<'_> {
    /// ansible's `_load_module_defaults`: `node` (a mapping or a list of them) as a list of
    /// mappings whose keys are resolved names (`group/<fq group>` for a group). An action no
    /// loader finds, a group ansible cannot resolve, a value that is no mapping: ansible's
    /// parser errors.
    pub(crate) fn load_module_defaults(
        &self,
        node: &Node,
        groups: &ActionGroups,
    ) -> Result<Node, Diagnostic> {
        if node.is_null() {
            return Ok(node.clone());
        }
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![node],
        };
        let search = self.module_search(&[]);
        let mut out = Vec::new();
        for item in items {
            let Some(map) = item.as_map() else {
                return Err(parser_error(NOT_A_MAPPING, Some(item)));
            };
            let mut resolved = Mapping::new();
            for (key, value) in map.iter() {
                let keyed = |text: String| Node::new(Value::Str(text), key.origin.clone());
                let name = tack_yaml::pyrepr::str(&key.value);
                if name.starts_with("group/") {
                    let group = name.rsplit("group/").next().unwrap_or_default();
                    let (fq, _) = self.resolve_group(group, true, groups, &search)?;
                    resolved.insert(keyed(format!("group/{fq}")), value.clone());
                    continue;
                }
                // module_defaults do not follow the `collections` keyword: a name that is
                // not fully qualified is `ansible.legacy`'s.
                let name = if name.split('.').count() < 3 {
                    format!("ansible.legacy.{name}")
                } else {
                    name
                };
                let Some(action) = self.resolve_action(&name, &search, Some(key))? else {
                    return Err(parser_error(
                        format!("Could not resolve action {name} in module_defaults"),
                        None,
                    ));
                };
                resolved.insert(keyed(action), value.clone());
                // An `ansible.legacy` entry is the `ansible.builtin` action's too, when there
                // is one.
                use tack_py::ansible::{CoreCollections, strip_core_collection};
                let legacy = strip_core_collection(&name, CoreCollections::BuiltinOrLegacy)
                    .filter(|_| strip_core_collection(&name, CoreCollections::Builtin).is_none());
                if let Some(short) = legacy
                    && let Some(action) =
                        self.resolve_action(&format!("ansible.builtin.{short}"), &search, None)?
                {
                    resolved.insert(keyed(action), value.clone());
                }
            }
            out.push(Node::new(Value::Map(resolved), item.origin.clone()));
        }
        Ok(Node::new(Value::Seq(out), node.origin.clone()))
    }

    /// ansible's `_resolve_action`: the resolved name of the module or action plugin `name`
    /// finds, `None` when none. With `at` (a mandatory entry), the collection is loaded as a
    /// task's would be and its routing's deprecations are shown there.
    fn resolve_action(
        &self,
        name: &str,
        search: &ModuleSearch,
        at: Option<&Node>,
    ) -> Result<Option<String>, Diagnostic> {
        if let Some(module) = search.find(name) {
            if let (Some(collection), Some(at)) = (&module.collection, at) {
                for (loaded, dir) in &collection.loaded {
                    self.collection_loaded(loaded, dir, Some(at))?;
                }
                for message in &collection.deprecations {
                    tack_diag::deprecate_formatted(&Diagnostic::at(
                        message.clone(),
                        at.origin.clone(),
                    ));
                }
            }
            // A collection module without an `action_plugin` of its own gives way to an
            // action plugin its name resolves to (ansible prefers the action loader's).
            if module.collection.as_ref().is_some_and(|c| c.action_plugin.is_none())
                && let Some(action) = search.collection_action_fqcn(name)
            {
                return Ok(Some(action));
            }
            return Ok(Some(module.fqcn()));
        }
        // An action plugin beside the playbook or on the configured path takes the name
        // before ansible-core's own (a collection's is found below).
        if super::collections::Fqcr::parse(name).is_none() && search.action_plugin(name).is_some() {
            let short = tack_py::ansible::short_name(
                name,
                tack_py::ansible::CoreCollections::BuiltinOrLegacy,
            );
            return Ok(Some(format!("ansible.legacy.{short}")));
        }
        if let Some(action) = builtin_fqcn(name) {
            return Ok(Some(action));
        }
        // A collection's action plugin with no module of its name.
        let found = super::collections::Fqcr::parse(name).and_then(|fqcr| {
            let dir = search.collections.collection(fqcr.namespace, fqcr.name)?;
            let (subdirs, leaf) = fqcr.leaf();
            let mut actions = dir.join("plugins").join("action");
            actions.extend(subdirs);
            actions.join(format!("{leaf}.py")).is_file().then(|| name.to_string())
        });
        Ok(found)
    }

    /// ansible's `_resolve_group`: the group's fully qualified name and its actions (those of
    /// the groups it extends after its own), recorded in `groups`. An unknown group is an
    /// error when `mandatory` (a `group/` entry), else empty (a group another extends).
    fn resolve_group(
        &self,
        name: &str,
        mandatory: bool,
        groups: &ActionGroups,
        search: &ModuleSearch,
    ) -> Result<(String, Vec<String>), Diagnostic> {
        let (collection, fq) = if is_valid_fqcr(name) {
            let mut parts = name.splitn(3, '.');
            let ns = parts.next().unwrap_or_default();
            let col = parts.next().unwrap_or_default();
            (format!("{ns}.{col}"), name.to_string())
        } else {
            ("ansible.builtin".to_string(), format!("ansible.builtin.{name}"))
        };
        if let Some(actions) = groups.cached(&fq) {
            return Ok((fq, actions));
        }
        let unresolved = |fq: String| {
            if mandatory {
                Err(parser_error(
                    format!(
                        "Error loading module_defaults: could not resolve the module_defaults \
                         group {fq}"
                    ),
                    None,
                ))
            } else {
                self.refuse_vvvvv_note(&format!(
                    "Error loading module_defaults: could not resolve the module_defaults group \
                     {fq}"
                ))?;
                Ok((fq, Vec::new()))
            }
        };
        let metadata = match self.collection_metadata(&collection, search) {
            Some(metadata) => metadata,
            None => return unresolved(fq),
        };
        let action_groups =
            metadata.as_map().and_then(|m| m.get("action_groups")?.as_map().cloned());
        let resource = fq.rsplit(&format!("{collection}.")).next().unwrap_or_default();
        let Some(members) =
            action_groups.as_ref().and_then(|ag| ag.get(fq.as_str()).or_else(|| ag.get(resource)))
        else {
            return unresolved(fq);
        };
        let members: Vec<Node> = match &members.value {
            Value::Seq(items) => items.clone(),
            _ => Vec::new(),
        };
        let mut resolved = Vec::new();
        let mut extends: Vec<String> = Vec::new();
        let mut found_metadata = false;
        for member in &members {
            let Value::Str(action) = &member.value else {
                if self.options.validate_action_group_metadata {
                    warn_metadata(member, found_metadata, &fq);
                }
                if let Some(meta) = member.as_map().and_then(|m| m.get("metadata"))
                    && let Some(meta) = meta.as_map()
                {
                    found_metadata = true;
                    extends = match meta.get("extend_group").map(|n| &n.value) {
                        Some(Value::Str(one)) => vec![one.clone()],
                        Some(Value::Seq(many)) => {
                            many.iter().filter_map(|n| n.as_str().map(str::to_string)).collect()
                        }
                        _ => Vec::new(),
                    };
                }
                continue;
            };
            let action = if is_valid_fqcr(action) {
                action.clone()
            } else {
                format!("{collection}.{action}")
            };
            match self.resolve_action(&action, search, None)? {
                Some(found) => resolved.push(found),
                None => {
                    self.refuse_vvvvv_note(&format!(
                        "Could not resolve action {action} in module_defaults"
                    ))?;
                }
            }
        }
        groups.add(&fq, &resolved);
        // Extended groups last, once this one is cached: groups may extend each other.
        for include in extends {
            let include =
                if is_valid_fqcr(&include) { include } else { format!("{collection}.{include}") };
            let (_, actions) = self.resolve_group(&include, false, groups, search)?;
            groups.add(&fq, &actions);
            resolved.extend(actions);
        }
        Ok((fq, resolved))
    }

    /// At `-vvvvv` ansible notes, while it loads, a group's member it cannot resolve: tack
    /// has no place for such a note among what the run prints, and refuses the run there.
    fn refuse_vvvvv_note(&self, note: &str) -> Result<(), Diagnostic> {
        if self.options.verbosity < 5 {
            return Ok(());
        }
        Err(Diagnostic::new(format!(
            "tack does not support -vvvvv where a module_defaults group names what does not \
             resolve (ansible notes '{note}' while it loads) yet"
        )))
    }

    /// A collection's runtime metadata (`meta/runtime.yml`; empty when it has none), or
    /// `None` when the collection is not installed.
    fn collection_metadata(&self, collection: &str, search: &ModuleSearch) -> Option<Node> {
        if collection == "ansible.builtin" {
            return builtin_metadata().cloned();
        }
        let (ns, name) = collection.split_once('.')?;
        let dir = search.collections.collection(ns, name)?;
        let empty = Node::bare(Value::Map(Mapping::new()));
        let Ok(text) = std::fs::read_to_string(dir.join("meta").join("runtime.yml")) else {
            return Some(empty);
        };
        Some(
            tack_yaml::load_one(&text, None).ok().filter(|n| n.as_map().is_some()).unwrap_or(empty),
        )
    }
}

/// ansible's warning for a group member that is not an action name and not a well-formed
/// `metadata` entry.
fn warn_metadata(member: &Node, found_metadata: bool, group: &str) {
    let mut problems = Vec::new();
    let metadata = member.as_map().filter(|m| m.len() == 1).and_then(|m| m.get("metadata"));
    match metadata {
        None => {
            let mut keys: Vec<String> = match &member.value {
                Value::Map(map) => {
                    map.iter().map(|(k, _)| tack_yaml::pyrepr::str(&k.value)).collect()
                }
                Value::Seq(items) => {
                    items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect()
                }
                other => vec![tack_yaml::pyrepr::str(other)],
            };
            keys.sort();
            problems.push(format!(
                "The only expected key is metadata, but got keys: {}",
                keys.join(", ")
            ));
        }
        Some(metadata) => {
            if found_metadata {
                problems.push("The group contains multiple metadata entries.".to_string());
            }
            match metadata.as_map() {
                None => problems.push(format!(
                    "The metadata is not a dictionary. Got {}",
                    tack_yaml::pyrepr::str(&metadata.value)
                )),
                Some(map) => {
                    let unexpected: Vec<String> = map
                        .iter()
                        .map(|(k, _)| tack_yaml::pyrepr::str(&k.value))
                        .filter(|k| k != "extend_group")
                        .collect();
                    if !unexpected.is_empty() {
                        problems.push(format!(
                            "The metadata contains unexpected keys: {}",
                            unexpected.join(", ")
                        ));
                    }
                    if let Some(value) = map.get("extend_group")
                        && !matches!(value.value, Value::Seq(_) | Value::Str(_))
                    {
                        problems.push(format!(
                            "The metadata contains unexpected key types: extend_group is {} \
                             (expected type list)",
                            tack_yaml::pyrepr::str(&value.value)
                        ));
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        let mut text = format!(
            "Invalid metadata was found for action_group {group} while loading module_defaults."
        );
        for problem in problems {
            text.push(' ');
            text.push_str(&problem);
        }
        tack_diag::warn(&Diagnostic::new(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fully_qualified_names_include_ansible_cores_own() {
        assert!(is_valid_fqcr("ansible.builtin.aws"));
        assert!(is_valid_fqcr("ns.col.sub.group"));
        assert!(!is_valid_fqcr("aws"));
        assert!(!is_valid_fqcr("ns.col"));
        assert!(!is_valid_fqcr("ns.1col.group"));
    }

    #[test]
    fn builtin_names_resolve_as_ansible_core_alone_does() {
        assert_eq!(builtin_fqcn("ansible.legacy.ping").as_deref(), Some("ansible.builtin.ping"));
        assert_eq!(builtin_fqcn("debug").as_deref(), Some("ansible.builtin.debug"));
        assert_eq!(builtin_fqcn("ansible.legacy.no_such_thing"), None);
        assert_eq!(builtin_fqcn("community.general.timezone"), None);
    }

    #[test]
    fn ansible_cores_own_groups_are_read() {
        let metadata = builtin_metadata().and_then(Node::as_map);
        let groups = metadata.and_then(|m| m.get("action_groups")).and_then(Node::as_map);
        assert!(groups.is_some_and(|g| g.get("testgroup").is_some() && g.get("aws").is_some()));
    }
}
