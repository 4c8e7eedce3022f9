//! Lists of blocks and tasks (`load_list_of_blocks` / `load_list_of_tasks`): bare tasks are
//! gathered into implicit blocks, `block:` entries become blocks, and `import_tasks` /
//! `import_role` are expanded in place.

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::modargs::ModuleArgsParser;
use super::{Loader, PlayBuild, Scope, attrs, parser_error};
use crate::ast::{Block, BlockOrigin, TaskEntry};
use crate::tables::{Keyword, ObjectKind, actions};

fn is_block(node: &Node) -> bool {
    node.as_map().is_some_and(|m| ["block", "rescue", "always"].iter().any(|k| m.get(k).is_some()))
}

/// Why a list could not be loaded: a full error, or one of ansible's internal assertions about
/// the shape of the data, which the caller turns into its own "malformed" message.
pub(crate) enum LoadFail {
    Error(Diagnostic),
    Shape(String),
}

impl From<Diagnostic> for LoadFail {
    fn from(d: Diagnostic) -> LoadFail {
        LoadFail::Error(d)
    }
}

impl LoadFail {
    /// Turns a shape assertion into `message` (pointing at `owner`), caused by the assertion.
    pub(crate) fn into_error(self, message: &str, owner: Owner<'_>) -> Diagnostic {
        match self {
            LoadFail::Error(d) => d,
            LoadFail::Shape(cause) => {
                let outer = match owner {
                    Owner::Node(node) => Diagnostic::at(message, node.origin.clone()),
                    Owner::Value(repr) => Diagnostic::about_value(message, repr),
                };
                let mut d =
                    Diagnostic::caused_by(outer.message, outer.origin, Diagnostic::new(cause));
                d.value_repr = outer.value_repr;
                d.parser()
            }
        }
    }
}

/// What a "malformed" error points at: a loaded node, or a value ansible built itself (shown
/// by its repr under `Origin: <unknown>`).
pub(crate) enum Owner<'a> {
    Node(&'a Node),
    Value(String),
}

/// `%s` of a loaded value and `type()` of it, as ansible's assertion messages show them.
fn shape(node: &Node, python_list: bool) -> (String, String) {
    let type_name =
        if python_list { "<class 'list'>".to_string() } else { node.value.loaded_type_repr() };
    (tack_yaml::pyrepr::str(&node.value), type_name)
}

impl Loader<'_> {
    /// `load_list_of_blocks`: `ds` must be a list (or null). Bare tasks in a row share one
    /// implicit block.
    pub(crate) fn load_blocks(
        &self,
        ds: &Node,
        build: &mut PlayBuild,
        scope: &Scope,
    ) -> Result<Vec<Block>, LoadFail> {
        let items = match &ds.value {
            Value::Null => return Ok(Vec::new()),
            Value::Seq(items) => items,
            _ => {
                let (text, ty) = shape(ds, false);
                return Err(LoadFail::Shape(format!(
                    "{text} should be a list or None but is {ty}"
                )));
            }
        };
        let mut blocks = Vec::new();
        let mut i = 0;
        while i < items.len() {
            let mut implicit = Vec::new();
            while i < items.len() && !items[i].is_null() && !is_block(&items[i]) {
                implicit.push(items[i].clone());
                i += 1;
            }
            if !implicit.is_empty() {
                let origin = implicit[0].origin.clone();
                let list = Node::new(Value::Seq(implicit), origin);
                blocks.push(self.load_block(&list, true, build, scope)?);
            }
            if i < items.len() {
                if !items[i].is_null() {
                    blocks.push(self.load_block(&items[i], false, build, scope)?);
                }
                i += 1;
            }
        }
        Ok(blocks)
    }

    /// `load_list_of_blocks` for a keyword of a play (`tasks`, `handlers`, ...): a shape
    /// problem is "A malformed block was encountered while loading <attr>." at the play.
    pub(crate) fn load_play_blocks(
        &self,
        ds: &Node,
        build: &mut PlayBuild,
        scope: &Scope,
        attr: &str,
        play: &Node,
    ) -> Result<Vec<Block>, Diagnostic> {
        self.load_blocks(ds, build, scope).map_err(|e| {
            e.into_error(
                &format!("A malformed block was encountered while loading {attr}."),
                Owner::Node(play),
            )
        })
    }

    /// `Block.load`: an explicit `block:` mapping, or (when `implicit`) a list of bare tasks.
    pub(crate) fn load_block(
        &self,
        ds: &Node,
        implicit: bool,
        build: &mut PlayBuild,
        scope: &Scope,
    ) -> Result<Block, Diagnostic> {
        if implicit {
            let tasks = self.load_tasks(ds, true, build, scope).map_err(|e| {
                e.into_error(
                    "A malformed block was encountered while loading block.",
                    Owner::Value(tack_yaml::pyrepr::repr(&ds.value)),
                )
            })?;
            return Ok(Block {
                origin: ds.origin.clone(),
                implicit: true,
                attrs: Default::default(),
                vars: Mapping::new(),
                block: tasks,
                rescue: Vec::new(),
                always: Vec::new(),
                role: scope.role,
                from: BlockOrigin::Written,
            });
        }
        let Some(map) = ds.as_map() else {
            return Err(parser_error(
                "A malformed block was encountered while loading block.",
                Some(ds),
            ));
        };
        attrs::validate_keys(map, ObjectKind::Block)?;
        let mut block = Block {
            origin: ds.origin.clone(),
            implicit: false,
            attrs: attrs::collect(
                map,
                &[Keyword::Block, Keyword::Rescue, Keyword::Always, Keyword::Vars],
            ),
            vars: Mapping::new(),
            block: Vec::new(),
            rescue: Vec::new(),
            always: Vec::new(),
            role: scope.role,
            from: BlockOrigin::Written,
        };
        if let Some(v) = map.get("vars") {
            block.vars = attrs::load_vars(v, "Block")?;
        }
        if let Some((key, tags)) = map.entry("tags") {
            block.attrs.set(Keyword::Tags, key.clone(), attrs::load_tags(tags)?);
        }
        if let Some((key, defaults)) = map.entry("module_defaults") {
            let resolved = self.load_module_defaults(defaults, &build.action_groups)?;
            block.attrs.set(Keyword::ModuleDefaults, key.clone(), resolved);
        }
        let mut inner_scope = scope.with_vars(&block.vars);
        if let Some(list) = map.get("collections") {
            inner_scope.collections = super::collections::keyword_list(list)?;
        }
        for (name, list) in [
            ("block", &mut block.block),
            ("rescue", &mut block.rescue),
            ("always", &mut block.always),
        ] {
            if let Some(v) = map.get(name) {
                *list = self.load_tasks(v, false, build, &inner_scope).map_err(|e| {
                    e.into_error(
                        &format!("A malformed block was encountered while loading {name}."),
                        Owner::Node(ds),
                    )
                })?;
            }
        }
        for name in ["rescue", "always"] {
            if map.get(name).is_some_and(|n| n.value.is_truthy()) && block.block.is_empty() {
                return Err(parser_error(
                    format!("'{name}' keyword cannot be used without 'block'"),
                    Some(ds),
                ));
            }
        }
        attrs::validate_string_fields(&block.attrs, ObjectKind::Block)?;
        Ok(block)
    }

    /// `load_list_of_tasks`. `python_list` says `ds` is a list ansible built itself (an
    /// implicit block's tasks), which its messages show as `<class 'list'>`.
    pub(crate) fn load_tasks(
        &self,
        ds: &Node,
        python_list: bool,
        build: &mut PlayBuild,
        scope: &Scope,
    ) -> Result<Vec<TaskEntry>, LoadFail> {
        let items: &[Node] = match &ds.value {
            Value::Seq(items) => items,
            _ => {
                let (text, ty) = shape(ds, python_list);
                return Err(LoadFail::Shape(format!(
                    "The ds ({text}) should be a list but was a {ty}"
                )));
            }
        };
        let mut out = Vec::new();
        for item in items {
            let Some(map) = item.as_map() else {
                let (text, ty) = shape(ds, python_list);
                return Err(LoadFail::Shape(format!(
                    "The ds ({text}) should be a dict but was a {ty}"
                )));
            };
            if map.get("block").is_some() {
                if scope.use_handlers {
                    return Err(parser_error(
                        "Using a block as a handler is not supported.",
                        Some(item),
                    )
                    .into());
                }
                out.push(TaskEntry::Block(self.load_block(item, false, build, scope)?));
                continue;
            }
            let search = self.module_search(&scope.task_collections(map, self)?);
            let parsed =
                ModuleArgsParser { ds: map, ds_node: item, search: &search }.parse(true)?;
            let action = parsed.action.as_str();
            if actions::is(action, actions::INCLUDE_TASKS)
                || actions::is(action, actions::IMPORT_TASKS)
            {
                let task =
                    self.load_task(item, build, scope, super::task::TaskFlavor::TaskInclude)?;
                if actions::is(action, actions::IMPORT_TASKS) {
                    out.extend(self.import_tasks(item, task, build, scope)?);
                } else {
                    out.push(TaskEntry::Task(task));
                }
            } else if actions::is(action, actions::INCLUDE_ROLE)
                || actions::is(action, actions::IMPORT_ROLE)
            {
                if scope.use_handlers {
                    return Err(parser_error(
                        format!("Using '{action}' as a handler is not supported."),
                        Some(item),
                    )
                    .into());
                }
                let task =
                    self.load_task(item, build, scope, super::task::TaskFlavor::IncludeRole)?;
                if actions::is(action, actions::IMPORT_ROLE) {
                    out.extend(self.import_role(item, task, build, scope)?);
                } else {
                    out.push(TaskEntry::Task(task));
                }
            } else {
                let flavor = if scope.use_handlers {
                    super::task::TaskFlavor::Handler
                } else {
                    super::task::TaskFlavor::Task
                };
                let task = self.load_task(item, build, scope, flavor)?;
                if task.meta() == Some("end_role") {
                    if scope.use_handlers {
                        return Err(parser_error(
                            "Cannot execute 'end_role' from a handler",
                            Some(item),
                        )
                        .into());
                    }
                    if scope.role.is_none() {
                        return Err(parser_error(
                            "Cannot execute 'end_role' from outside of a role",
                            Some(item),
                        )
                        .into());
                    }
                }
                out.push(TaskEntry::Task(task));
            }
        }
        Ok(out)
    }

    /// Expands `import_tasks`: finds the file as ansible does (relative to enclosing imports,
    /// the role's `tasks/`, then the playbook directory) and loads its tasks under a block
    /// whose parent is the import task.
    fn import_tasks(
        &self,
        item: &Node,
        task: crate::ast::Task,
        build: &mut PlayBuild,
        scope: &Scope,
    ) -> Result<Vec<TaskEntry>, Diagnostic> {
        if task.loop_items.is_some() {
            return Err(parser_error(
                "You cannot use loops on 'import_tasks' statements. You should use 'include_tasks' instead.",
                Some(item),
            ));
        }
        let raw = task.args.get("_raw_params").cloned().unwrap_or_else(|| Node::bare(Value::Null));
        let vars = scope.template_vars(build, &task.vars);
        let target = match self.templar.render_with_vars(&raw, &vars) {
            Ok(node) => tack_yaml::pyrepr::str(&node.value),
            Err(err) => {
                let cause = err.to_diagnostic();
                return Err(Diagnostic::caused_by(
                    format!(
                        "Error when evaluating variable in import path {}.",
                        tack_yaml::pyrepr::repr(&raw.value)
                    ),
                    item.origin.clone(),
                    cause,
                )
                .parser()
                .with_help(
                    "When using static imports, ensure that any variables used in their names are defined in vars/vars_files\nor extra-vars passed in from the command line. Static imports cannot use variables from facts or inventory\nsources like group or host vars.",
                ));
            }
        };
        let subdir = if scope.use_handlers { "handlers" } else { "tasks" };
        let file = self.find_import(build, scope, subdir, &target);
        let data = self.files.load(&file)?;
        let empty = match &data.value {
            Value::Null => true,
            Value::Seq(s) => s.is_empty(),
            Value::Map(m) => m.is_empty(),
            Value::Str(s) => s.is_empty(),
            _ => false,
        };
        if empty {
            tack_diag::warn(&Diagnostic::new(format!(
                "file {} is empty and had no tasks to include",
                file.display()
            )));
            return Ok(Vec::new());
        }
        if data.as_seq().is_none() {
            return Err(parser_error(
                "included task files must contain a list of tasks",
                Some(&data),
            ));
        }
        self.imported.borrow_mut().push(file.clone());
        let mut inner = scope.clone();
        inner.include_targets.push(target);
        inner.vars = scope.nested_vars(&task.vars);
        // ansible loads an imported file's tasks without a "malformed" wrapper of its own.
        let blocks = self.expanding(&file, item.origin.clone(), || {
            self.load_blocks(&data, build, &inner).map_err(|e| match e {
                LoadFail::Error(d) => d,
                LoadFail::Shape(cause) => Diagnostic::new(cause),
            })
        })?;
        let parent = Box::new(task);
        Ok(vec![TaskEntry::Block(Block {
            origin: item.origin.clone(),
            implicit: true,
            attrs: Default::default(),
            vars: Mapping::new(),
            block: blocks.into_iter().map(TaskEntry::Block).collect(),
            rescue: Vec::new(),
            always: Vec::new(),
            role: scope.role,
            from: BlockOrigin::ImportTasks(parent),
        })])
    }

    fn find_import(&self, build: &PlayBuild, scope: &Scope, subdir: &str, target: &str) -> PathBuf {
        use tack_loader::{paths::path_dwim, search::path_dwim_relative};
        let mut cumulative: Option<PathBuf> = None;
        for parent in scope.include_targets.iter().rev() {
            let parent_dir = tack_py::path::dirname(Path::new(parent)).to_path_buf();
            cumulative = Some(match cumulative {
                None => parent_dir,
                Some(c) if !c.is_absolute() => parent_dir.join(c),
                Some(c) => c,
            });
            let cum = cumulative.clone().unwrap_or_default();
            let candidate = match &scope.role_path {
                Some(role_path) => {
                    let base = role_path.join(subdir).join(&cum);
                    path_dwim_relative(&build.basedir, &base, subdir, target, false)
                }
                None => path_dwim_relative(
                    &build.basedir,
                    &build.basedir,
                    &cum.to_string_lossy(),
                    target,
                    false,
                ),
            };
            if candidate.exists() {
                return candidate;
            }
        }
        match &scope.role_path {
            Some(role_path) => path_dwim_relative(&build.basedir, role_path, subdir, target, false),
            None => path_dwim(&build.basedir, target),
        }
    }
}

impl Loader<'_> {
    /// Loads the task file a dynamic `include_tasks` names, at run time: `target` (already
    /// rendered) is found as a static import of that name from the include's role would be,
    /// and its blocks come back under one block whose parent is `include` (so its tasks
    /// inherit the include's keywords). Returns the file's path with the block.
    ///
    /// Roles imported inside the included file join the play's role arena: the returned
    /// [`super::dynamic::Included`] then carries the grown arena and the handlers they bring.
    ///
    /// `host_named` is the include's argument (`file`, `_raw_params`) when its render read
    /// what a managed host said: the file is then found only inside the role's directory, the
    /// including file's and the playbook's (seed 002), checked by its name before any lookup
    /// and by where the file found leads before it is read.
    pub fn load_included_tasks(
        &self,
        play: &crate::ast::Play,
        include: &crate::ast::Task,
        target: &str,
        vars: &Mapping,
        host_named: Option<&str>,
    ) -> Result<super::dynamic::Included, Diagnostic> {
        let mut build = PlayBuild::new(crate::play_vars::play_basedir(play), self, vars);
        build.roles = play.role_arena.clone();
        build.action_groups = play.action_groups.clone();
        // What the include loads searches the include's collection list.
        let scope = match include.role {
            Some(id) => Scope {
                role: Some(id),
                role_path: Some(play.role(id).path.clone()),
                collections: include.collections.clone(),
                ..Scope::root()
            },
            None => Scope { collections: include.collections.clone(), ..Scope::root() },
        };
        // A relative name is first looked for beside the file the include was written in
        // (a task file including its neighbour), as ansible resolves it against the
        // including file's directory.
        let including_dir =
            include.origin.as_ref().and_then(|o| o.path.as_ref()).and_then(|p| p.parent());
        let roots = host_named.map(|arg| {
            let mut roots: Vec<PathBuf> = scope.role_path.iter().cloned().collect();
            roots.extend(including_dir.map(Path::to_path_buf));
            roots.push(build.basedir.clone());
            (arg, roots)
        });
        let refused = |arg: &str, escape: tack_loader::confine::Escape| {
            let message = escape.message(&format!("the '{arg}' of this include was"), target);
            Diagnostic::at(message, include.origin.clone())
        };
        if let Some((arg, roots)) = &roots {
            tack_loader::confine::check_name(target, roots).map_err(|e| refused(arg, e))?;
        }
        let beside = including_dir
            .map(|dir| dir.join(target))
            .filter(|p| !Path::new(target).is_absolute() && p.is_file());
        let file = beside.unwrap_or_else(|| self.find_import(&build, &scope, "tasks", target));
        if let Some((arg, roots)) = &roots {
            tack_loader::confine::check_found(&file, roots).map_err(|e| refused(arg, e))?;
        }
        let data = self.files.load(&file)?;
        let blocks = match &data.value {
            Value::Null => Vec::new(),
            Value::Seq(s) if s.is_empty() => Vec::new(),
            Value::Seq(_) => {
                let mut inner = scope.clone();
                inner.include_targets.push(target.to_string());
                self.load_blocks(&data, &mut build, &inner).map_err(|e| match e {
                    LoadFail::Error(d) => d,
                    LoadFail::Shape(cause) => Diagnostic::new(cause),
                })?
            }
            _ => {
                return Err(parser_error(
                    "included task files must contain a list of tasks",
                    Some(&data),
                ));
            }
        };
        let block = Block {
            origin: include.origin.clone(),
            implicit: true,
            attrs: Default::default(),
            vars: Mapping::new(),
            block: blocks.into_iter().map(TaskEntry::Block).collect(),
            rescue: Vec::new(),
            always: Vec::new(),
            role: include.role,
            from: BlockOrigin::ImportTasks(Box::new(include.clone())),
        };
        Ok(super::dynamic::Included::new(file, block, play, build))
    }
}
