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
        let core = namespace == "ansible" && matches!(name, "builtin" | "legacy");
        (!core && is_valid_fqcr(text)).then_some(Fqcr { namespace, name, resource })
    }

    /// The resource's directory parts and its own name (`sub.mod` → `[sub]`, `mod`).
    pub(crate) fn leaf(&self) -> (Vec<&'a str>, &'a str) {
        let mut parts: Vec<&str> = self.resource.split('.').collect();
        let leaf = parts.pop().unwrap_or_default();
        (parts, leaf)
    }
}

/// ansible's `AnsibleCollectionRef.is_valid_fqcr`: `ns.col.name` (the name may hold dots),
/// each part an identifier; ansible-core's own collections included, unlike [`Fqcr::parse`].
pub(crate) fn is_valid_fqcr(name: &str) -> bool {
    let identifier = |s: &str| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 3 && parts.iter().all(|p| identifier(p))
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

    pub(crate) fn get(&self) -> &[PathBuf] {
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

    /// The playbook file `fqcr` names (`ns.col.pb`: `playbooks/pb.yml` or `.yaml` of the
    /// collection, or the name as written).
    pub fn playbook(&self, fqcr: &Fqcr<'_>) -> Option<PathBuf> {
        let dir = self.collection(fqcr.namespace, fqcr.name)?;
        let (subdirs, leaf) = fqcr.leaf();
        let mut playbooks = dir.join("playbooks");
        playbooks.extend(subdirs);
        [leaf.to_string(), format!("{leaf}.yml"), format!("{leaf}.yaml")]
            .into_iter()
            .map(|name| playbooks.join(name))
            .find(|path| path.is_file())
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
/// action routing entry for it in the collection's `meta/runtime.yml` that ends at one of
/// ansible-core's own action plugins. (One that ends at a collection's action plugin runs
/// it in the module's place, and one that ends at nothing leaves the module to run, as
/// ansible does: `ModuleSearch::action_plugin`.)
pub(crate) fn module_refusal(
    roots: &CollectionRoots,
    collection: &Path,
    fqcr: &Fqcr<'_>,
) -> Option<String> {
    routing_entry(collection, "action", fqcr.resource)?;
    let name = format!("{}.{}.{}", fqcr.namespace, fqcr.name, fqcr.resource);
    let end = follow_kind(roots, &name, "action").ok()?.name;
    let core = Fqcr::parse(&end)
        .is_none_or(|t| matches!((t.namespace, t.name), ("ansible", "builtin" | "legacy")));
    core.then(|| {
        format!(
            "tack does not follow a collection's action plugin routing to ansible-core's \
             own actions yet: {} routes '{name}' to '{end}'",
            collection.join("meta").join("runtime.yml").display(),
        )
    })
}

/// The `plugin_routing` entry of `kind` for `resource` in a collection's `meta/runtime.yml`.
fn routing_entry(collection: &Path, kind: &str, resource: &str) -> Option<Node> {
    let text = std::fs::read_to_string(collection.join("meta").join("runtime.yml")).ok()?;
    let doc = tack_yaml::load_one(&text, None).ok()?;
    doc.as_map()?.get("plugin_routing")?.as_map()?.get(kind)?.as_map()?.get(resource).cloned()
}

/// Where a collection's module name leads through its collections' `meta/runtime.yml`
/// (`plugin_routing.modules`), as ansible's loader follows it.
#[derive(Debug, Default)]
pub(crate) struct Followed {
    /// The name the module is finally found by.
    pub name: String,
    /// ansible's deprecation messages met on the way, complete (`... This feature will be
    /// removed from collection 'ns.col' version 3.0.0.`).
    pub deprecations: Vec<String>,
    /// The module's `action_plugin` (its routing entry's, where the redirects end): the
    /// action plugin ansible runs it with, before one of the module's own name.
    pub action_plugin: Option<String>,
}

/// Follows `name`'s routing: `Err` with ansible's message for a removed module (a
/// tombstone) or a redirect loop.
pub(crate) fn follow(roots: &CollectionRoots, name: &str) -> Result<Followed, String> {
    follow_kind(roots, name, "modules")
}

/// [`follow`] through the routing of plugins of `kind` (`modules`, `action`).
pub(crate) fn follow_kind(
    roots: &CollectionRoots,
    name: &str,
    kind: &str,
) -> Result<Followed, String> {
    let mut current = name.to_string();
    let mut action_plugin = None;
    let mut seen = Vec::new();
    let mut deprecations = Vec::new();
    loop {
        if seen.contains(&current) {
            return Err(format!("recursive collection redirect found for '{name}'"));
        }
        seen.push(current.clone());
        let Some(fqcr) = Fqcr::parse(&current) else { break };
        let Some(dir) = roots.collection(fqcr.namespace, fqcr.name) else { break };
        let Some(entry) = routing_entry(&dir, kind, fqcr.resource) else { break };
        let collection = format!("{}.{}", fqcr.namespace, fqcr.name);
        let field = |map: &tack_yaml::Mapping, key: &str| {
            map.get(key).map(|n| tack_yaml::pyrepr::str(&n.value)).filter(|s| !s.is_empty())
        };
        let when = |map: &tack_yaml::Mapping, removed: bool| {
            let verb = if removed { "was" } else { "will be" };
            match (field(map, "removal_version"), field(map, "removal_date")) {
                (Some(v), _) => format!(
                    "This feature {verb} removed from collection '{collection}' version {v}."
                ),
                (None, Some(d)) => format!(
                    "This feature {verb} removed from collection '{collection}' in a release \
                     after {d}."
                ),
                (None, None) => {
                    format!("This feature {verb} removed from collection '{collection}'.")
                }
            }
        };
        let text = |map: &tack_yaml::Mapping| {
            field(map, "warning_text").map(|t| format!(" {t}")).unwrap_or_default()
        };
        let entry = entry.as_map().cloned().unwrap_or_default();
        if let Some(tomb) = entry.get("tombstone").and_then(Node::as_map) {
            return Err(format!(
                "The '{current}' module has been removed.{} {}",
                text(tomb),
                when(tomb, true)
            ));
        }
        if let Some(dep) = entry.get("deprecation").and_then(Node::as_map) {
            deprecations.push(format!(
                "{current} has been deprecated.{} {}",
                text(dep),
                when(dep, false)
            ));
        }
        match entry.get("redirect").map(|n| tack_yaml::pyrepr::str(&n.value)) {
            Some(target) => current = target,
            None => {
                if kind == "modules" {
                    action_plugin = field(&entry, "action_plugin");
                }
                break;
            }
        }
    }
    Ok(Followed { name: current, deprecations, action_plugin })
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

/// `list` with the default collection (a collection playbook's, once one was loaded) first,
/// as ansible's `_ensure_default_collection` puts it.
pub(crate) fn with_default(mut list: Vec<String>, default: Option<&str>) -> Vec<String> {
    if let Some(default) = default
        && !list.iter().any(|c| c == default)
    {
        list.insert(0, default.to_string());
    }
    with_core(list, "ansible.legacy")
}

/// A role's own collection list (roles do not inherit their play's): its collection first
/// when it came from one (else the default collection, when a collection playbook set one),
/// then the collections its `meta/main.yml` names, then `ansible.builtin` for a collection's
/// role and `ansible.legacy` for any other.
pub(crate) fn role_list(
    collection: Option<&str>,
    default: Option<&str>,
    meta: &[String],
) -> Vec<String> {
    let mut list: Vec<String> = collection.or(default).map(str::to_string).into_iter().collect();
    for c in meta {
        if !list.contains(c) {
            list.push(c.clone());
        }
    }
    let core = if collection.is_some() { "ansible.builtin" } else { "ansible.legacy" };
    with_core(list, core)
}

/// What a run does when a collection's `requires_ansible` excludes this ansible-core
/// (`COLLECTIONS_ON_ANSIBLE_VERSION_MISMATCH`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VersionMismatch {
    #[default]
    Warning,
    Error,
    Ignore,
}

/// The ansible-core version collections are checked against.
const CORE_VERSION: [u64; 3] = [2, 21, 5];

/// ansible's check as a collection loads: `Err` with its message when the collection's
/// `requires_ansible` excludes 2.21.5 and the setting says error; the warning otherwise
/// (unless ignored), or ansible's warning for a requirement it cannot parse.
pub(crate) fn check_version(
    name: &str,
    dir: &Path,
    mismatch: VersionMismatch,
) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string(dir.join("meta").join("runtime.yml")) else {
        return Ok(());
    };
    let Ok(doc) = tack_yaml::load_one(&text, None) else { return Ok(()) };
    let Some(spec) = doc.as_map().and_then(|m| m.get("requires_ansible")) else { return Ok(()) };
    let spec = tack_yaml::pyrepr::str(&spec.value);
    match supports(&spec, CORE_VERSION) {
        Ok(true) => Ok(()),
        Ok(false) => {
            let message = format!("Collection {name} does not support Ansible version 2.21.5");
            match mismatch {
                VersionMismatch::Warning => {
                    tack_diag::warn(&Diagnostic::new(message));
                    Ok(())
                }
                VersionMismatch::Error => Err(message),
                VersionMismatch::Ignore => Ok(()),
            }
        }
        Err(why) => {
            tack_diag::warn(&Diagnostic::new(format!(
                "Error parsing collection metadata requires_ansible value from collection \
                 {name}: {why}"
            )));
            Ok(())
        }
    }
}

/// Whether a PEP 440 specifier set (`>=2.15.0,<3`) admits `version`, for release versions
/// (what `requires_ansible` holds); `Err` with `packaging`'s words for one it cannot read.
fn supports(spec: &str, version: [u64; 3]) -> Result<bool, String> {
    let invalid = |clause: &str| format!("Invalid specifier: '{clause}'");
    for clause in spec.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        let op_len = clause.find(|c: char| c.is_ascii_digit() || c.is_whitespace()).unwrap_or(0);
        let (op, rest) = clause.split_at(op_len);
        let rest = rest.trim();
        let (text, wildcard) = match rest.strip_suffix(".*") {
            Some(t) if matches!(op, "==" | "!=") => (t, true),
            _ => (rest, false),
        };
        let parts: Option<Vec<u64>> = text.split('.').map(|p| p.parse().ok()).collect();
        let Some(parts) = parts.filter(|p| !p.is_empty()) else { return Err(invalid(clause)) };
        let at = |i: usize| parts.get(i).copied().unwrap_or(0);
        let wanted = [at(0), at(1), at(2)];
        let prefix = |n: usize| version[..n.min(3)] == wanted[..n.min(3)];
        let ok = match op {
            ">=" => version >= wanted,
            "<=" => version <= wanted,
            ">" => version > wanted,
            "<" => version < wanted,
            "==" if wildcard => prefix(parts.len()),
            "!=" if wildcard => !prefix(parts.len()),
            "==" | "===" => version == wanted,
            "!=" => version != wanted,
            "~=" if parts.len() >= 2 => version >= wanted && prefix(parts.len() - 1),
            _ => return Err(invalid(clause)),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_ansible_reads_as_packaging_does() {
        let v = [2, 21, 5];
        assert_eq!(supports(">=2.15.0", v), Ok(true));
        assert_eq!(supports(">=2.99.0,<3", v), Ok(false));
        assert_eq!(supports(">=2.14,<2.22", v), Ok(true));
        assert_eq!(supports("~=2.20", v), Ok(true));
        assert_eq!(supports("~=2.20.0", v), Ok(false));
        assert_eq!(supports("==2.21.*", v), Ok(true));
        assert_eq!(supports("!=2.21.5", v), Ok(false));
        assert_eq!(supports("bogus", v), Err("Invalid specifier: 'bogus'".into()));
    }

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
