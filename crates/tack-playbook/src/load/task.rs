//! One task (`Task.load` and its subclasses): action and arguments found by the module-args
//! parser, `with_<lookup>` turned into a loop, keywords validated for the task's class, and the
//! options of `include_tasks`/`import_tasks`/`include_role`/`import_role` checked.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::modargs::ModuleArgsParser;
use super::{Loader, PlayBuild, Scope, attrs, general_error, parser_error};
use crate::ast::{RoleTarget, Task, TaskKind};
use crate::tables::{self, Keyword, ObjectKind, actions};

/// Which ansible class loads the task: decides the accepted keywords and extra checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskFlavor {
    Task,
    Handler,
    TaskInclude,
    IncludeRole,
}

impl TaskFlavor {
    fn kind(self, handler: bool) -> ObjectKind {
        match self {
            TaskFlavor::Task => ObjectKind::Task,
            TaskFlavor::Handler => ObjectKind::Handler,
            TaskFlavor::TaskInclude if handler => ObjectKind::Handler,
            TaskFlavor::TaskInclude => ObjectKind::TaskInclude,
            TaskFlavor::IncludeRole => ObjectKind::IncludeRole,
        }
    }
}

/// Keywords include/import tasks accept (`TaskInclude.VALID_INCLUDE_KEYWORDS`).
const VALID_INCLUDE_KEYWORDS: &[&str] = &[
    "action",
    "args",
    "collections",
    "debugger",
    "ignore_errors",
    "loop",
    "loop_control",
    "loop_with",
    "name",
    "no_log",
    "register",
    "run_once",
    "tags",
    "timeout",
    "vars",
    "when",
];

impl Task {
    /// The `meta` action's argument (`flush_handlers`, `end_play`, ...), if this is a meta task.
    pub fn meta(&self) -> Option<&str> {
        if actions::is(&self.action, actions::META) {
            return self.args.get("_raw_params").and_then(Node::as_str);
        }
        None
    }
}

impl Loader<'_> {
    pub(crate) fn load_task(
        &self,
        ds: &Node,
        build: &mut PlayBuild,
        scope: &Scope,
        flavor: TaskFlavor,
    ) -> Result<Task, Diagnostic> {
        let Some(map) = ds.as_map() else {
            return Err(parser_error(
                "A malformed block was encountered while loading tasks.",
                Some(ds),
            ));
        };
        let collections = scope.task_collections(map, self)?;
        let search = self.module_search(&collections);
        let parsed = ModuleArgsParser { ds: map, ds_node: ds, search: &search }.parse(false)?;
        let kind = flavor.kind(scope.use_handlers);

        let mut vars = Mapping::new();
        if let Some(v) = map.get("vars") {
            vars = attrs::load_vars(v, kind.class_name())?;
        }

        // The keys left once the action and its arguments are taken out.
        let mut rest = Mapping::new();
        let mut loop_items = None;
        let mut loop_with = None;
        for (key, value) in map.iter() {
            let Some(k) = key.as_str() else { continue };
            if matches!(k, "action" | "local_action" | "args" | "delegate_to" | "vars" | "shell")
                || k == parsed.action
            {
                continue;
            }
            if let Some(lookup) = k.strip_prefix("with_")
                && (tables::BUILTIN_LOOKUPS.contains(&lookup) || search.lookup_exists(lookup))
            {
                if loop_items.is_some() || map.get("loop").is_some() {
                    return Err(general_error(
                        format!("duplicate loop in task: {lookup}"),
                        Some(ds),
                    ));
                }
                if value.is_null() {
                    return Err(general_error(
                        format!("you must specify a value when using {k}"),
                        Some(ds),
                    ));
                }
                loop_with = Some(lookup.to_string());
                loop_items = Some(value.clone());
                continue;
            }
            if self.options.invalid_task_attribute_failed || kind.attribute(k).is_some() {
                rest.insert(key.clone(), value.clone());
            } else {
                tack_diag::warn(&Diagnostic::new(format!("Ignoring invalid attribute: {k}")));
            }
        }
        if let Some(l) = map.get("loop") {
            if loop_items.is_some() {
                return Err(general_error("duplicate loop in task: items", Some(ds)));
            }
            loop_items = Some(l.clone());
        }

        if matches!(flavor, TaskFlavor::TaskInclude | TaskFlavor::IncludeRole)
            && (actions::is(&parsed.action, actions::INCLUDE_TASKS)
                || actions::is(&parsed.action, actions::INCLUDE_ROLE))
        {
            let delegate = parsed.delegate_to.as_ref().map(|_| "delegate_to");
            let keys = rest.keys().filter_map(|k| k.as_str()).chain(delegate);
            for k in keys {
                // `HandlerTaskInclude` adds `listen` to the include keywords.
                let listens = scope.use_handlers && k == "listen";
                if !VALID_INCLUDE_KEYWORDS.contains(&k) && !listens {
                    if self.options.invalid_task_attribute_failed {
                        return Err(parser_error(
                            format!("'{k}' is not a valid attribute for a {}", kind.class_name()),
                            Some(ds),
                        ));
                    }
                    tack_diag::warn(&Diagnostic::new(format!("Ignoring invalid attribute: {k}")));
                }
            }
        }

        for key in rest.keys() {
            let k = key.as_str().unwrap_or_default();
            if kind.attribute(k).is_none() {
                let mut err = parser_error(
                    format!("'{k}' is not a valid attribute for a {}", kind.class_name()),
                    Some(key),
                );
                err.message.push_str(
                    "\nThis error can be suppressed as a warning using the \"invalid_task_attribute_failed\" configuration",
                );
                return Err(err);
            }
        }

        let mut task_attrs = attrs::collect(&rest, &[Keyword::Loop, Keyword::Vars]);
        if let Some((key, tags)) = rest.entry("tags") {
            task_attrs.set(Keyword::Tags, key.clone(), attrs::load_tags(tags)?);
        }
        if let Some(lc) = rest.get("loop_control") {
            let Some(lc_map) = lc.as_map() else {
                return Err(parser_error(
                    "the `loop_control` value must be specified as a dictionary and cannot be a variable itself (though it can contain variables)",
                    Some(lc),
                ));
            };
            attrs::validate_keys(lc_map, ObjectKind::LoopControl)?;
        }
        if let Some(register) = rest.get("register") {
            validate_register(register)?;
        }
        attrs::validate_string_fields(&task_attrs, kind)?;

        // `action: x` is looked up only when the task runs; a rejected name then fails there.
        let rejected =
            search.rejects(&parsed.action) && !actions::is(&parsed.action, actions::BUILTIN_TASKS);
        let library = search.find(&parsed.action).filter(|_| !rejected).map(std::sync::Arc::new);
        for (name, dir) in library.iter().flat_map(|m| m.collection.iter()).flat_map(|c| &c.loaded)
        {
            self.collection_loaded(name, dir, Some(ds))?;
        }
        // ansible shows a collection's deprecation of the module where each task naming it
        // is loaded.
        // `action: x`'s value, or the module's own key (`debug:`), where ansible's messages
        // about the action point.
        let action_origin = map
            .get("action")
            .or_else(|| map.get("local_action"))
            .and_then(|n| n.origin.clone())
            .or_else(|| {
                map.iter()
                    .find(|(k, _)| k.as_str() == Some(parsed.action.as_str()))
                    .and_then(|(k, _)| k.origin.clone())
            });
        let looked_up_at_run = map.get("action").or_else(|| map.get("local_action")).is_some();
        for message in library
            .iter()
            .filter(|_| !looked_up_at_run)
            .flat_map(|m| m.collection.iter())
            .flat_map(|c| &c.deprecations)
        {
            let at = action_origin.clone().or_else(|| ds.origin.clone());
            tack_diag::deprecate_formatted(&Diagnostic::at(message.clone(), at));
        }
        // ansible-core's own deprecated modules warn as the loader resolves them (a module of
        // that name in `library/` is not ansible-core's).
        let module_deprecation = search.core_deprecation(&parsed.action, library.as_deref());
        if !looked_up_at_run && let Some((message, version)) = &module_deprecation {
            let at = action_origin.clone().or_else(|| ds.origin.clone());
            tack_diag::deprecate(&Diagnostic::at(message.clone(), at), version);
        }
        if let Some((key, defaults)) = rest.entry("module_defaults") {
            let resolved = self.load_module_defaults(defaults, &build.action_groups)?;
            task_attrs.set(Keyword::ModuleDefaults, key.clone(), resolved);
        }
        let action_plugin = search
            .action_plugin(&parsed.action)
            .or_else(|| search.normal_override(&parsed.action, library.as_deref()))
            .filter(|_| !rejected);
        let mut task = Task {
            origin: ds.origin.clone(),
            kind: TaskKind::Action,
            action: parsed.action.clone(),
            action_origin,
            args: parsed.args,
            delegate_to: parsed.delegate_to,
            collections,
            loop_items,
            loop_with,
            attrs: task_attrs,
            vars,
            role: scope.role,
            implicit: false,
            library: library.clone(),
            action_plugin: action_plugin.clone(),
            // Kept where a module is found by name when the task runs: a templated action's,
            // `gather_facts`' fact modules, and an action plugin's.
            library_search: (parsed.action.contains("{{")
                || action_plugin.is_some()
                || matches!(
                    parsed.action.as_str(),
                    "gather_facts" | "ansible.builtin.gather_facts" | "ansible.legacy.gather_facts"
                ))
            .then(|| std::sync::Arc::new(search.clone())),
            action_looked_up_at_run: looked_up_at_run,
            module_deprecation,
            action_rejected: rejected,
        };
        match flavor {
            TaskFlavor::Handler => {
                let listen = match task.attrs.get(Keyword::Listen) {
                    Some(Node { value: Value::Seq(items), .. }) => items.clone(),
                    Some(other) if !other.is_null() => vec![other.clone()],
                    _ => Vec::new(),
                };
                task.kind = TaskKind::Handler { listen };
            }
            TaskFlavor::TaskInclude => {
                check_include_options(&mut task, ds, scope.use_handlers)?;
                if actions::is(&task.action, actions::INCLUDE_TASKS) {
                    task.kind = TaskKind::IncludeTasks;
                }
            }
            TaskFlavor::IncludeRole => {
                let target = check_role_options(&task, ds)?;
                task.kind = TaskKind::IncludeRole(Box::new(target));
            }
            TaskFlavor::Task => {}
        }
        let _ = build;
        Ok(task)
    }
}

/// `Task._validate_register`: a variable name, or a mapping of them.
fn validate_register(value: &Node) -> Result<(), Diagnostic> {
    let result = match &value.value {
        Value::Null => Ok(()),
        Value::Map(m) => m.keys().try_for_each(attrs::validate_variable_name),
        _ => attrs::validate_variable_name(value),
    };
    result.map_err(|cause| {
        Diagnostic::caused_by("Invalid 'register' specified.", value.origin.clone(), cause).parser()
    })
}

/// ansible's "Invalid options for <action>: a,b" for the arguments an include or import does
/// not take, in the order they were written.
fn refuse_unknown_options(task: &Task, ds: &Node, valid: &[&str]) -> Result<(), Diagnostic> {
    let bad: Vec<&str> =
        task.args.keys().filter_map(|k| k.as_str()).filter(|k| !valid.contains(k)).collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(parser_error(format!("Invalid options for {}: {}", task.action, bad.join(",")), Some(ds)))
}

/// `TaskInclude.check_options`.
fn check_include_options(task: &mut Task, ds: &Node, _handler: bool) -> Result<(), Diagnostic> {
    refuse_unknown_options(task, ds, &["file", "_raw_params", "apply"])?;
    let has_raw = task.args.get("_raw_params").is_some_and(|n| n.value.is_truthy());
    if !has_raw {
        let file = task.args.remove("file").map(|(_, v)| v);
        match file {
            Some(f) if f.value.is_truthy() => {
                task.args.insert(Node::new(Value::Str("_raw_params".into()), f.origin.clone()), f);
            }
            _ => {
                return Err(parser_error(
                    format!("No file specified for {}", task.action),
                    Some(ds),
                ));
            }
        }
    }
    check_apply(task, ds, actions::is(&task.action, actions::INCLUDE_TASKS))
}

/// The `apply` option of `include_tasks`/`include_role` (refused by their `import_*` forms):
/// only the dynamic include may set it, and it must be a mapping.
fn check_apply(task: &Task, ds: &Node, is_include: bool) -> Result<(), Diagnostic> {
    let Some(apply) = task.args.get("apply") else { return Ok(()) };
    if apply.value.is_truthy() && !is_include {
        return Err(parser_error(format!("Invalid options for {}: apply", task.action), Some(ds)));
    }
    if apply.as_map().is_none() {
        return Err(parser_error(
            format!("Expected a dict for apply but got {} instead", apply.value.loaded_type_repr()),
            Some(ds),
        ));
    }
    Ok(())
}

/// `IncludeRole.load`'s option checks; returns what to load.
fn check_role_options(task: &Task, ds: &Node) -> Result<RoleTarget, Diagnostic> {
    let args = &task.args;
    let name = args.get("name").or_else(|| args.get("role")).cloned();
    if name.is_none() {
        return Err(parser_error(
            format!("'name' is a required field for {}.", task.action),
            Some(ds),
        ));
    }
    const VALID: &[&str] = &[
        "name",
        "role",
        "tasks_from",
        "vars_from",
        "defaults_from",
        "handlers_from",
        "apply",
        "public",
        "allow_duplicates",
        "rolespec_validate",
        "rescuable",
    ];
    refuse_unknown_options(task, ds, VALID)?;
    for key in ["tasks_from", "vars_from", "defaults_from", "handlers_from"] {
        if let Some(v) = args.get(key)
            && v.as_str().is_none()
        {
            return Err(parser_error(
                format!(
                    "Expected a string for {key} but got {} instead",
                    v.value.loaded_type_repr()
                ),
                None,
            ));
        }
    }
    let is_include = actions::is(&task.action, actions::INCLUDE_ROLE);
    check_apply(task, ds, is_include)?;
    if args.get("rescuable").is_some_and(|n| n.value.is_truthy()) && !is_include {
        return Err(parser_error(
            format!("Invalid options for {}: rescuable", task.action),
            Some(ds),
        ));
    }
    Ok(RoleTarget {
        name,
        tasks_from: args.get("tasks_from").cloned(),
        vars_from: args.get("vars_from").cloned(),
        defaults_from: args.get("defaults_from").cloned(),
        handlers_from: args.get("handlers_from").cloned(),
        public: args.get("public").cloned(),
        allow_duplicates: args.get("allow_duplicates").cloned(),
        apply: args.get("apply").cloned(),
        rolespec_validate: args.get("rolespec_validate").cloned(),
    })
}
