//! Finding a task's action and arguments among its keys, in all the forms ansible accepts
//! (`copy: src=a`, `copy: {src: a}`, `action: copy src=a`, `local_action: ...`, `args:`),
//! as `ansible/parsing/mod_args.py` does, and deciding whether a name is an action at all.

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::{general_error, parser_error};
use crate::tables::{self, ObjectKind, Routing, actions};
use tack_loader::kv;

/// A task's action, arguments and `delegate_to`, as found among its keys.
#[derive(Debug, Clone)]
pub(crate) struct ParsedAction {
    pub action: String,
    pub args: Mapping,
    /// `Some` when the task set `delegate_to` (or `local_action` implied `localhost`).
    pub delegate_to: Option<Node>,
}

/// How an action name resolves among the plugins tack knows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolution {
    /// A builtin module/action (its short name) or a custom module found on a module path.
    Resolved(String),
    Unresolved,
    /// A removed builtin: using it is an error with this message.
    Removed(String),
}

/// Where modules beside the builtins are found: ansible's legacy module search
/// (`PluginLoader._find_plugin_legacy` over `_get_paths_with_context`).
#[derive(Debug, Clone, Default)]
pub struct ModuleSearch {
    /// Directories added in the run (`library/` beside playbooks, `-M`, `library/` of roles),
    /// searched in this order.
    pub library: Vec<PathBuf>,
    /// The configured module path: in each, its subdirectories one and two levels down come
    /// before it, as ansible searches them.
    pub configured: Vec<PathBuf>,
    /// The `module_utils` directories, in search order.
    pub utils: Vec<PathBuf>,
    /// Where Python action plugins are found for short names: `action_plugins/` beside
    /// playbooks and roles, then the configured path.
    pub action_plugins: Vec<PathBuf>,
    /// Where lookup plugins are found for short names: `lookup_plugins/` beside playbooks
    /// and roles, then the configured path.
    pub lookup_plugins: Vec<PathBuf>,
    /// Where collections are found, for fully qualified names.
    pub collections: super::collections::CollectionRoots,
    /// The task's `collections:` search list: a short name is looked for in each in turn
    /// (`ansible.legacy` being the search above and ansible-core, `ansible.builtin`
    /// ansible-core alone). Empty: `ansible.legacy` alone.
    pub collection_list: Vec<String>,
    /// Names `plugin_filters_cfg`'s `module_rejectlist` rejects: a module or action named
    /// exactly so (as the task writes it) resolves to nothing, as ansible's legacy plugin
    /// search refuses it before looking.
    pub rejected: std::sync::Arc<std::collections::BTreeSet<String>>,
    /// The controller's ansible-core package directory, asked for (an interpreter start)
    /// only when a short name is found nowhere else.
    pub core_package: super::collections::LazyRoots,
}

/// Endings ansible never takes for a module (`MODULE_IGNORE_EXTS`' default).
const IGNORED_ENDINGS: &[&str] =
    &[".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".yaml", ".yml", ".ini"];

impl ModuleSearch {
    /// Whether the plugin filter rejects `name` (only as written: `ansible.builtin.copy`
    /// passes where `copy` is rejected, as in ansible).
    pub fn rejects(&self, name: &str) -> bool {
        self.rejected.contains(name)
    }

    /// The Python action plugin a short (or `ansible.legacy.`) name finds outside
    /// ansible-core: ansible runs it in place of the module or action of that name.
    pub fn action_plugin(&self, name: &str) -> Option<PathBuf> {
        if let Some(fqcr) = super::collections::Fqcr::parse(name) {
            return self.collection_action_plugin(name, &fqcr);
        }
        // A short name through the task's `collections:` list, as `find` searches modules.
        if !name.contains('.') {
            for collection in &self.collection_list {
                match collection.as_str() {
                    "ansible.legacy" => break,
                    "ansible.builtin" => return None,
                    _ => {}
                }
                let qualified = format!("{collection}.{name}");
                if let Some(fqcr) = super::collections::Fqcr::parse(&qualified)
                    && let Some(path) = self.collection_action_plugin(&qualified, &fqcr)
                {
                    return Some(path);
                }
            }
        }
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if short.contains('.')
            || short.is_empty()
            || short != name && !name.starts_with("ansible.legacy.")
        {
            return None;
        }
        self.action_plugins.iter().map(|d| d.join(format!("{short}.py"))).find(|p| p.is_file())
    }

    /// Whether ansible's lookup loader has a lookup of this name (`with_<name>` is then a
    /// loop): a builtin (short, `ansible.builtin.` or `ansible.legacy.`), a Python file in a
    /// `lookup_plugins` directory (short or `ansible.legacy.`), or a collection's, its
    /// routing followed (a builtin name ansible-core routes to a collection included).
    pub fn lookup_exists(&self, name: &str) -> bool {
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if !short.contains('.') {
            let legacy = short == name || name.starts_with("ansible.legacy.");
            if legacy && self.lookup_plugins.iter().any(|d| d.join(format!("{short}.py")).is_file())
            {
                return true;
            }
            if tables::BUILTIN_LOOKUPS.contains(&short) {
                return true;
            }
            return match tables::routing("lookup", short) {
                Some(Routing::Collection(target)) => self.collection_lookup(target),
                _ => false,
            };
        }
        self.collection_lookup(name)
    }

    /// A collection's lookup plugin of a fully qualified name, its routing followed.
    fn collection_lookup(&self, name: &str) -> bool {
        let Ok(followed) = super::collections::follow_kind(&self.collections, name, "lookup")
        else {
            return false;
        };
        super::collections::Fqcr::parse(&followed.name)
            .and_then(|target| self.plugin_file(&target, "lookup"))
            .is_some()
    }

    /// The `normal` action plugin found outside ansible-core (`action_plugins/normal.py`
    /// beside a playbook or role, the configured path) when `name` is a module with no action
    /// plugin of its own: ansible runs every such module through `ansible.legacy.normal`,
    /// which such a file replaces. `library`: the module file the task's search found.
    pub fn normal_override(
        &self,
        name: &str,
        library: Option<&crate::ast::LibraryModule>,
    ) -> Option<PathBuf> {
        if name.contains("{{") || self.action_plugin(name).is_some() {
            return None;
        }
        let module = match library {
            // A collection's module with an action plugin of its own runs that.
            Some(found) => found.collection.as_ref().is_none_or(|c| c.action_plugin.is_none()),
            None => {
                let short = tack_py::ansible::short_name(
                    name,
                    tack_py::ansible::CoreCollections::BuiltinOrLegacy,
                );
                tables::BUILTIN_MODULES.contains(&short)
                    && !tables::BUILTIN_ACTIONS.contains(&short)
                    && !actions::is(name, actions::BUILTIN_TASKS)
            }
        };
        if !module || self.collection_action_fqcn(name).is_some() {
            return None;
        }
        self.action_plugins.iter().map(|d| d.join("normal.py")).find(|p| p.is_file())
    }

    /// A collection's action plugin of a fully qualified name (its routing followed):
    /// `plugins/action/` of the collection, which ansible runs in place of the module.
    fn collection_action_plugin(
        &self,
        name: &str,
        fqcr: &super::collections::Fqcr<'_>,
    ) -> Option<PathBuf> {
        let followed = super::collections::follow(&self.collections, name).ok()?;
        // The module's routing may name the action plugin it runs with (ansible's
        // `action_plugin`), which wins over one of the module's own name.
        if let Some(named) = &followed.action_plugin {
            let action =
                super::collections::follow_kind(&self.collections, named, "action").ok()?;
            let target = super::collections::Fqcr::parse(&action.name)?;
            return self.action_file(&target);
        }
        // Else an action plugin of the task's name, through the collection's action routing
        // (ansible's `action_loader.has_plugin`); a redirect that leads to no plugin leaves
        // the module to run as it is.
        let action = super::collections::follow_kind(&self.collections, name, "action").ok()?;
        let target = super::collections::Fqcr::parse(&action.name).unwrap_or(*fqcr);
        self.action_file(&target)
    }

    /// The fully qualified name a collection's action plugin of `name` resolves to through
    /// the collections' action routing (a short name through the `collections:` list), when
    /// there is such a plugin: what ansible's `_resolve_action` prefers for a module with no
    /// `action_plugin` of its own.
    pub fn collection_action_fqcn(&self, name: &str) -> Option<String> {
        let candidates: Vec<String> = if super::collections::Fqcr::parse(name).is_some() {
            vec![name.to_string()]
        } else if !name.contains('.') {
            self.collection_list
                .iter()
                .take_while(|c| !c.starts_with("ansible."))
                .map(|c| format!("{c}.{name}"))
                .collect()
        } else {
            Vec::new()
        };
        candidates.iter().find_map(|qualified| {
            let action =
                super::collections::follow_kind(&self.collections, qualified, "action").ok()?;
            let target = super::collections::Fqcr::parse(&action.name)?;
            self.action_file(&target).map(|_| action.name.clone())
        })
    }

    /// `plugins/action/<name>.py` of the collection `target` names.
    fn action_file(&self, target: &super::collections::Fqcr<'_>) -> Option<PathBuf> {
        self.plugin_file(target, "action")
    }

    /// `plugins/<kind>/[SUB/]<name>.py` of the collection `target` names, if it is there.
    fn plugin_file(&self, target: &super::collections::Fqcr<'_>, kind: &str) -> Option<PathBuf> {
        let dir = self.collections.collection(target.namespace, target.name)?;
        let (subdirs, leaf) = target.leaf();
        let mut plugins = dir.join("plugins").join(kind);
        plugins.extend(subdirs);
        let path = plugins.join(format!("{leaf}.py"));
        path.is_file().then_some(path)
    }

    /// The module file a short (or `ansible.legacy.`) name finds outside ansible-core.
    pub fn find(&self, name: &str) -> Option<crate::ast::LibraryModule> {
        if let Some(fqcr) = super::collections::Fqcr::parse(name) {
            return self.collection_module(name, &fqcr);
        }
        if name.starts_with("ansible.builtin.") {
            return self.routed(name);
        }
        if !name.contains('.') {
            for collection in &self.collection_list {
                match collection.as_str() {
                    "ansible.legacy" => return self.legacy(name).or_else(|| self.routed(name)),
                    "ansible.builtin" => return self.routed(name),
                    _ => {}
                }
                let qualified = format!("{collection}.{name}");
                if let Some(fqcr) = super::collections::Fqcr::parse(&qualified)
                    && let Some(mut module) = self.collection_module(&qualified, &fqcr)
                {
                    // The task keeps the name it was written with.
                    module.name = name.to_string();
                    return Some(module);
                }
            }
        }
        self.legacy(name).or_else(|| self.routed(name)).or_else(|| self.core_tree(name))
    }

    /// A module file in the controller's installed ansible-core (`ansible/modules/`) that
    /// tack's tables do not know (one put there by hand): ansible's loader finds it as
    /// ansible-core's own. Names tack knows as ansible-core's never come here.
    fn core_tree(&self, name: &str) -> Option<crate::ast::LibraryModule> {
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if short.contains('.')
            || short.is_empty()
            || short.starts_with('_')
            || tables::BUILTIN_MODULES.contains(&short)
            || tables::BUILTIN_ACTIONS.contains(&short)
        {
            return None;
        }
        let path = self.core_package.get().iter().find_map(|dir| {
            let file = dir.join("modules").join(format!("{short}.py"));
            file.is_file().then_some(file)
        })?;
        Some(crate::ast::LibraryModule {
            name: short.to_string(),
            path,
            utils: self.utils.iter().filter(|d| d.is_dir()).cloned().collect(),
            collection: None,
        })
    }

    /// ansible-core's deprecation of the module the task's `name` resolved to (`library`:
    /// the module file the search found, if any), as its loader words it: a builtin module
    /// of tack's tables, or a file of the controller's installed ansible-core that
    /// ansible-core's routing deprecates (a `library/` module of that name is not
    /// ansible-core's). The installed tree is only asked for a name the routing deprecates.
    pub fn core_deprecation(
        &self,
        name: &str,
        library: Option<&crate::ast::LibraryModule>,
    ) -> Option<(String, &'static str)> {
        let Some(module) = library else { return builtin_module_deprecation(name) };
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        let Some(Routing::Deprecated { warning_text, removal_version }) =
            tables::routing("modules", short)
        else {
            return None;
        };
        let in_core = module.collection.is_none()
            && self
                .core_package
                .get()
                .iter()
                .any(|dir| module.path.starts_with(dir.join("modules")));
        in_core.then(|| (format!("{name} has been deprecated. {warning_text}"), removal_version))
    }

    /// The collection module ansible-core's own routing sends a builtin name to
    /// (`timezone` → `community.general.timezone`), when that collection is installed; the
    /// task keeps the name it was written with.
    fn routed(&self, name: &str) -> Option<crate::ast::LibraryModule> {
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if short.contains('.') {
            return None;
        }
        ["modules", "action"].iter().find_map(|kind| match tables::routing(kind, short) {
            Some(Routing::Collection(target)) => {
                let fqcr = super::collections::Fqcr::parse(target)?;
                let mut module = self.collection_module(target, &fqcr)?;
                module.name = name.to_string();
                Some(module)
            }
            _ => None,
        })
    }

    /// The module a short or `ansible.legacy.` name finds in the legacy search (`library/`
    /// directories and the configured module path).
    fn legacy(&self, name: &str) -> Option<crate::ast::LibraryModule> {
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        if short.contains('.') || short.is_empty() {
            return None;
        }
        let path = match self.dirs().find_map(|dir| module_in(&dir, short)) {
            Some(path) => path,
            None => self.underscored(short)?,
        };
        Some(crate::ast::LibraryModule {
            name: short.to_string(),
            path,
            utils: self.utils.iter().filter(|d| d.is_dir()).cloned().collect(),
            collection: None,
        })
    }

    /// ansible's last resort for a name nothing else has (not even ansible-core): the module
    /// of that name with a leading `_` (how deprecated modules were once kept), with its
    /// deprecation of the redirect.
    fn underscored(&self, short: &str) -> Option<PathBuf> {
        if short.starts_with('_')
            || tables::BUILTIN_MODULES.contains(&short)
            || tables::BUILTIN_ACTIONS.contains(&short)
        {
            return None;
        }
        let alias = format!("_{short}");
        let path = self.dirs().find_map(|dir| module_in(&dir, &alias))?;
        tack_diag::deprecate(
            &Diagnostic::new(format!("Plugin '{short}' automatically redirected to '{alias}'."))
                .with_help(format!("Use '{alias}' instead of '{short}' to refer to the plugin.")),
            "2.23",
        );
        Some(path)
    }

    /// Why a collection's module name cannot be used: ansible's message for a module its
    /// collection removed (or a routing loop).
    pub fn removed(&self, name: &str) -> Option<String> {
        super::collections::Fqcr::parse(name)?;
        super::collections::follow(&self.collections, name).err()
    }

    /// A collection's module, by its fully qualified name, its collections' routing followed.
    fn collection_module(
        &self,
        name: &str,
        fqcr: &super::collections::Fqcr<'_>,
    ) -> Option<crate::ast::LibraryModule> {
        let followed = super::collections::follow(&self.collections, name).ok()?;
        if followed.name != name {
            let target = super::collections::Fqcr::parse(&followed.name)?;
            let mut module = self.collection_module_at(&followed.name, &target)?;
            module.name = name.to_string();
            if let Some(c) = module.collection.as_mut() {
                let mut all = followed.deprecations;
                all.append(&mut c.deprecations);
                c.deprecations = all;
                c.action_plugin = followed.action_plugin;
                if let Some(first) = self.collections.collection(fqcr.namespace, fqcr.name) {
                    c.loaded.insert(0, (format!("{}.{}", fqcr.namespace, fqcr.name), first));
                }
            }
            return Some(module);
        }
        let mut module = self.collection_module_at(name, fqcr)?;
        if let Some(c) = module.collection.as_mut() {
            c.deprecations = followed.deprecations;
            c.action_plugin = followed.action_plugin;
        }
        Some(module)
    }

    /// The module file of `fqcr` itself, no routing followed.
    fn collection_module_at(
        &self,
        name: &str,
        fqcr: &super::collections::Fqcr<'_>,
    ) -> Option<crate::ast::LibraryModule> {
        let dir = self.collections.collection(fqcr.namespace, fqcr.name)?;
        let (subdirs, leaf) = fqcr.leaf();
        let mut modules = dir.join("plugins").join("modules");
        modules.extend(subdirs);
        let path = module_in(&modules, leaf)?;
        Some(crate::ast::LibraryModule {
            name: name.to_string(),
            path,
            utils: Vec::new(),
            collection: Some(crate::ast::CollectionModule {
                fqcn: name.to_string(),
                roots: self.collections.named().to_vec(),
                refusal: super::collections::module_refusal(&self.collections, &dir, fqcr),
                deprecations: Vec::new(),
                loaded: vec![(format!("{}.{}", fqcr.namespace, fqcr.name), dir.clone())],
                action_plugin: None,
            }),
        })
    }

    fn dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        let configured = self.configured.iter().flat_map(|path| {
            let mut dirs = subdirs(path);
            dirs.extend(dirs.clone().iter().flat_map(|d| subdirs(d)));
            dirs.push(path.clone());
            dirs
        });
        self.library.iter().cloned().chain(configured)
    }
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

/// `name`'s module file in `dir`: the file of that exact name, else one named `name` with
/// an ending (`.py` first, PowerShell's `.ps1` last: the hosts tack reaches are POSIX).
/// ansible takes the first the directory lists; listing order is the file system's, so a
/// fixed preference stands in for it.
fn module_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let exact = dir.join(name);
    if exact.is_file() {
        return Some(exact);
    }
    let entries = std::fs::read_dir(dir).ok()?;
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_stem().is_some_and(|s| s == name)
                && p.is_file()
                && p.file_name().and_then(|f| f.to_str()).is_some_and(|f| {
                    f != "__init__.py" && !IGNORED_ENDINGS.iter().any(|end| f.ends_with(end))
                })
        })
        .collect();
    let rank = |p: &PathBuf| match p.extension().and_then(|e| e.to_str()) {
        Some("py") => 0,
        Some("ps1") => 2,
        _ => 1,
    };
    found.sort_by_key(|p| (rank(p), p.clone()));
    found.into_iter().next()
}

pub(crate) fn resolve(name: &str, search: &ModuleSearch) -> Resolution {
    if search.rejects(name) {
        return Resolution::Unresolved;
    }
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    let is_builtin_spelling = short != name || !name.contains('.');
    if !is_builtin_spelling {
        if let Some(removed) = search.removed(name) {
            return Resolution::Removed(removed);
        }
        return match search.find(name).is_some() || search.action_plugin(name).is_some() {
            true => Resolution::Resolved(name.to_string()),
            false => Resolution::Unresolved,
        };
    }
    if search.find(name).is_some() || search.action_plugin(name).is_some() {
        return Resolution::Resolved(short.to_string());
    }
    if tables::BUILTIN_MODULES.contains(&short) || tables::BUILTIN_ACTIONS.contains(&short) {
        return Resolution::Resolved(short.to_string());
    }
    for plugin_type in ["modules", "action"] {
        match tables::routing(plugin_type, short) {
            Some(Routing::Redirect(target)) => return Resolution::Resolved(target.to_string()),
            Some(Routing::Tombstone { warning_text, removed, by_date }) => {
                let kind = if plugin_type == "action" { "action plugin" } else { "module" };
                let when = if by_date {
                    format!("in a release after {removed}")
                } else {
                    format!("in version {removed}")
                };
                return Resolution::Removed(format!(
                    "The 'ansible.builtin.{short}' {kind} has been removed. {warning_text} This feature was removed from ansible-core {when}."
                ));
            }
            // Found above when the collection is installed; else ansible cannot resolve it.
            // A deprecated builtin is in the builtin lists, found above.
            Some(Routing::Collection(_) | Routing::Deprecated { .. }) | None => {}
        }
    }
    Resolution::Unresolved
}

/// ansible-core's deprecation of its own module `name` (short, `ansible.builtin.` or
/// `ansible.legacy.` spelling), as its loader words it when it resolves the name: the
/// message and the version that removes the module.
pub(crate) fn builtin_module_deprecation(name: &str) -> Option<(String, &'static str)> {
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    if short.contains('.') || !tables::BUILTIN_MODULES.contains(&short) {
        return None;
    }
    match tables::routing("modules", short)? {
        Routing::Deprecated { warning_text, removal_version } => {
            Some((format!("{name} has been deprecated. {warning_text}"), removal_version))
        }
        _ => None,
    }
}

/// Whether ansible-core itself (no collections, no `library/` directories) resolves `name` to
/// a module or action plugin, removed ones included.
pub fn builtin_resolves(name: &str) -> bool {
    !matches!(resolve(name, &ModuleSearch::default()), Resolution::Unresolved)
}

fn task_keys() -> impl Iterator<Item = &'static str> {
    ObjectKind::Task
        .attributes()
        .iter()
        .chain(ObjectKind::Handler.attributes())
        .map(|a| a.name)
        .chain(["local_action", "static"])
}

fn is_task_key(k: &str) -> bool {
    task_keys().any(|t| t == k)
}

/// Splits `copy src=a dest=b` into the module name and the rest.
fn split_module_string(s: &str) -> Result<(String, String), Diagnostic> {
    let tokens = kv::split_args(s).map_err(|e| parser_error(e.to_string(), None))?;
    match tokens.split_first() {
        Some((first, rest)) => Ok((first.trim().to_string(), rest.join(" "))),
        None => Ok((String::new(), String::new())),
    }
}

fn kv_mapping(args: &str, check_raw: bool, origin: &Node) -> Result<Mapping, Diagnostic> {
    let pairs =
        kv::parse_kv(args, check_raw).map_err(|e| parser_error(e.to_string(), Some(origin)))?;
    Ok(pairs
        .into_iter()
        .map(|(k, v)| {
            (
                Node::new(Value::Str(k), origin.origin.clone()),
                Node::new(Value::Str(v), origin.origin.clone()),
            )
        })
        .collect())
}

/// Marks every string value of `args` untrusted (`!unsafe`).
fn untrust_values(args: &mut Mapping) {
    let mut out = Mapping::new();
    for (key, value) in args.iter() {
        let value = match &value.value {
            Value::Str(text) => Node::new(Value::Unsafe(text.clone()), value.origin.clone()),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    *args = out;
}

/// ansible's `is_possibly_all_template`: the whole text is one template (or starts with a
/// Jinja overrides header).
pub fn is_all_template(s: &str) -> bool {
    let t = s;
    (t.starts_with("{{") && t.ends_with("}}"))
        || (t.starts_with("{%") && t.ends_with("%}"))
        || t.starts_with("#jinja2:")
}

pub(crate) struct ModuleArgsParser<'a> {
    pub ds: &'a Mapping,
    pub ds_node: &'a Node,
    pub search: &'a ModuleSearch,
}

impl ModuleArgsParser<'_> {
    pub(super) fn parse(&self, skip_action_validation: bool) -> Result<ParsedAction, Diagnostic> {
        let mut action: Option<String> = None;
        let mut args = Mapping::new();
        let mut delegate_to = self.ds.get("delegate_to").cloned();
        let additional = self.ds.get("args");

        if let Some(thing) = self.ds.get("action") {
            let (a, ar) = self.normalize(thing, None, additional)?;
            action = Some(a);
            args = ar;
        }
        if let Some(thing) = self.ds.get("local_action") {
            if action.is_some() {
                return Err(parser_error(
                    "action and local_action are mutually exclusive",
                    Some(self.ds_node),
                ));
            }
            delegate_to = Some(Node::new(Value::Str("localhost".into()), thing.origin.clone()));
            let (a, ar) = self.normalize(thing, None, additional)?;
            action = Some(a);
            args = ar;
        }

        for (key, value) in self.ds.iter() {
            let Some(item) = key.as_str() else {
                // Non-string keys are never task keywords; ansible tries them as actions.
                if skip_action_validation {
                    if let Some(prev) = &action {
                        return Err(parser_error(
                            format!(
                                "conflicting action statements: {prev}, {}",
                                super::attrs::key_text(key)
                            ),
                            Some(self.ds_node),
                        ));
                    }
                    return Err(parser_error(
                        format!(
                            "couldn't resolve module/action '{}'. This often indicates a misspelling, missing collection, or incorrect module path.",
                            super::attrs::key_text(key)
                        ),
                        Some(self.ds_node),
                    ));
                }
                continue;
            };
            if is_task_key(item) || item.starts_with("with_") {
                continue;
            }
            let candidate = if actions::is(item, actions::BUILTIN_TASKS) || skip_action_validation {
                true
            } else {
                match resolve(item, self.search) {
                    Resolution::Resolved(_) => true,
                    Resolution::Unresolved => false,
                    Resolution::Removed(msg) => return Err(general_error(msg, Some(self.ds_node))),
                }
            };
            if candidate {
                if let Some(prev) = &action {
                    return Err(parser_error(
                        format!("conflicting action statements: {prev}, {item}"),
                        Some(self.ds_node),
                    ));
                }
                let (a, ar) = self.normalize(value, Some(item), additional)?;
                action = Some(a);
                args = ar;
            }
        }

        let Some(action) = action else {
            let unknown = self
                .ds
                .keys()
                .find(|k| k.as_str().is_none_or(|s| !is_task_key(s) && !s.starts_with("with_")));
            return Err(match unknown {
                Some(bad) => parser_error(
                    format!(
                        "couldn't resolve module/action '{}'. This often indicates a misspelling, missing collection, or incorrect module path.",
                        super::attrs::key_text(bad)
                    ),
                    Some(self.ds_node),
                ),
                None => parser_error("no module/action detected in task.", Some(self.ds_node)),
            });
        };
        Ok(ParsedAction { action, args, delegate_to })
    }

    /// `_normalize_parameters`: the action and its arguments from one of the forms.
    fn normalize(
        &self,
        thing: &Node,
        action: Option<&str>,
        additional: Option<&Node>,
    ) -> Result<(String, Mapping), Diagnostic> {
        let mut final_args = Mapping::new();
        if let Some(extra) = additional {
            match &extra.value {
                Value::Str(s) if is_all_template(s) => {
                    final_args.insert(
                        Node::new(Value::Str("_variable_params".into()), extra.origin.clone()),
                        extra.clone(),
                    );
                }
                Value::Map(m) => {
                    for (k, v) in m.iter() {
                        final_args.insert(k.clone(), v.clone());
                    }
                }
                Value::Null => {
                    tack_diag::deprecate(
                        &Diagnostic::at(
                            "Ignoring empty task `args` keyword.",
                            self.ds_node.origin.clone(),
                        )
                        .with_help(
                            "A mapping or template which resolves to a mapping is required.",
                        ),
                        "2.23",
                    );
                }
                _ => {
                    return Err(parser_error(
                        "The value of the task `args` keyword is invalid.",
                        Some(extra),
                    )
                    .with_help("A mapping or template which resolves to a mapping is required."));
                }
            }
        }

        let (action, args) = match action {
            Some(action) => {
                (action.to_string(), self.new_style_args(thing, action, additional.is_some())?)
            }
            None => {
                let (action, mut args) = self.old_style_args(thing)?;
                if let Some((_, inner)) = args.remove("args") {
                    let inner = match &inner.value {
                        Value::Str(s) => kv_mapping(s, false, &inner)?,
                        Value::Map(m) => m.clone(),
                        _ => Mapping::new(),
                    };
                    for (k, v) in inner {
                        args.insert(k, v);
                    }
                }
                (action, Some(args))
            }
        };

        if let Some(args) = &args {
            if !actions::is(&action, actions::FREEFORM) {
                for key in args.keys() {
                    let k = super::attrs::key_text(key);
                    if k.starts_with("_ansible_") {
                        return Err(general_error(
                            format!(
                                "Invalid parameter specified beginning with keyword '_ansible_' for action '{action}': '{k}'. The prefix '_ansible_' is reserved for internal use only."
                            ),
                            None,
                        ));
                    }
                }
            }
            for (k, v) in args.iter() {
                final_args.insert(k.clone(), v.clone());
            }
        }
        Ok((action, final_args))
    }

    fn new_style_args(
        &self,
        thing: &Node,
        action: &str,
        has_additional: bool,
    ) -> Result<Option<Mapping>, Diagnostic> {
        match &thing.value {
            Value::Map(m) => Ok(Some(m.clone())),
            Value::Str(s) | Value::Unsafe(s) => {
                let check_raw = actions::is(action, actions::FREEFORM);
                let mut args = kv_mapping(s, check_raw, thing)?;
                // `!unsafe` text stays untrusted in every argument made of it, as ansible's
                // `parse_kv` copies the tag onto each part.
                if matches!(thing.value, Value::Unsafe(_)) {
                    untrust_values(&mut args);
                }
                let mut kv_keys: Vec<String> = args
                    .keys()
                    .filter_map(|k| k.as_str())
                    .filter(|k| *k != "_raw_params")
                    .map(str::to_string)
                    .collect();
                if !kv_keys.is_empty() && has_additional {
                    kv_keys.sort();
                    let list = kv_keys
                        .iter()
                        .map(|k| tack_yaml::pyrepr::str_repr(k))
                        .collect::<Vec<_>>()
                        .join(", ");
                    tack_diag::deprecate(
                        &Diagnostic::at(
                            format!("Merging legacy k=v args ({list}) into task args."),
                            thing.origin.clone(),
                        )
                        .with_help("Include all task args in the task `args` mapping."),
                        "2.23",
                    );
                }
                Ok(Some(args))
            }
            Value::Vault(_) => {
                let mut m = Mapping::new();
                m.insert(
                    Node::new(Value::Str("_raw_params".into()), thing.origin.clone()),
                    thing.clone(),
                );
                Ok(Some(m))
            }
            Value::Null => Ok(None),
            _ => Err(parser_error(
                format!("unexpected parameter type in action: {}", thing.value.loaded_type_repr()),
                Some(self.ds_node),
            )),
        }
    }

    fn old_style_args(&self, thing: &Node) -> Result<(String, Mapping), Diagnostic> {
        match &thing.value {
            Value::Map(m) => {
                tack_diag::deprecate(
                    &Diagnostic::at(
                        "Using a mapping for `action` is deprecated.",
                        thing.origin.clone(),
                    )
                    .with_help("Use a string value for `action`."),
                    "2.23",
                );
                let mut args = m.clone();
                let mut action = String::new();
                if let Some((_, module)) = args.remove("module") {
                    let text = module.as_str().unwrap_or_default().to_string();
                    let (a, rest) = split_module_string(&text)?;
                    let check_raw = actions::is(&a, actions::FREEFORM);
                    for (k, v) in kv_mapping(&rest, check_raw, &module)? {
                        args.insert(k, v);
                    }
                    action = a;
                }
                Ok((action, args))
            }
            Value::Str(s) | Value::Unsafe(s) => {
                let (action, rest) = split_module_string(s)?;
                let check_raw = actions::is(&action, actions::FREEFORM);
                let mut args = kv_mapping(&rest, check_raw, thing)?;
                if matches!(thing.value, Value::Unsafe(_)) {
                    untrust_values(&mut args);
                }
                Ok((action, args))
            }
            _ => Err(parser_error(
                format!("unexpected parameter type in action: {}", thing.value.loaded_type_repr()),
                Some(self.ds_node),
            )),
        }
    }
}
