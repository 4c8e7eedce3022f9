//! Roles: resolving a role name to its directory (`RoleDefinition._load_role_path`), loading
//! its `defaults/`, `vars/`, `meta/`, `tasks/` and `handlers/` (`Role._load_role_data`), its
//! dependencies depth-first, and the static `import_role` expansion.

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::{Loader, PlayBuild, Scope, attrs, general_error, parser_error};
use crate::ast::{Attrs, Block, BlockOrigin, Role, RoleId, Task, TaskEntry};
use crate::tables::ObjectKind;
use tack_loader::search::find_vars_files;
use tack_py::ansible::unfrackpath;

/// Roles nested deeper than this are a dependency loop (ansible reports the RecursionError).
const MAX_ROLE_DEPTH: usize = 64;

/// A role reference (`roles:` entry, dependency, or import/include_role target), resolved.
#[derive(Debug, Clone)]
pub(crate) struct RoleRef {
    pub origin: Option<Origin>,
    pub name: String,
    /// The collection the role came from (`ns.col`), its `name` then fully qualified.
    pub collection: Option<String>,
    pub path: PathBuf,
    pub attrs: Attrs,
    pub params: Mapping,
    pub vars: Mapping,
}

use tack_diag::Origin;

/// Which files to load instead of `main` (`tasks_from`, ...).
#[derive(Debug, Clone, Default)]
pub struct FromFiles {
    pub tasks: Option<String>,
    pub vars: Option<String>,
    pub defaults: Option<String>,
    pub handlers: Option<String>,
    /// `rolespec_validate: false`: no argument spec validation task is prepended.
    pub skip_validation: bool,
    /// The `*_from` arguments whose render read what a managed host said (`tasks_from`,
    /// ...): each is found only inside the role's directory (seed 002).
    pub host_named: Vec<&'static str>,
}

impl FromFiles {
    /// The include argument that names the file of `subdir` (`tasks` → `tasks_from`), when a
    /// managed host chose it.
    fn chosen(&self, subdir: &str) -> Option<&'static str> {
        let arg = match subdir {
            "tasks" => "tasks_from",
            "vars" => "vars_from",
            "defaults" => "defaults_from",
            "handlers" => "handlers_from",
            _ => return None,
        };
        self.host_named.contains(&arg).then_some(arg)
    }
}

impl Loader<'_> {
    /// `RoleInclude.load`: a role entry (a name, or a mapping with `role:`/`name:` and keywords
    /// and parameters), with its path found on the role search path.
    pub(crate) fn role_ref(
        &self,
        data: &Node,
        build: &PlayBuild,
        current_role_path: Option<&Path>,
        collection_list: &[String],
        vars: &Mapping,
    ) -> Result<RoleRef, Diagnostic> {
        let data = match &data.value {
            Value::Int(i) => Node::new(Value::Str(i.to_string()), data.origin.clone()),
            _ => data.clone(),
        };
        let name_node = match &data.value {
            Value::Str(s) => {
                if s.contains(',') {
                    return Err(general_error(
                        format!("Invalid old style role requirement: {s}"),
                        None,
                    ));
                }
                data.clone()
            }
            Value::Map(m) => match m.get("role").or_else(|| m.get("name")) {
                Some(n) if n.as_str().is_some_and(|s| !s.is_empty()) => n.clone(),
                _ => {
                    return Err(general_error(
                        "role definitions must contain a role name",
                        Some(&data),
                    ));
                }
            },
            _ => return Err(parser_error("Invalid role definition.", Some(&data))),
        };
        let name = self.render_string(&name_node, vars)?;
        let (name, path, collection) =
            self.find_role(&name, &data, build, current_role_path, collection_list, vars)?;

        let mut attrs_map = Mapping::new();
        let mut params = Mapping::new();
        if let Some(m) = data.as_map() {
            for (k, v) in m.iter() {
                let key = k.as_str().unwrap_or_default();
                if ObjectKind::RoleInclude.attribute(key).is_some() {
                    attrs_map.insert(k.clone(), v.clone());
                } else {
                    params.insert(k.clone(), v.clone());
                }
            }
        }
        let mut role_vars = Mapping::new();
        if let Some(v) = attrs_map.get("vars") {
            role_vars = attrs::load_vars(v, "RoleInclude")?;
        }
        let mut ri_attrs = attrs::collect(
            &attrs_map,
            &[crate::tables::Keyword::Vars, crate::tables::Keyword::Role],
        );
        if let Some((key, tags)) = attrs_map.entry("tags") {
            ri_attrs.set(crate::tables::Keyword::Tags, key.clone(), attrs::load_tags(tags)?);
        }
        if let Some((key, defaults)) = attrs_map.entry("module_defaults") {
            let resolved = self.load_module_defaults(defaults, &build.action_groups)?;
            ri_attrs.set(crate::tables::Keyword::ModuleDefaults, key.clone(), resolved);
        }
        attrs::validate_string_fields(&ri_attrs, ObjectKind::RoleInclude)?;
        Ok(RoleRef {
            origin: data.origin.clone(),
            name,
            collection,
            path,
            attrs: ri_attrs,
            params,
            vars: role_vars,
        })
    }

    /// The directories a role name is looked for in, in order (before their templates are
    /// rendered).
    pub(crate) fn role_search(
        &self,
        build: &PlayBuild,
        current_role_path: Option<&Path>,
    ) -> Vec<PathBuf> {
        let mut search: Vec<PathBuf> = vec![build.basedir.join("roles")];
        search.extend(self.options.roles_path.iter().cloned());
        if let Some(p) = current_role_path {
            search.push(p.to_path_buf());
        }
        search.push(build.basedir.clone());
        search
    }

    /// `_load_role_path`: the first `<search dir>/<name>` that exists, else `<name>` as a path.
    fn find_role(
        &self,
        name: &str,
        data: &Node,
        build: &PlayBuild,
        current_role_path: Option<&Path>,
        collection_list: &[String],
        vars: &Mapping,
    ) -> Result<(String, PathBuf, Option<String>), Diagnostic> {
        // A collection's role first, as ansible looks there first: a fully qualified name's,
        // or a short name's in the play's `collections:` list; the role is then known by its
        // fully qualified name (`role_name` is the short one).
        let qualified: Vec<String> = if name.contains('.') {
            vec![name.to_string()]
        } else {
            collection_list
                .iter()
                .filter(|c| !matches!(c.as_str(), "ansible.legacy" | "ansible.builtin"))
                .map(|c| format!("{c}.{name}"))
                .collect()
        };
        for candidate in &qualified {
            if let Some(fqcr) = super::collections::Fqcr::parse(candidate)
                && let Some(path) = self.collection_roots().role(&fqcr)
            {
                let collection = format!("{}.{}", fqcr.namespace, fqcr.name);
                if let Some(dir) = self.collection_roots().collection(fqcr.namespace, fqcr.name) {
                    self.collection_loaded(&collection, &dir, Some(data))?;
                }
                return Ok((candidate.clone(), path, Some(collection)));
            }
        }
        let search = self.role_search(build, current_role_path);
        for dir in &search {
            let dir_text = dir.to_string_lossy().to_string();
            let dir = match self
                .templar
                .render_with_vars(&Node::bare(Value::Str(dir_text.clone())), vars)
            {
                Ok(n) => tack_yaml::pyrepr::str(&n.value),
                Err(_) => dir_text,
            };
            let candidate = unfrackpath(&Path::new(&dir).join(name), true, None);
            if candidate.exists() {
                return Ok((name.to_string(), candidate, None));
            }
        }
        let as_path = unfrackpath(Path::new(name), true, None);
        if as_path.exists() {
            let base =
                as_path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            let base = Path::new(name)
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or(base);
            return Ok((base, as_path, None));
        }
        let mut places: Vec<String> = collection_list.to_vec();
        places.extend(search.iter().map(|p| p.to_string_lossy().to_string()));
        Err(general_error(
            format!("The role '{name}' was not found in: {}", places.join(":")),
            Some(data),
        ))
    }

    /// `Role.load` + `_load_role_data`: loads the role's files and dependencies into the
    /// play's role arena and returns its id.
    pub(crate) fn load_role(
        &self,
        rr: RoleRef,
        build: &mut PlayBuild,
        parent: Option<RoleId>,
        from: &FromFiles,
        from_include: bool,
        depth: usize,
    ) -> Result<RoleId, Diagnostic> {
        // Dependencies count their depth; an `import_role` in a role's tasks nests the
        // loading too (a role that imports itself), which the loader counts.
        let nesting = self.role_nesting.get();
        if depth.max(nesting) > MAX_ROLE_DEPTH {
            return Err(tack_diag::Diagnostic::caused_by(
                "A recursion loop was detected with the roles specified. Make sure child roles do not have dependencies on parent roles",
                rr.origin.clone(),
                tack_diag::Diagnostic::new("maximum recursion depth exceeded"),
            ));
        }
        self.role_nesting.set(nesting + 1);
        let loaded = self.load_role_unchecked(rr, build, parent, from, from_include, depth);
        self.role_nesting.set(nesting);
        loaded
    }

    fn load_role_unchecked(
        &self,
        rr: RoleRef,
        build: &mut PlayBuild,
        parent: Option<RoleId>,
        from: &FromFiles,
        from_include: bool,
        depth: usize,
    ) -> Result<RoleId, Diagnostic> {
        let id = RoleId(build.roles.len());
        build.roles.push(Role {
            origin: rr.origin.clone(),
            name: rr.name.clone(),
            collection: rr.collection.clone(),
            path: rr.path.clone(),
            attrs: rr.attrs.clone(),
            params: rr.params.clone(),
            vars: rr.vars.clone(),
            role_vars: Mapping::new(),
            default_vars: Mapping::new(),
            allow_duplicates: false,
            public: self.options.static_role_public(),
            dependencies: Vec::new(),
            parents: parent.into_iter().collect(),
            task_blocks: Vec::new(),
            handler_blocks: Vec::new(),
            from_include,
        });

        let role_vars = self.role_yaml(&rr, "vars", from.vars.as_deref(), true, from)?;
        let role_vars = as_vars(role_vars, &rr.name, "vars")?;
        let defaults = self.role_yaml(&rr, "defaults", from.defaults.as_deref(), true, from)?;
        let defaults = as_vars(defaults, &rr.name, "defaults")?;
        build.roles[id.0].role_vars = role_vars;
        build.roles[id.0].default_vars = defaults;

        let mut meta_collections = Vec::new();
        if let Some(meta) = self.role_yaml(&rr, "meta", None, false, from)?
            && !is_empty(&meta)
        {
            let Some(meta_map) = meta.as_map() else {
                return Err(parser_error(
                    format!("the 'meta/main.yml' for role {} is not a dictionary", rr.name),
                    None,
                ));
            };
            attrs::validate_keys(meta_map, ObjectKind::RoleMetadata)?;
            if let Some(ad) = meta_map.get("allow_duplicates") {
                build.roles[id.0].allow_duplicates = ad.value.is_truthy();
            }
            if let Some(list) = meta_map.get("collections") {
                meta_collections = super::collections::keyword_items(list)?;
            }
            if let Some(deps) = meta_map.get("dependencies").filter(|d| !is_empty(d)) {
                let Some(list) = deps.as_seq() else {
                    return Err(parser_error(
                        "Expected role dependencies to be a list.",
                        Some(&meta),
                    ));
                };
                let owner_dir = rr.path.parent().map(Path::to_path_buf);
                let collections = vec!["ansible.legacy".to_string()];
                let vars = build.template_vars.clone();
                for dep in list {
                    let dep_ref =
                        self.role_ref(dep, build, owner_dir.as_deref(), &collections, &vars)?;
                    let dep_id = self.load_role(
                        dep_ref,
                        build,
                        Some(id),
                        &FromFiles::default(),
                        false,
                        depth + 1,
                    )?;
                    build.roles[id.0].dependencies.push(dep_id);
                }
            }
        }

        let collections = super::collections::role_list(
            rr.collection.as_deref(),
            self.default_collection.borrow().as_deref(),
            &meta_collections,
        );
        let scope = Scope::for_role(id, &rr.path, self, collections);
        if let Some(tasks) = self.role_yaml(&rr, "tasks", from.tasks.as_deref(), false, from)?
            && !is_empty(&tasks)
        {
            let message = format!(
                "The tasks/main.yml file for role '{}' must contain a list of tasks.",
                rr.name
            );
            let blocks = self
                .load_blocks(&tasks, build, &scope)
                .map_err(|e| e.into_error(&message, super::block::Owner::Node(&tasks)))?;
            build.roles[id.0].task_blocks = blocks;
        }
        if let Some(handlers) =
            self.role_yaml(&rr, "handlers", from.handlers.as_deref(), false, from)?
            && !is_empty(&handlers)
        {
            let message = format!(
                "The handlers/main.yml file for role '{}' must contain a list of tasks.",
                rr.name
            );
            let blocks = self
                .load_blocks(&handlers, build, &scope.handlers())
                .map_err(|e| e.into_error(&message, super::block::Owner::Node(&handlers)))?;
            build.roles[id.0].handler_blocks = blocks;
        }
        if !from.skip_validation
            && let Some(spec) = self.argument_spec(&rr)?
        {
            self.prepend_validation(build, id, &spec, from.tasks.as_deref().unwrap_or("main"))?;
        }
        Ok(id)
    }

    /// `_load_role_yaml(subdir, main, allow_dir)`.
    fn role_yaml(
        &self,
        rr: &RoleRef,
        subdir: &str,
        main: Option<&str>,
        allow_dir: bool,
        from: &FromFiles,
    ) -> Result<Option<Node>, Diagnostic> {
        let dir = rr.path.join(subdir);
        // A `*_from` a managed host chose: by its text before anything is looked up, then
        // where each file found leads.
        let chosen = main.zip(from.chosen(subdir));
        let refused = |arg: &str, name: &str, escape: tack_loader::confine::Escape| {
            general_error(escape.message(&format!("the '{arg}' of this include was"), name), None)
        };
        if let Some((name, arg)) = chosen
            && let Err(escape) = tack_loader::confine::check_name(name, std::slice::from_ref(&dir))
        {
            return Err(refused(arg, name, escape));
        }
        if !dir.is_dir() {
            if let Some(main) = main {
                let _ = main;
                return Err(general_error(
                    format!(
                        "Could not find specified file in role, its '{subdir}/' is not usable."
                    ),
                    None,
                ));
            }
            return Ok(None);
        }
        let mut exts = vec![".yml", ".yaml", ".json"];
        let name = match main {
            None => {
                exts.push("");
                "main"
            }
            Some(m) => {
                exts.insert(0, "");
                m
            }
        };
        // A role's path is absolute, so the loader's base directory plays no part here.
        let found = find_vars_files(&rr.path, &dir, name, &exts, allow_dir);
        if found.is_empty() {
            if let Some(main) = main {
                return Err(general_error(
                    format!("Could not find specified file in role: {subdir}/{main}"),
                    None,
                ));
            }
            return Ok(None);
        }
        // ansible's `is_subpath` check, by the paths' text: a `*_from` that leads out of the
        // role's own directory (absolute, or up through `..`) fails the load.
        let within = unfrackpath(&dir, false, None);
        for file in &found {
            if !unfrackpath(file, false, None).starts_with(&within) {
                return Err(general_error(
                    format!(
                        "Failed loading '{}' for role ({}) as it is not inside the expected \
                         role path: {}",
                        tack_py::repr::str_repr(&file.to_string_lossy()),
                        rr.name,
                        tack_py::repr::str_repr(&dir.to_string_lossy()),
                    ),
                    None,
                ));
            }
        }
        if let Some((name, arg)) = chosen {
            let roots = std::slice::from_ref(&rr.path);
            for file in &found {
                tack_loader::confine::check_found(file, roots)
                    .map_err(|escape| refused(arg, name, escape))?;
            }
        }
        let mut data: Option<Node> = None;
        for file in found {
            let new = self.files.load(&file)?;
            if is_empty(&new) {
                continue;
            }
            data = Some(match (data, &new.value) {
                (Some(Node { value: Value::Map(mut old), origin }), Value::Map(m)) => {
                    for (k, v) in m.iter() {
                        old.insert(k.clone(), v.clone());
                    }
                    Node::new(Value::Map(old), origin)
                }
                _ => new,
            });
            if !allow_dir {
                break;
            }
        }
        Ok(data)
    }

    /// The role's argument spec (`meta/argument_specs.yml`, else `argument_specs` in
    /// `meta/main.yml`), if it has one.
    fn argument_spec(&self, rr: &RoleRef) -> Result<Option<Mapping>, Diagnostic> {
        for ext in [".json", ".yaml", ".yml"] {
            let p = rr.path.join("meta").join(format!("argument_specs{ext}"));
            if p.exists() {
                let data = self.role_yaml(
                    rr,
                    "meta",
                    Some("argument_specs"),
                    false,
                    &FromFiles::default(),
                )?;
                return Ok(data.and_then(|d| {
                    d.as_map()
                        .and_then(|m| m.get("argument_specs"))
                        .and_then(|s| s.as_map().cloned())
                }));
            }
        }
        let meta = self.role_yaml(rr, "meta", None, false, &FromFiles::default())?;
        Ok(meta.and_then(|m| {
            m.as_map().and_then(|m| m.get("argument_specs")).and_then(|s| s.as_map().cloned())
        }))
    }

    /// `Role._prepend_validation_task`: a role with an argument spec for its entry point runs
    /// `validate_argument_spec` before its own tasks.
    fn prepend_validation(
        &self,
        build: &mut PlayBuild,
        id: RoleId,
        specs: &Mapping,
        entry: &str,
    ) -> Result<(), Diagnostic> {
        let Some(spec) = specs.get(entry).filter(|s| !is_empty(s)) else { return Ok(()) };
        let mut name = format!("Validating arguments against arg spec '{entry}'");
        if let Some(short) = spec.as_map().and_then(|m| m.get("short_description")) {
            name.push_str(" - ");
            name.push_str(&tack_yaml::pyrepr::str(&short.value));
        }
        let role = &build.roles[id.0];
        let s = |t: &str| Node::bare(Value::Str(t.to_string()));
        let mut ctx = Mapping::new();
        ctx.insert(s("type"), s("role"));
        ctx.insert(s("name"), s(role.short_name()));
        ctx.insert(s("argument_spec_name"), s(entry));
        ctx.insert(s("path"), s(&role.path.to_string_lossy()));
        let mut args = Mapping::new();
        args.insert(
            s("argument_spec"),
            spec.as_map()
                .and_then(|m| m.get("options"))
                .cloned()
                .unwrap_or_else(|| Node::bare(Value::Map(Mapping::new()))),
        );
        args.insert(s("provided_arguments"), Node::bare(Value::Map(role.params.clone())));
        args.insert(s("validate_args_context"), Node::bare(Value::Map(ctx)));
        let mut task_attrs = Attrs::default();
        task_attrs.set(crate::tables::Keyword::Name, s("name"), s(&name));
        task_attrs.set(
            crate::tables::Keyword::Tags,
            s("tags"),
            Node::bare(Value::Seq(vec![s("always")])),
        );
        let task =
            Task::in_memory("ansible.builtin.validate_argument_spec", args, task_attrs, Some(id));
        let block = Block {
            origin: role.origin.clone(),
            implicit: true,
            attrs: Attrs::default(),
            vars: Mapping::new(),
            block: vec![TaskEntry::Task(task)],
            rescue: Vec::new(),
            always: Vec::new(),
            role: Some(id),
            from: BlockOrigin::Written,
        };
        build.roles[id.0].task_blocks.insert(0, block);
        Ok(())
    }

    /// Expands `import_role`: loads the role now and returns its compiled blocks under the
    /// import task.
    pub(crate) fn import_role(
        &self,
        item: &Node,
        task: Task,
        build: &mut PlayBuild,
        scope: &Scope,
    ) -> Result<Vec<TaskEntry>, Diagnostic> {
        if task.loop_items.is_some() {
            return Err(parser_error(
                "You cannot use loops on 'import_role' statements. You should use 'include_role' instead.",
                Some(item),
            ));
        }
        let crate::ast::TaskKind::IncludeRole(target) = &task.kind else { return Ok(Vec::new()) };
        let vars = scope.template_vars(build, &task.vars);
        let Some(name_node) = target.name.clone() else { return Ok(Vec::new()) };
        let name = self.render_string(&name_node, &vars)?;
        let from = FromFiles {
            tasks: target.tasks_from.as_ref().map(|n| self.render_string(n, &vars)).transpose()?,
            vars: target.vars_from.as_ref().map(|n| self.render_string(n, &vars)).transpose()?,
            defaults: target
                .defaults_from
                .as_ref()
                .map(|n| self.render_string(n, &vars))
                .transpose()?,
            handlers: target
                .handlers_from
                .as_ref()
                .map(|n| self.render_string(n, &vars))
                .transpose()?,
            skip_validation: self.skips_validation(target.rolespec_validate.as_ref(), &vars)?,
            // An import is rendered with the play's variables, before any host has answered.
            host_named: Vec::new(),
        };
        let mut rr = self.role_ref(
            &Node::new(Value::Str(name), name_node.origin.clone()),
            build,
            None,
            &task.collections,
            &vars,
        )?;
        for (k, v) in task.vars.iter() {
            rr.vars.insert(k.clone(), v.clone());
        }
        let id = self.load_role(rr, build, scope.role, &from, true, 0)?;
        // As for `include_role`, the import's `allow_duplicates` (true unless it says
        // otherwise) replaces the role's `meta` one (ansible's `get_block_list`).
        build.roles[id.0].allow_duplicates = self
            .import_flag(target.allow_duplicates.as_ref(), "allow_duplicates", &vars)?
            .unwrap_or(true);
        if let Some(public) = self.import_flag(target.public.as_ref(), "public", &vars)? {
            build.roles[id.0].public = public;
        }
        build.imported_roles.push(id);
        let blocks = crate::compile::role_blocks(&build.roles, id);
        let handlers = crate::compile::role_handler_blocks(&build.roles, id);
        let parent = Box::new(task);
        for h in handlers {
            build.extra_handlers.push(Block { from: BlockOrigin::ImportRole(parent.clone()), ..h });
        }
        Ok(vec![TaskEntry::Block(Block {
            origin: item.origin.clone(),
            implicit: true,
            attrs: Attrs::default(),
            vars: Mapping::new(),
            block: blocks.into_iter().map(TaskEntry::Block).collect(),
            rescue: Vec::new(),
            always: Vec::new(),
            role: scope.role,
            from: BlockOrigin::ImportRole(parent),
        })])
    }
}

impl Loader<'_> {
    /// `rolespec_validate` of an `import_role`: templated with the play's and the import's
    /// variables and converted as ansible's bool keywords are, while the play loads.
    fn skips_validation(&self, node: Option<&Node>, vars: &Mapping) -> Result<bool, Diagnostic> {
        Ok(self.import_flag(node, "rolespec_validate", vars)? == Some(false))
    }

    /// A bool option of an `import_role` (`name`, one of `IncludeRole`'s attributes), as
    /// ansible's bool keywords are converted, while the play loads; `None` when not given.
    fn import_flag(
        &self,
        node: Option<&Node>,
        name: &str,
        vars: &Mapping,
    ) -> Result<Option<bool>, Diagnostic> {
        let Some(raw) = node else { return Ok(None) };
        // The generated table holds every `IncludeRole` attribute.
        let Some(attr) = ObjectKind::IncludeRole.attribute(name) else { return Ok(None) };
        let value = crate::post_validate::load_time_keyword(&self.templar, attr, raw, vars)?;
        Ok(value.map(|v| v.value.is_truthy()))
    }
}

fn is_empty(node: &Node) -> bool {
    !node.value.is_truthy()
}

fn as_vars(data: Option<Node>, role: &str, subdir: &str) -> Result<Mapping, Diagnostic> {
    match data {
        None => Ok(Mapping::new()),
        Some(Node { value: Value::Map(m), .. }) => Ok(m),
        Some(_) => Err(parser_error(
            format!(
                "The {subdir}/main.yml file for role '{role}' must contain a dictionary of variables"
            ),
            None,
        )),
    }
}
