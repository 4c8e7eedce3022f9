//! The variables a task inside a role sees from its role, as ansible's `Role.get_default_vars`,
//! `Role.get_vars` and `Role.get_role_params` compute them along the task's dependency chain,
//! and the role magic variables (`role_name`, `role_path`, ...). Host-independent: computed
//! once per task and shared by every host.

use std::sync::Arc;

use tack_playbook::walk::TaskInContext;
use tack_playbook::{Play, RoleId};
use tack_template::{Layer, Provenance};
use tack_yaml::Mapping;

use tack_report::result::s;

/// A role task's layers, each placed at its rung of the precedence ladder.
#[derive(Clone, Default)]
pub(crate) struct RoleLayers {
    /// The role's defaults with its dependencies' and parents' (above every public role's).
    pub defaults: Option<Arc<Layer>>,
    /// The role's vars (parents', dependencies' exports, `vars/main`, the `vars:` it was given).
    pub vars: Option<Arc<Layer>>,
    /// Role parameters (`- {role: x, param: 1}`), parents' first.
    pub params: Option<Arc<Layer>>,
    /// `role_name`, `role_path`, `ansible_role_name`, `ansible_collection_name`, and (for
    /// every task, in a role or not) `ansible_search_path`.
    pub magic: Option<Arc<Layer>>,
}

/// `IncludeRole.get_include_params`' parent roles of `ctx`'s task, innermost first: for each
/// `import_role` it was brought in by (its ancestry) written inside a role, that role.
/// (An `include_role`'s own parent is added to its include parameters, `include::role`.)
pub(crate) fn parent_roles(play: &Play, ctx: &TaskInContext<'_>) -> Vec<RoleId> {
    use tack_playbook::tables::actions::{IMPORT_ROLE, is};
    ctx.ancestry
        .iter()
        .filter_map(|a| match a {
            tack_playbook::walk::Ancestor::Import(t) if is(&t.action, IMPORT_ROLE) => t.role,
            _ => None,
        })
        .filter(|id| id.0 < play.role_arena.len())
        .collect()
}

/// `ansible_parent_role_names` and `ansible_parent_role_paths` of `parents` (innermost
/// first) added to `magic`, when there are any.
pub(crate) fn insert_parent_roles(magic: &mut Mapping, play: &Play, parents: &[RoleId]) {
    if parents.is_empty() {
        return;
    }
    let names = parents.iter().map(|id| s(&play.role(*id).name)).collect();
    let paths = parents.iter().map(|id| s(&play.role(*id).path.to_string_lossy())).collect();
    magic.insert(
        s("ansible_parent_role_names"),
        tack_yaml::Node::bare(tack_yaml::Value::Seq(names)),
    );
    magic.insert(
        s("ansible_parent_role_paths"),
        tack_yaml::Node::bare(tack_yaml::Value::Seq(paths)),
    );
}

/// `magic` with the include's parent roles (from its parameters, `params`) after the
/// importing roles inside the included role, when both name some; else `magic` as it is.
/// An included task's import ancestry also holds the include's own (which `params` already
/// lists after the include's role): those are not repeated.
pub(crate) fn with_included_parents(magic: &Arc<Layer>, params: &Arc<Layer>) -> Option<Arc<Layer>> {
    let list = |layer: &Layer, name: &str| -> Option<Vec<tack_yaml::Node>> {
        Some(layer.get(name)?.node().as_seq()?.to_vec())
    };
    let (Some(own), Some(included)) =
        (list(magic, "ansible_parent_role_names"), list(params, "ansible_parent_role_names"))
    else {
        return Some(magic.clone());
    };
    // The longest tail of `own` that is the include's ancestry (`included` after its first).
    let ancestry = included.get(1..).unwrap_or_default();
    let shared = (0..=own.len().min(ancestry.len()))
        .rev()
        .find(|k| own[own.len() - k..] == ancestry[..*k])
        .unwrap_or(0);
    let inner = own.len() - shared;
    let joined = |name: &str| -> Option<tack_yaml::Node> {
        let own = list(magic, name)?;
        let included = list(params, name)?;
        let all = own.into_iter().take(inner).chain(included).collect();
        Some(tack_yaml::Node::bare(tack_yaml::Value::Seq(all)))
    };
    let (Some(names), Some(paths)) =
        (joined("ansible_parent_role_names"), joined("ansible_parent_role_paths"))
    else {
        return Some(magic.clone());
    };
    let mut layer = Layer::new();
    for (name, binding) in magic.bindings() {
        layer.insert_binding(name, binding.clone());
    }
    layer.insert("ansible_parent_role_names", names, Provenance::Trusted);
    layer.insert("ansible_parent_role_paths", paths, Provenance::Trusted);
    Some(Arc::new(layer))
}

/// `Task.get_search_path`: the task's role and the roles above it (innermost first), the
/// directory of the task's file (the play's when it has none), the play's directory. The one
/// home of the rule: actions find files with it, templates see it as `ansible_search_path`.
pub(crate) fn search(play: &Play, ctx: &TaskInContext<'_>) -> tack_actions::SearchPath {
    let mut chain = ctx.dep_chain.clone();
    // A role's tasks brought in by `import_role` carry the role but no chain of their own;
    // ansible's blocks of an imported role have it in theirs.
    if let Some(role) = ctx.task.role
        && !chain.contains(&role)
    {
        chain.push(role);
    }
    let roles = chain.iter().rev().map(|id| play.role(*id).path.clone()).collect();
    let basedir = tack_playbook::play_vars::play_basedir(play);
    let task_dir = ctx
        .task
        .origin
        .as_ref()
        .and_then(|o| o.path.as_ref())
        .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
        .unwrap_or_else(|| basedir.clone());
    tack_actions::SearchPath { basedir, roles, task_dir }
}

/// [`search`] as ansible's `ansible_search_path` lists it: each directory once, in order.
fn search_path(play: &Play, ctx: &TaskInContext<'_>) -> Vec<std::path::PathBuf> {
    let search = search(play, ctx);
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for dir in search.roles.into_iter().chain([search.task_dir, search.basedir]) {
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// `combine_vars`, as the run's `hash_behaviour` says.
fn merge(into: &mut Mapping, from: &Mapping) {
    tack_loader::combine_into(into, from);
}

fn layer(vars: &Mapping) -> Option<Arc<Layer>> {
    (!vars.is_empty()).then(|| Arc::new(Layer::from_mapping(vars, Provenance::Trusted)))
}

/// Every dependency of `id`, deepest first (`get_all_dependencies`).
fn all_deps(play: &Play, id: RoleId) -> Vec<RoleId> {
    tack_playbook::play_vars::all_dependencies(&play.role_arena, id)
}

fn default_vars(play: &Play, id: RoleId, parents: &[RoleId]) -> Mapping {
    let mut out = Mapping::new();
    for dep in all_deps(play, id) {
        merge(&mut out, &default_vars(play, dep, &[]));
    }
    for parent in parents {
        merge(&mut out, &play.role(*parent).default_vars);
    }
    merge(&mut out, &play.role(id).default_vars);
    out
}

fn role_vars(play: &Play, id: RoleId, parents: &[RoleId], only_exports: bool) -> Mapping {
    let mut out = Mapping::new();
    for parent in parents {
        if !only_exports {
            merge(&mut out, &play.role(*parent).vars);
        }
        merge(&mut out, &play.role(*parent).role_vars);
    }
    let mut seen = Vec::new();
    for dep in all_deps(play, id) {
        if !seen.contains(&dep) {
            merge(&mut out, &role_vars(play, dep, &[], true));
            seen.push(dep);
        }
    }
    merge(&mut out, &play.role(id).role_vars);
    if !only_exports {
        merge(&mut out, &play.role(id).vars);
    }
    out
}

fn role_params(play: &Play, id: RoleId, parents: &[RoleId]) -> Mapping {
    let mut out = Mapping::new();
    for parent in parents {
        merge(&mut out, &play.role(*parent).params);
    }
    merge(&mut out, &play.role(id).params);
    out
}

/// The role layers of `ctx`'s task (empty when it is not in a role).
pub(crate) fn layers(play: &Play, ctx: &TaskInContext<'_>) -> RoleLayers {
    let (magic, role) = role_mappings(play, ctx);
    let Some([defaults, vars, params]) = role else {
        return RoleLayers { magic: layer(&magic), ..RoleLayers::default() };
    };
    RoleLayers {
        defaults: layer(&defaults),
        vars: layer(&vars),
        params: layer(&params),
        magic: layer(&magic),
    }
}

/// The variables an include's new tasks are filtered by tags with: ansible's task variables
/// of the include without a host (`get_vars(play, task=include)`): the role defaults of the
/// include's role below the play's `vars`, its role vars and parameters above them, and its
/// role's names (`role_name`, `ansible_collection_name`, ...).
pub(crate) fn include_tag_vars(
    play: &Play,
    include: &TaskInContext<'_>,
    play_vars: &Mapping,
) -> Mapping {
    let (magic, role) = role_mappings(play, include);
    let mut out = Mapping::new();
    match role {
        Some([defaults, vars, params]) => {
            merge(&mut out, &defaults);
            merge(&mut out, play_vars);
            merge(&mut out, &vars);
            merge(&mut out, &params);
        }
        None => merge(&mut out, play_vars),
    }
    for (k, v) in magic.iter() {
        out.insert(k.clone(), v.clone());
    }
    out
}

/// The role variables of `ctx`'s task: its magic variables, and (in a role) its role's
/// defaults, vars and parameters.
fn role_mappings(play: &Play, ctx: &TaskInContext<'_>) -> (Mapping, Option<[Mapping; 3]>) {
    let mut magic = Mapping::new();
    let search = search_path(play, ctx).iter().map(|p| s(&p.to_string_lossy())).collect();
    magic.insert(s("ansible_search_path"), tack_yaml::Node::bare(tack_yaml::Value::Seq(search)));
    insert_parent_roles(&mut magic, play, &parent_roles(play, ctx));
    let Some(id) = ctx.task.role else { return (magic, None) };
    // The walk's chain ends with the task's own role; ansible's dependency chain is the
    // roles above it.
    let mut parents = ctx.dep_chain.clone();
    if parents.last() == Some(&id) {
        parents.pop();
    }
    let role = play.role(id);
    magic.insert(s("role_name"), s(role.short_name()));
    magic.insert(s("ansible_role_name"), s(&role.name));
    magic.insert(s("role_path"), s(&role.path.to_string_lossy()));
    // The collection a role came from (none for a role from a directory).
    let collection = match &role.collection {
        Some(c) => s(c),
        None => tack_yaml::Node::bare(tack_yaml::Value::Null),
    };
    magic.insert(s("ansible_collection_name"), collection);
    let mappings = [
        default_vars(play, id, &parents),
        role_vars(play, id, &parents, false),
        role_params(play, id, &parents),
    ];
    (magic, Some(mappings))
}

/// What makes two uses of a role the same role for ansible (its role cache): the role, its
/// parameters, `when`, `tags`, `vars`, the files it was loaded from and whether an include
/// loaded it. A role that already ran on a host is not run again there under the same
/// identity, unless it allows duplicates.
pub(crate) fn identity(play: &Play, id: RoleId) -> String {
    let role = play.role(id);
    let node = |n: Option<&tack_yaml::Node>| n.map(|n| tack_yaml::pyrepr::repr(&n.value));
    let files: Vec<String> = role
        .task_blocks
        .iter()
        .filter_map(|b| {
            b.origin.as_ref().and_then(|o| o.path.as_ref()).map(|p| p.display().to_string())
        })
        .collect();
    format!(
        "{}|{}|{}|{:?}|{:?}|{}|{files:?}",
        role.path.display(),
        tack_yaml::pyrepr::repr(&tack_yaml::Value::Map(role.params.clone())),
        tack_yaml::pyrepr::repr(&tack_yaml::Value::Map(role.vars.clone())),
        node(role.attrs.get(tack_playbook::tables::Keyword::When)),
        node(role.attrs.get(tack_playbook::tables::Keyword::Tags)),
        role.from_include,
    )
}
