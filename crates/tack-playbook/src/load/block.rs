//! Lists of blocks and tasks (`load_list_of_blocks` / `load_list_of_tasks`): bare tasks are
//! gathered into implicit blocks, `block:` entries become blocks, and `import_tasks` /
//! `import_role` are expanded in place.

use std::path::PathBuf;

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::modargs::ModuleArgsParser;
use super::{Loader, PlayBuild, Scope, attrs, parser_error};
use crate::ast::{Block, BlockOrigin, TaskEntry};
use crate::tables::{Keyword, ObjectKind, actions};

fn is_block(node: &Node) -> bool {
    node.as_map().is_some_and(|m| ["block", "rescue", "always"].iter().any(|k| m.get(k).is_some()))
}

impl Loader<'_> {
    /// `load_list_of_blocks`: `ds` must be a list (or null); `what` names the keyword for the
    /// "malformed block" message, `owner` is the node that message points at.
    pub(crate) fn load_blocks(
        &self,
        ds: &Node,
        build: &mut PlayBuild,
        scope: &Scope,
        what: &str,
        owner: &Node,
    ) -> Result<Vec<Block>, Diagnostic> {
        let malformed = || {
            parser_error(
                format!("A malformed block was encountered while loading {what}."),
                Some(owner),
            )
        };
        let items = match &ds.value {
            Value::Null => return Ok(Vec::new()),
            Value::Seq(items) => items,
            _ => return Err(malformed()),
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
                blocks.push(self.load_block(&list, true, build, scope, what, owner)?);
            }
            if i < items.len() {
                if !items[i].is_null() {
                    blocks.push(self.load_block(&items[i], false, build, scope, what, owner)?);
                }
                i += 1;
            }
        }
        Ok(blocks)
    }

    /// `Block.load`: an explicit `block:` mapping, or (when `implicit`) a list of bare tasks.
    pub(crate) fn load_block(
        &self,
        ds: &Node,
        implicit: bool,
        build: &mut PlayBuild,
        scope: &Scope,
        what: &str,
        owner: &Node,
    ) -> Result<Block, Diagnostic> {
        if implicit {
            let tasks = self.load_tasks(ds, build, scope, what, owner)?;
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
                format!("A malformed block was encountered while loading {what}."),
                Some(owner),
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
        if let Some(tags) = map.get("tags") {
            let tags = attrs::load_tags(tags)?;
            if let Some(key) = map.entry("tags").map(|(k, _)| k.clone()) {
                block.attrs.set(Keyword::Tags, key, tags);
            }
        }
        let inner_scope = scope.with_vars(&block.vars);
        for (name, list) in [
            ("block", &mut block.block),
            ("rescue", &mut block.rescue),
            ("always", &mut block.always),
        ] {
            if let Some(v) = map.get(name) {
                *list = self.load_tasks_or_malformed(v, build, &inner_scope, name, ds)?;
            }
        }
        for name in ["rescue", "always"] {
            if map.get(name).is_some_and(|v| {
                !matches!(&v.value, Value::Null) && v.as_seq().is_none_or(|s| !s.is_empty())
            }) && block.block.is_empty()
            {
                return Err(parser_error(
                    format!("'{name}' keyword cannot be used without 'block'"),
                    Some(ds),
                ));
            }
        }
        attrs::validate_string_fields(&block.attrs, ObjectKind::Block)?;
        Ok(block)
    }

    fn load_tasks_or_malformed(
        &self,
        ds: &Node,
        build: &mut PlayBuild,
        scope: &Scope,
        what: &str,
        owner: &Node,
    ) -> Result<Vec<TaskEntry>, Diagnostic> {
        if !matches!(ds.value, Value::Seq(_) | Value::Null) {
            return Err(parser_error(
                format!("A malformed block was encountered while loading {what}."),
                Some(owner),
            ));
        }
        self.load_tasks(ds, build, scope, what, owner)
    }

    /// `load_list_of_tasks`.
    pub(crate) fn load_tasks(
        &self,
        ds: &Node,
        build: &mut PlayBuild,
        scope: &Scope,
        what: &str,
        owner: &Node,
    ) -> Result<Vec<TaskEntry>, Diagnostic> {
        let items: &[Node] = match &ds.value {
            Value::Null => &[],
            Value::Seq(items) => items,
            _ => {
                return Err(parser_error(
                    format!("A malformed block was encountered while loading {what}."),
                    Some(owner),
                ));
            }
        };
        let mut out = Vec::new();
        for item in items {
            let Some(map) = item.as_map() else {
                return Err(parser_error(
                    format!("A malformed block was encountered while loading {what}."),
                    Some(owner),
                ));
            };
            if map.get("block").is_some() {
                if scope.use_handlers {
                    return Err(parser_error(
                        "Using a block as a handler is not supported.",
                        Some(item),
                    ));
                }
                out.push(TaskEntry::Block(
                    self.load_block(item, false, build, scope, what, owner)?,
                ));
                continue;
            }
            let search = build.search.clone();
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
                    ));
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
                if let Some(meta) = task.meta() {
                    if meta == "end_role" {
                        if scope.use_handlers {
                            return Err(parser_error(
                                "Cannot execute 'end_role' from a handler",
                                Some(item),
                            ));
                        }
                        if scope.role.is_none() {
                            return Err(parser_error(
                                "Cannot execute 'end_role' from outside of a role",
                                Some(item),
                            ));
                        }
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
        let target = match self.templar.render(&raw, &vars) {
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
        let mut inner = scope.clone();
        inner.include_targets.push(target);
        inner.vars = scope.template_vars(build, &task.vars);
        let blocks = self.load_blocks(&data, build, &inner, "tasks", &data)?;
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
        use crate::paths::{dirname, path_dwim, path_dwim_relative};
        let mut cumulative: Option<PathBuf> = None;
        for parent in scope.include_targets.iter().rev() {
            let parent_dir = dirname(parent);
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
