//! The loaded playbook: plays, blocks, tasks and roles, with every keyword kept as the node it
//! was written as (so templates are rendered later, per host, and errors still point at the
//! source). Nothing here is templated or type-converted beyond what ansible-core does while
//! loading; the executor reads keywords through [`Attrs`].
//!
//! Structure follows ansible-core's objects: a play holds lists of [`Block`]s; a block holds
//! [`TaskEntry`]s (tasks or nested blocks); statically imported task files and roles appear as
//! blocks whose [`BlockOrigin`] says where they came from, so inheritance (tags, `when`,
//! `become`, ...) walks the same parents ansible's does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tack_diag::Origin;
use tack_yaml::{Mapping, Node};

use crate::tables::Keyword;

/// The keywords an object was given, in the order written, each with the node of its key (for
/// errors) and its value (unrendered).
#[derive(Debug, Clone, Default)]
pub struct Attrs {
    entries: Vec<(Keyword, Node, Node)>,
}

impl Attrs {
    pub fn get(&self, keyword: Keyword) -> Option<&Node> {
        self.entries.iter().find(|(k, _, _)| *k == keyword).map(|(_, _, v)| v)
    }

    /// The key node of `keyword` (its origin is where the keyword was written).
    pub fn key(&self, keyword: Keyword) -> Option<&Node> {
        self.entries.iter().find(|(k, _, _)| *k == keyword).map(|(_, k, _)| k)
    }

    pub fn contains(&self, keyword: Keyword) -> bool {
        self.get(keyword).is_some()
    }

    pub fn set(&mut self, keyword: Keyword, key: Node, value: Node) {
        match self.entries.iter_mut().find(|(k, _, _)| *k == keyword) {
            Some(entry) => {
                entry.1 = key;
                entry.2 = value;
            }
            None => self.entries.push((keyword, key, value)),
        }
    }

    pub fn remove(&mut self, keyword: Keyword) -> Option<Node> {
        let idx = self.entries.iter().position(|(k, _, _)| *k == keyword)?;
        Some(self.entries.remove(idx).2)
    }

    pub fn iter(&self) -> impl Iterator<Item = (Keyword, &Node)> {
        self.entries.iter().map(|(k, _, v)| (*k, v))
    }
}

/// A loaded playbook file, with `import_playbook` entries already replaced by the plays they
/// import (as ansible-core does).
#[derive(Debug, Clone)]
pub struct Playbook {
    /// The path as given on the command line.
    pub path: PathBuf,
    /// The directory relative paths in the playbook resolve against.
    pub basedir: PathBuf,
    pub plays: Vec<Play>,
    /// The task files its plays import, in load order (`statically imported:` from `-vv`).
    pub imported: Vec<PathBuf>,
    /// For each play, how many of `imported` had been loaded once it was loaded: play `i`
    /// imported `imported[import_marks[i - 1]..import_marks[i]]` (ansible gathers the play's
    /// variables for each, which `-vvv` shows with `vars_files`).
    pub import_marks: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Play {
    pub origin: Option<Origin>,
    /// Every keyword except the structural ones below.
    pub attrs: Attrs,
    /// `vars:` merged into one mapping (ansible accepts a list of mappings too).
    pub vars: Mapping,
    pub vars_files: Vec<Node>,
    pub vars_prompt: Vec<Mapping>,
    /// The roles of `roles:` in order, as indexes into `role_arena`.
    pub roles: Vec<RoleId>,
    pub pre_tasks: Vec<Block>,
    pub tasks: Vec<Block>,
    pub post_tasks: Vec<Block>,
    pub handlers: Vec<Block>,
    /// Every role loaded for this play (from `roles:`, their dependencies and static imports).
    pub role_arena: Vec<Role>,
    /// The directory of the playbook file the play was written in.
    pub basedir: PathBuf,
    /// Set on plays brought in by `import_playbook`: the imported file's directory.
    pub included_path: Option<PathBuf>,
    /// The `when` of the `import_playbook` that brought the play in, if any.
    pub included_conditional: Option<Node>,
    /// Where modules were found once the play and its roles were loaded (the play's own
    /// implicit tasks find theirs there).
    pub module_search: std::sync::Arc<crate::ModuleSearch>,
    /// The action groups the play's `module_defaults` resolved, and the actions in each.
    pub action_groups: std::sync::Arc<crate::action_groups::ActionGroups>,
}

impl Play {
    pub fn role(&self, id: RoleId) -> &Role {
        &self.role_arena[id.0]
    }
}

/// Where a block's tasks came from; decides which parents its tasks inherit keywords from.
#[derive(Debug, Clone)]
pub enum BlockOrigin {
    /// Written in the play or in a task file (`block:` or a bare task given an implicit block).
    Written,
    /// The tasks of a file brought in by `import_tasks`; the import task itself is the parent.
    ImportTasks(Box<Task>),
    /// The tasks of a role brought in by `import_role`; the import task itself is the parent.
    ImportRole(Box<Task>),
    /// A compiled block (a role's, reached through these roles) that a compiled play put
    /// inside a block of its own (`force_handlers` wraps each section): its tasks keep the
    /// role chain they were compiled with.
    Compiled(Vec<RoleId>),
}

#[derive(Debug, Clone)]
pub struct Block {
    pub origin: Option<Origin>,
    /// A bare task (or task list) wrapped in a block by the loader.
    pub implicit: bool,
    pub attrs: Attrs,
    pub vars: Mapping,
    pub block: Vec<TaskEntry>,
    pub rescue: Vec<TaskEntry>,
    pub always: Vec<TaskEntry>,
    /// The role whose task file the block was loaded from.
    pub role: Option<RoleId>,
    pub from: BlockOrigin,
}

// Tasks are the common entry and are walked constantly; boxing them would add an allocation
// and an indirection per task to save space only on the rarer blocks.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum TaskEntry {
    Task(Task),
    Block(Block),
}

/// What kind of task a task entry is, beyond its action name.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskKind {
    /// An ordinary module or action.
    Action,
    /// `include_tasks`: loaded per host at run time.
    IncludeTasks,
    /// `include_role` (dynamic) or an `import_role` kept as a task entry for listing.
    IncludeRole(Box<RoleTarget>),
    /// A handler, with its `listen` topics.
    Handler { listen: Vec<Node> },
}

/// The options of `include_role` / `import_role` that pick what to load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoleTarget {
    pub name: Option<Node>,
    pub tasks_from: Option<Node>,
    pub vars_from: Option<Node>,
    pub defaults_from: Option<Node>,
    pub handlers_from: Option<Node>,
    pub public: Option<Node>,
    pub allow_duplicates: Option<Node>,
    pub apply: Option<Node>,
    pub rolespec_validate: Option<Node>,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub origin: Option<Origin>,
    pub kind: TaskKind,
    /// The action as written (`copy`, `ansible.builtin.copy`, a template such as `{{ m }}`).
    pub action: String,
    /// Where the action's name was written (`action: x`'s value), when known.
    pub action_origin: Option<Origin>,
    /// The module arguments: a mapping, possibly with `_raw_params` (free-form text) or
    /// `_variable_params` (an `args:` template).
    pub args: Mapping,
    pub delegate_to: Option<Node>,
    /// The `collections:` search list the task's short names were looked for in (its own,
    /// its block's, its role's or its play's); what a dynamic include it makes loads under.
    pub collections: Vec<String>,
    /// `loop` or the `with_<lookup>` value, and the lookup's name for `with_*`.
    pub loop_items: Option<Node>,
    pub loop_with: Option<String>,
    pub attrs: Attrs,
    pub vars: Mapping,
    pub role: Option<RoleId>,
    /// Added by the compiler (flush_handlers, role_complete), never written by a user.
    pub implicit: bool,
    /// The module file a `library/` directory (or a configured module path) gave the action
    /// when the task was loaded: it wins over a builtin of the same short name, as in ansible.
    pub library: Option<Arc<LibraryModule>>,
    /// The Python action plugin beside a playbook or role (or on the configured action plugin
    /// path) that ansible runs for this action, in place of its module or builtin action:
    /// tack refuses the task by name where it runs.
    pub action_plugin: Option<PathBuf>,
    /// Where a templated action's rendered name is looked for among modules outside
    /// ansible-core (set only when the action is a template).
    pub library_search: Option<Arc<crate::ModuleSearch>>,
    /// The action was named by `action:` or `local_action:`: ansible looks its module up only
    /// when the task runs, and shows what its routing deprecates there, not at load.
    pub action_looked_up_at_run: bool,
    /// ansible-core's deprecation of the module the action resolved to when loaded (its
    /// message and the version that removes it): kept in the result each time it runs.
    pub module_deprecation: Option<(String, &'static str)>,
    /// `plugin_filters_cfg` rejects the name `action:` or `local_action:` gave: the task fails
    /// where it runs, as ansible's does (the module's own key fails to load instead).
    pub action_rejected: bool,
}

/// A module shipped beside a playbook or in a role (`library/`), or found on a configured
/// module path, with the `module_utils` directories its imports are looked for in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryModule {
    /// The name the task calls it by (short, as ansible's legacy loader knows it).
    pub name: String,
    pub path: PathBuf,
    /// `module_utils/` beside playbooks and loaded roles, then the configured ones, in
    /// ansible's search order.
    pub utils: Vec<PathBuf>,
    /// For a collection's module: the roots the payload builder's collection loader
    /// searches (its `module_utils` imports resolve there), and what tack cannot run of it.
    pub collection: Option<CollectionModule>,
}

impl LibraryModule {
    /// The name ansible resolves the module to: a collection's module by its fully qualified
    /// name, a `library/` module by its short name (ansible's legacy loader gives it no
    /// collection).
    pub fn fqcn(&self) -> String {
        match &self.collection {
            Some(c) => c.fqcn.clone(),
            None => self.name.clone(),
        }
    }
}

/// A module a collection ships (see [`LibraryModule::collection`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CollectionModule {
    /// The fully qualified name the module was found by, its routing followed: the task's
    /// resolved action, which `module_defaults` entries and action groups name.
    pub fqcn: String,
    pub roots: Vec<PathBuf>,
    /// Why tack refuses to run it (an action plugin of its name, routing it does not follow).
    pub refusal: Option<String>,
    /// ansible's deprecations its collections' routing gave on the way to it, shown where
    /// each task naming it is loaded.
    pub deprecations: Vec<String>,
    /// The collections met on the way to it (`ns.col` and directory), in order: each is
    /// checked against its `requires_ansible` the first time the run loads it.
    pub loaded: Vec<(String, PathBuf)>,
    /// The action plugin its routing names (`action_plugin`), which ansible runs it with:
    /// its `module_defaults` are then the module's, not the plugin's.
    pub action_plugin: Option<String>,
}

impl Task {
    /// The task's own `name:` as written, if any (`name:` with no value is none: ansible's
    /// banner then shows the action).
    pub fn name(&self) -> Option<&Node> {
        self.attrs.get(Keyword::Name).filter(|n| !n.is_null())
    }

    /// A task ansible builds in memory (a role's `role_complete`, a play's setup tasks): it
    /// has no place in any file, runs `action` with `args`, and has only the keywords
    /// `attrs` gives.
    pub fn in_memory(action: &str, args: Mapping, attrs: Attrs, role: Option<RoleId>) -> Task {
        Task {
            origin: None,
            kind: TaskKind::Action,
            action: action.into(),
            action_origin: None,
            args,
            delegate_to: None,
            collections: Vec::new(),
            loop_items: None,
            loop_with: None,
            attrs,
            vars: Mapping::new(),
            role,
            implicit: false,
            library: None,
            library_search: None,
            action_plugin: None,
            action_looked_up_at_run: false,
            module_deprecation: None,
            action_rejected: false,
        }
    }
}

/// An index into a play's `role_arena`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoleId(pub usize);

/// A role as loaded for a play: its files, its parameters and its place among dependencies.
#[derive(Debug, Clone)]
pub struct Role {
    pub origin: Option<Origin>,
    /// The role's name (the last path component when given as a path; a collection's role
    /// fully qualified, as ansible's `get_name()` gives it).
    pub name: String,
    /// The collection the role came from (`ns.col`).
    pub collection: Option<String>,
    pub path: PathBuf,
    /// Keywords given where the role was used (`roles: - {role: x, tags: ...}`).
    pub attrs: Attrs,
    /// Role parameters: the non-keyword keys of the role entry.
    pub params: Mapping,
    /// `vars:` given where the role was used.
    pub vars: Mapping,
    /// `vars/main` of the role.
    pub role_vars: Mapping,
    /// `defaults/main` of the role.
    pub default_vars: Mapping,
    pub allow_duplicates: bool,
    /// ansible's `Role.public`: a role of `roles:` or an `import_role` whose defaults and
    /// vars every task of the play sees (its own tasks see them either way).
    pub public: bool,
    pub dependencies: Vec<RoleId>,
    /// Roles that list this one as a dependency, in the order found.
    pub parents: Vec<RoleId>,
    pub task_blocks: Vec<Block>,
    pub handler_blocks: Vec<Block>,
    /// Loaded by `import_role` / `include_role` rather than `roles:`.
    pub from_include: bool,
}

impl Role {
    /// The role's own name without its collection (ansible's `role_name`).
    pub fn short_name(&self) -> &str {
        match &self.collection {
            Some(c) => self
                .name
                .strip_prefix(c.as_str())
                .and_then(|r| r.strip_prefix('.'))
                .unwrap_or(&self.name),
            None => &self.name,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Shared path handle used for origins.
pub type SharedPath = Arc<Path>;
