//! Collections as ansible-core 2.21's collection finder sees them: roots searched in order
//! (`collections/` beside each playbook, then the configured `collections_path`), each holding
//! `ansible_collections/<namespace>/<name>/`. The first root that holds a collection is where
//! that collection is, whatever later roots hold (Python finds a package once).
//!
//! Owns finding a collection's directory and the files a fully qualified name names in it
//! (modules, roles); what a collection's `meta/runtime.yml` routes is read only to refuse what
//! tack does not follow yet.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tack_diag::Diagnostic;
use tack_yaml::{Node, Value};

/// A fully qualified name split as ansible splits it: `ns.col.rest` (`rest` may hold dots:
/// a plugin in a subdirectory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fqcr<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub resource: &'a str,
}

impl<'a> Fqcr<'a> {
    /// `None` for a short name, a malformed one, or one of ansible-core's own collections
    /// (`ansible.builtin`, `ansible.legacy`: never a collection on disk).
    pub fn parse(text: &'a str) -> Option<Fqcr<'a>> {
        let mut parts = text.splitn(3, '.');
        let (namespace, name, resource) = (parts.next()?, parts.next()?, parts.next()?);
        let identifier = |s: &str| {
            let mut chars = s.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        let core = namespace == "ansible" && matches!(name, "builtin" | "legacy");
        (!core && identifier(namespace) && identifier(name) && resource.split('.').all(identifier))
            .then_some(Fqcr { namespace, name, resource })
    }

    /// The resource's directory parts and its own name (`sub.mod` → `[sub]`, `mod`).
    pub(crate) fn leaf(&self) -> (Vec<&'a str>, &'a str) {
        let mut parts: Vec<&str> = self.resource.split('.').collect();
        let leaf = parts.pop().unwrap_or_default();
        (parts, leaf)
    }
}

/// Roots known only by asking the controller's interpreter (the `ansible_collections`
/// packages on its `sys.path`, as the `ansible` pip package installs them): asked once, the
/// first time a collection is not found in the other roots.
#[derive(Clone, Default)]
pub struct LazyRoots {
    find: Option<Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>>,
    found: Arc<OnceLock<Vec<PathBuf>>>,
}

impl LazyRoots {
    pub fn new(find: impl Fn() -> Vec<PathBuf> + Send + Sync + 'static) -> LazyRoots {
        LazyRoots { find: Some(Arc::new(find)), found: Arc::default() }
    }

    fn get(&self) -> &[PathBuf] {
        match &self.find {
            Some(find) => self.found.get_or_init(|| find()),
            None => &[],
        }
    }
}

impl std::fmt::Debug for LazyRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyRoots").field("found", &self.found.get()).finish()
    }
}

/// The roots collections are looked for in, in order: those a run names, then the lazy
/// ones.
#[derive(Debug, Clone, Default)]
pub struct CollectionRoots {
    pub named: Vec<PathBuf>,
    pub lazy: LazyRoots,
}

impl CollectionRoots {
    /// The roots the run names (not asking the interpreter): what ansible's own collection
    /// loader is given, which scans its `sys.path` itself.
    pub fn named(&self) -> &[PathBuf] {
        &self.named
    }

    /// The directory of collection `namespace.name`, from the first root that has it.
    pub fn collection(&self, namespace: &str, name: &str) -> Option<PathBuf> {
        self.in_roots(&self.named, namespace, name)
            .or_else(|| self.in_roots(self.lazy.get(), namespace, name))
    }

    fn in_roots(&self, roots: &[PathBuf], namespace: &str, name: &str) -> Option<PathBuf> {
        roots
            .iter()
            .map(|root| {
                // A configured path may name the `ansible_collections` directory itself.
                let base = if root.ends_with("ansible_collections") {
                    root.clone()
                } else {
                    root.join("ansible_collections")
                };
                base.join(namespace).join(name)
            })
            .find(|dir| dir.is_dir())
    }

    /// The role directory `fqcr` names (`ns.col.role`: `roles/role` of the collection).
    pub fn role(&self, fqcr: &Fqcr<'_>) -> Option<PathBuf> {
        let dir = self.collection(fqcr.namespace, fqcr.name)?;
        (!fqcr.resource.contains('.'))
            .then(|| dir.join("roles").join(fqcr.resource))
            .filter(|role| role.is_dir())
    }
}

/// What tack cannot do yet for a collection module it found, named for the refusal: an
/// action plugin of the module's name (ansible runs it instead of the bare module), or a
/// routing entry in the collection's `meta/runtime.yml` for it.
pub(crate) fn module_refusal(collection: &Path, fqcr: &Fqcr<'_>) -> Option<String> {
    let (subdirs, leaf) = fqcr.leaf();
    let mut actions = collection.join("plugins").join("action");
    actions.extend(subdirs);
    if actions.join(format!("{leaf}.py")).is_file() {
        return Some(format!(
            "tack does not run action plugins from collections yet: '{}.{}.{}' has one ({})",
            fqcr.namespace,
            fqcr.name,
            fqcr.resource,
            actions.join(format!("{leaf}.py")).display()
        ));
    }
    let runtime = collection.join("meta").join("runtime.yml");
    let text = std::fs::read_to_string(&runtime).ok()?;
    let doc = tack_yaml::load_one(&text, None).ok()?;
    let routed = ["modules", "action"].iter().any(|kind| {
        let entry = doc
            .as_map()
            .and_then(|m| m.get("plugin_routing"))
            .and_then(Node::as_map)
            .and_then(|m| m.get(kind))
            .and_then(Node::as_map)
            .and_then(|m| m.get(fqcr.resource));
        entry.is_some()
    });
    routed.then(|| {
        format!(
            "tack does not follow a collection's plugin routing yet: {} routes '{}.{}.{}'",
            runtime.display(),
            fqcr.namespace,
            fqcr.name,
            fqcr.resource
        )
    })
}

/// The `collections:` keyword's list as written (a string is a one-item list), with
/// `ansible.legacy` appended when neither of ansible-core's own collections is in it, as
/// ansible's `_ensure_default_collection` does.
pub(crate) fn keyword_list(node: &Node) -> Result<Vec<String>, Diagnostic> {
    Ok(with_core(keyword_items(node)?, "ansible.legacy"))
}

/// The `collections:` keyword's names as written.
pub(crate) fn keyword_items(node: &Node) -> Result<Vec<String>, Diagnostic> {
    let items: Vec<&Node> = match &node.value {
        Value::Seq(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        _ => vec![node],
    };
    let mut list = Vec::new();
    for item in items {
        match &item.value {
            Value::Str(s) | Value::Unsafe(s) => list.push(s.clone()),
            _ => {
                return Err(Diagnostic::at(
                    format!(
                        "The value {} in 'collections' is not a string.",
                        tack_yaml::pyrepr::repr(&item.value)
                    ),
                    item.origin.clone(),
                ));
            }
        }
    }
    Ok(list)
}

/// `list` with `core` appended when it names collections but neither `ansible.builtin` nor
/// `ansible.legacy`.
pub(crate) fn with_core(mut list: Vec<String>, core: &str) -> Vec<String> {
    if !list.is_empty() && !list.iter().any(|c| c == "ansible.builtin" || c == "ansible.legacy") {
        list.push(core.to_string());
    }
    list
}

/// A role's own collection list (roles do not inherit their play's): its collection first
/// when it came from one, then the collections its `meta/main.yml` names, then
/// `ansible.builtin` for a collection's role and `ansible.legacy` for any other.
pub(crate) fn role_list(collection: Option<&str>, meta: &[String]) -> Vec<String> {
    let mut list: Vec<String> = collection.map(str::to_string).into_iter().collect();
    for c in meta {
        if !list.contains(c) {
            list.push(c.clone());
        }
    }
    let core = if collection.is_some() { "ansible.builtin" } else { "ansible.legacy" };
    with_core(list, core)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_as_ansible_splits_them() {
        let f = Fqcr::parse("ns.col.sub.mod").unwrap();
        assert_eq!((f.namespace, f.name, f.resource), ("ns", "col", "sub.mod"));
        assert_eq!(f.leaf(), (vec!["sub"], "mod"));
        assert!(Fqcr::parse("copy").is_none());
        assert!(Fqcr::parse("ansible.builtin.copy").is_none());
        assert!(Fqcr::parse("ansible.legacy.copy").is_none());
        assert!(Fqcr::parse("ansible.posix.mount").is_some());
        assert!(Fqcr::parse("ns.col.{{ x }}").is_none());
    }
}
