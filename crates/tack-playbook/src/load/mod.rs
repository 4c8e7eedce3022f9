//! Loading playbook files into the [`crate::ast`], following ansible-core's load pipeline:
//! `Playbook._load_playbook_data` → `Play.load` → `load_list_of_blocks` → `Task.load`, with
//! `import_playbook`, `import_tasks` and `import_role` expanded as they are met and roles loaded
//! from their directories. Errors carry ansible's wording and the origin of the node at fault.

mod attrs;
mod block;
pub(crate) mod collections;
pub mod dynamic;
pub(crate) mod modargs;
pub(crate) mod module_defaults;
pub use attrs::validate_variable_name;
pub use modargs::is_all_template;

pub use modargs::builtin_resolves;
mod play;
mod playbook;
mod role;
mod task;

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value};

/// Reads data files for the loader: YAML or JSON, decrypted when vaulted. Implemented over
/// ansible's DataLoader rules by the caller; the loader never opens files itself.
pub trait FileLoader {
    /// The file's single document; an empty file loads as a null node.
    fn load(&self, path: &Path) -> Result<Node, Diagnostic>;
}

impl FileLoader for tack_loader::DataLoader {
    fn load(&self, path: &Path) -> Result<Node, Diagnostic> {
        self.load_file(path).map_err(|e| e.to_diagnostic())
    }
}

/// What loading depends on besides the files themselves.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `-e` variables: the highest precedence, used when templating names while loading.
    pub extra_vars: Mapping,
    /// The configured `roles_path` (`DEFAULT_ROLES_PATH`).
    pub roles_path: Vec<PathBuf>,
    /// `-M`: directories searched for modules after the `library/` beside each playbook and
    /// before those of roles.
    pub module_paths: Vec<PathBuf>,
    /// The configured module path (`DEFAULT_MODULE_PATH`), searched last.
    pub configured_module_paths: Vec<PathBuf>,
    /// The configured module_utils path (`DEFAULT_MODULE_UTILS_PATH`), searched after the
    /// `module_utils/` beside playbooks and roles.
    pub module_utils_paths: Vec<PathBuf>,
    /// The configured action plugin path (`DEFAULT_ACTION_PLUGIN_PATH`), searched after the
    /// `action_plugins/` beside playbooks and roles.
    pub action_plugin_paths: Vec<PathBuf>,
    /// The configured lookup plugin path (`DEFAULT_LOOKUP_PLUGIN_PATH`), searched after the
    /// `lookup_plugins/` beside playbooks and roles.
    pub lookup_plugin_paths: Vec<PathBuf>,
    /// The configured `collections_path` (`COLLECTIONS_PATHS`).
    pub collections_paths: Vec<PathBuf>,
    /// `COLLECTIONS_ON_ANSIBLE_VERSION_MISMATCH`.
    pub version_mismatch: collections::VersionMismatch,
    /// ansible-core's internal collections and the `ansible_collections` packages on the
    /// controller interpreter's `sys.path` (`COLLECTIONS_SCAN_SYS_PATH`), searched last.
    pub sys_path_collections: collections::LazyRoots,
    /// The controller's ansible-core package directory (`ansible/`), asked for only when a
    /// module name is found nowhere else: a module file put into its `modules/` is
    /// ansible-core's own to ansible's loader.
    pub ansible_core_package: collections::LazyRoots,
    /// `INVALID_TASK_ATTRIBUTE_FAILED` (default true): an unknown task keyword is an error
    /// rather than a warning.
    pub invalid_task_attribute_failed: bool,
    /// `VALIDATE_ACTION_GROUP_METADATA` (default true): a malformed `metadata` entry of an
    /// action group `module_defaults` names gets ansible's warning.
    pub validate_action_group_metadata: bool,
    /// `DEFAULT_PRIVATE_ROLE_VARS` when configured (`None` at ansible's default): a role
    /// whose play or include does not say `public` is public unless it is set, for
    /// `roles:`, `import_role` and `include_role` alike. At the default, a role loaded with
    /// the play is public and an included one is not.
    pub private_role_vars: Option<bool>,
    /// The `-v` count: at `-vvvvv` a note ansible makes while loading that tack cannot place
    /// is refused where it would be made.
    pub verbosity: u8,
    /// The modules and actions `plugin_filters_cfg` rejects by name.
    pub rejected_modules: std::sync::Arc<std::collections::BTreeSet<String>>,
}

impl LoadOptions {
    /// Whether a role loaded with the play (`roles:`, `import_role`) that says nothing of
    /// `public` is public.
    pub fn static_role_public(&self) -> bool {
        self.private_role_vars.is_none_or(|private| !private)
    }

    /// Whether an `include_role` that says nothing of `public` makes its role public.
    pub fn dynamic_role_public(&self) -> bool {
        self.private_role_vars.is_some_and(|private| !private)
    }
}

/// Loads playbooks. One loader serves a whole run; it holds no per-playbook state.
pub struct Loader<'a> {
    pub(crate) files: &'a dyn FileLoader,
    pub(crate) options: &'a LoadOptions,
    pub(crate) templar: Templar,
    /// Task files imported (`import_tasks`) since last taken, in load order: ansible names
    /// each from `-vv` as it loads it.
    pub(crate) imported: std::cell::RefCell<Vec<PathBuf>>,
    /// How many of `imported` had been loaded when each play of the playbook being loaded
    /// was done (see [`Playbook::import_marks`](crate::ast::Playbook::import_marks)).
    pub(crate) play_marks: std::cell::RefCell<Vec<usize>>,
    /// The playbook and role directories whose `library/` and `module_utils/` joined the
    /// module search so far, in the order ansible adds them (it never drops one in a run).
    pub(crate) plugin_dirs: std::cell::RefCell<PluginDirs>,
    /// The collection of the last collection playbook loaded (ansible's
    /// `AnsibleCollectionConfig.default_collection`, which stays set once a collection's
    /// playbook was imported): short names search it first.
    pub(crate) default_collection: std::cell::RefCell<Option<String>>,
    /// The collections loaded so far (each checked against its `requires_ansible` once).
    pub(crate) loaded_collections: std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// The playbooks and task files being expanded now, outermost first: a static import of
    /// one of them again never ends (see [`Loader::expanding`]).
    expanding: std::cell::RefCell<Vec<PathBuf>>,
    /// How many roles are being loaded now, one inside another (dependencies, and roles
    /// imported by a role's tasks).
    pub(crate) role_nesting: std::cell::Cell<usize>,
}

/// See [`Loader::plugin_dirs`].
#[derive(Default)]
pub(crate) struct PluginDirs {
    playbooks: Vec<PathBuf>,
    roles: Vec<PathBuf>,
}

impl<'a> Loader<'a> {
    /// The options the loader was made with.
    pub fn options(&self) -> &LoadOptions {
        self.options
    }

    pub fn new(files: &'a dyn FileLoader, options: &'a LoadOptions) -> Loader<'a> {
        Loader {
            files,
            options,
            templar: Templar::new(),
            imported: Default::default(),
            play_marks: Default::default(),
            plugin_dirs: Default::default(),
            default_collection: Default::default(),
            loaded_collections: Default::default(),
            expanding: Default::default(),
            role_nesting: Default::default(),
        }
    }

    /// Runs `load` with `file` marked as being expanded. A static import is expanded
    /// whatever its `when`, so one that names a file already being expanded goes round for
    /// ever: ansible-core stops at Python's recursion limit, and so does this, with what
    /// went round, before loading anything twice.
    pub(crate) fn expanding<T>(
        &self,
        file: &Path,
        at: Option<tack_diag::Origin>,
        load: impl FnOnce() -> Result<T, Diagnostic>,
    ) -> Result<T, Diagnostic> {
        let key = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let round = {
            let stack = self.expanding.borrow();
            stack.iter().position(|p| *p == key).map(|from| {
                let mut names: Vec<String> =
                    stack[from..].iter().map(|p| p.display().to_string()).collect();
                names.push(key.display().to_string());
                names.join(" -> ")
            })
        };
        if let Some(round) = round {
            return Err(Diagnostic::recursion(
                at,
                format!(
                    "tack stopped at this import: it names a file that is being imported \
                     already ({round}), and static imports are expanded whatever their \
                     conditions, so they would never end."
                ),
            ));
        }
        self.expanding.borrow_mut().push(key);
        let out = load();
        self.expanding.borrow_mut().pop();
        out
    }

    /// A playbook's directory (or the ad-hoc command's `--playbook-dir`) joins the module
    /// search: `ansible-playbook` adds every playbook's before loading the first, and each
    /// playbook (an imported one too) adds its own as it loads.
    pub fn add_playbook_dir(&self, dir: &Path) {
        let mut dirs = self.plugin_dirs.borrow_mut();
        if !dirs.playbooks.iter().any(|d| d == dir) {
            dirs.playbooks.push(dir.to_path_buf());
        }
    }

    /// A loaded role's directory joins the module search.
    pub(crate) fn add_role_dir(&self, dir: &Path) {
        let mut dirs = self.plugin_dirs.borrow_mut();
        if !dirs.roles.iter().any(|d| d == dir) {
            dirs.roles.push(dir.to_path_buf());
        }
    }

    /// Where modules are looked for now: `library/` beside the playbooks, `-M`, `library/`
    /// of the roles loaded so far, the configured path; and their `module_utils/`; short
    /// names first in the `collections:` list `collection_list`.
    pub(crate) fn module_search(&self, collection_list: &[String]) -> modargs::ModuleSearch {
        let dirs = self.plugin_dirs.borrow();
        let beside = |sub: &str, list: &[PathBuf]| -> Vec<PathBuf> {
            list.iter().map(|d| d.join(sub)).collect()
        };
        let mut library = beside("library", &dirs.playbooks);
        library.extend(self.options.module_paths.iter().cloned());
        library.extend(beside("library", &dirs.roles));
        let mut utils = beside("module_utils", &dirs.playbooks);
        utils.extend(beside("module_utils", &dirs.roles));
        utils.extend(self.options.module_utils_paths.iter().cloned());
        let mut action_plugins = beside("action_plugins", &dirs.playbooks);
        action_plugins.extend(beside("action_plugins", &dirs.roles));
        action_plugins.extend(self.options.action_plugin_paths.iter().cloned());
        let mut lookup_plugins = beside("lookup_plugins", &dirs.playbooks);
        lookup_plugins.extend(beside("lookup_plugins", &dirs.roles));
        lookup_plugins.extend(self.options.lookup_plugin_paths.iter().cloned());
        modargs::ModuleSearch {
            library,
            action_plugins,
            lookup_plugins,
            configured: self.options.configured_module_paths.clone(),
            utils,
            collections: self.collection_roots(),
            collection_list: collection_list.to_vec(),
            rejected: self.options.rejected_modules.clone(),
            core_package: self.options.ansible_core_package.clone(),
        }
    }

    /// Where collections are looked for: `collections/` beside each playbook loaded so far,
    /// then the configured `collections_path`, as ansible's collection finder orders them.
    pub fn collection_roots(&self) -> collections::CollectionRoots {
        let dirs = self.plugin_dirs.borrow();
        let beside = dirs.playbooks.iter().map(|d| d.join("collections"));
        collections::CollectionRoots {
            named: beside.chain(self.options.collections_paths.iter().cloned()).collect(),
            lazy: self.options.sys_path_collections.clone(),
        }
    }

    /// A collection the run uses for the first time: ansible's `requires_ansible` check
    /// (a warning, or the error at `at` when the setting says so).
    pub(crate) fn collection_loaded(
        &self,
        name: &str,
        dir: &Path,
        at: Option<&Node>,
    ) -> Result<(), Diagnostic> {
        if !self.loaded_collections.borrow_mut().insert(name.to_string()) {
            return Ok(());
        }
        collections::check_version(name, dir, self.options.version_mismatch)
            .map_err(|message| Diagnostic::at(message, at.and_then(|n| n.origin.clone())))
    }

    /// The playbook and role directories loaded so far, in the order ansible adds their
    /// plugin subdirectories (`filter_plugins/`, `lookup_plugins/`, ...): playbooks first.
    pub fn plugin_dirs(&self) -> Vec<PathBuf> {
        let dirs = self.plugin_dirs.borrow();
        dirs.playbooks.iter().chain(dirs.roles.iter()).cloned().collect()
    }

    /// The task files imported since the last call, in the order they were loaded.
    pub fn take_imported(&self) -> Vec<PathBuf> {
        std::mem::take(&mut *self.imported.borrow_mut())
    }
}

/// A parser error (exit code 4) at a node.
pub(crate) fn parser_error(message: impl Into<String>, at: Option<&Node>) -> Diagnostic {
    Diagnostic::at(message, at.and_then(|n| n.origin.clone())).parser()
}

/// A general error (exit code 1) at a node.
pub(crate) fn general_error(message: impl Into<String>, at: Option<&Node>) -> Diagnostic {
    Diagnostic::at(message, at.and_then(|n| n.origin.clone()))
}

/// What loading one play accumulates: its role arena, the handlers `import_role` brings, and
/// the variables names are templated with while loading.
pub(crate) struct PlayBuild {
    /// The loader's base directory for the play (its playbook's directory).
    pub basedir: PathBuf,
    pub roles: Vec<crate::ast::Role>,
    /// Roles loaded by `import_role`, which join the play's roles for variables.
    pub imported_roles: Vec<crate::ast::RoleId>,
    pub extra_handlers: Vec<crate::ast::Block>,
    /// Play vars with the extra vars over them: what role names and import paths see.
    pub template_vars: Mapping,
    /// The extra vars alone: they win over every layer a role adds.
    pub extra_vars: Mapping,
    /// The action groups the play's `module_defaults` resolved so far (shared with the play
    /// it builds, and with what dynamic includes load into that play).
    pub action_groups: std::sync::Arc<crate::action_groups::ActionGroups>,
}

impl PlayBuild {
    pub(crate) fn new(basedir: PathBuf, loader: &Loader<'_>, play_vars: &Mapping) -> PlayBuild {
        let mut template_vars = play_vars.clone();
        for (k, v) in loader.options.extra_vars.iter() {
            template_vars.insert(k.clone(), v.clone());
        }
        PlayBuild {
            basedir,
            roles: Vec::new(),
            imported_roles: Vec::new(),
            extra_handlers: Vec::new(),
            template_vars,
            extra_vars: loader.options.extra_vars.clone(),
            action_groups: Default::default(),
        }
    }
}

/// Where tasks are being loaded: inside which role, whether as handlers, under which
/// `import_tasks` files, and with which extra variables for templating.
#[derive(Clone, Default)]
pub(crate) struct Scope {
    pub role: Option<crate::ast::RoleId>,
    pub role_path: Option<PathBuf>,
    pub use_handlers: bool,
    /// Rendered targets of the enclosing `import_tasks`, outermost first.
    pub include_targets: Vec<String>,
    pub vars: Mapping,
    /// The `collections:` search list short action names are looked for in (empty: none).
    pub collections: Vec<String>,
}

impl Scope {
    pub(crate) fn root() -> Scope {
        Scope::default()
    }

    pub(crate) fn for_role(
        id: crate::ast::RoleId,
        path: &std::path::Path,
        loader: &Loader<'_>,
        collections: Vec<String>,
    ) -> Scope {
        loader.add_role_dir(path);
        Scope {
            role: Some(id),
            role_path: Some(path.to_path_buf()),
            collections,
            ..Scope::default()
        }
    }

    /// The collection list a task written as `task` searches: its own `collections:`, else
    /// the one it is loaded under.
    pub(crate) fn task_collections(
        &self,
        task: &Mapping,
        loader: &Loader<'_>,
    ) -> Result<Vec<String>, Diagnostic> {
        let list = match task.get("collections") {
            Some(list) => collections::keyword_list(list)?,
            None => self.collections.clone(),
        };
        // A task outside roles searches the default collection first (a role has its own).
        Ok(match self.role {
            Some(_) => list,
            None => collections::with_default(list, loader.default_collection.borrow().as_deref()),
        })
    }

    pub(crate) fn handlers(&self) -> Scope {
        Scope { use_handlers: true, ..self.clone() }
    }

    pub(crate) fn with_vars(&self, vars: &Mapping) -> Scope {
        let mut scope = self.clone();
        for (k, v) in vars.iter() {
            scope.vars.insert(k.clone(), v.clone());
        }
        scope
    }

    /// The variables a static import's name is templated with: what ansible's variable
    /// manager gives a task at load time (no host): the role's defaults under the play's
    /// vars, the role's `vars/` and parameters over them, then the enclosing blocks' and
    /// imports' vars and the task's, the extra vars on top, and the role's magic names.
    pub(crate) fn template_vars(&self, build: &PlayBuild, task_vars: &Mapping) -> Mapping {
        let role = self.role.and_then(|id| build.roles.get(id.0));
        let mut vars = role.map(|r| r.default_vars.clone()).unwrap_or_default();
        let layers = [Some(&build.template_vars), role.map(|r| &r.role_vars)]
            .into_iter()
            .chain([role.map(|r| &r.vars), role.map(|r| &r.params)])
            .flatten()
            .chain([&self.vars, task_vars]);
        for layer in layers {
            for (k, v) in layer.iter() {
                vars.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in build.extra_vars.iter() {
            vars.insert(k.clone(), v.clone());
        }
        if let Some(path) = &self.role_path {
            let text = |s: &str| Node::bare(Value::Str(s.to_string()));
            vars.insert(text("role_path"), text(&path.to_string_lossy()));
            if let Some(role) = role {
                vars.insert(text("role_name"), text(role.short_name()));
            }
        }
        vars
    }

    /// The vars of enclosing blocks and imports with a task's over them: what an import
    /// hands the tasks it loads.
    pub(crate) fn nested_vars(&self, task_vars: &Mapping) -> Mapping {
        let mut vars = self.vars.clone();
        for (k, v) in task_vars.iter() {
            vars.insert(k.clone(), v.clone());
        }
        vars
    }
}

impl Loader<'_> {
    /// Renders a name-like value (role name, file name) to a string.
    pub(crate) fn render_string(&self, node: &Node, vars: &Mapping) -> Result<String, Diagnostic> {
        let rendered = self.templar.render_with_vars(node, vars).map_err(|e| e.to_diagnostic())?;
        Ok(tack_yaml::pyrepr::str(&rendered.value))
    }
}
