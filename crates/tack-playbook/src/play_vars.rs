//! The variables a play sees before any host is involved (`VariableManager.get_vars(play=)`):
//! public roles' defaults, play `vars`, `vars_files`, public roles' exported vars, extra vars
//! and the host-independent magic variables. Listings, `--syntax-check` and play keywords are
//! rendered against this.

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value};

use crate::ast::{Play, Role, RoleId};
use crate::load::FileLoader;
use tack_loader::search::path_dwim_relative_stack;

/// `combine_vars`, as the run's `hash_behaviour` says.
fn merge(into: &mut Mapping, from: &Mapping) {
    tack_loader::combine_into(into, from);
}

fn s(v: &str) -> Node {
    Node::bare(Value::Str(v.to_string()))
}

/// A role's defaults with its dependencies' below them (`Role.get_default_vars`).
pub fn role_defaults(roles: &[Role], id: RoleId) -> Mapping {
    let mut out = Mapping::new();
    for dep in all_dependencies(roles, id) {
        merge(&mut out, &role_defaults(roles, dep));
    }
    merge(&mut out, &roles[id.0].default_vars);
    out
}

/// Every dependency, deepest first (`Role.get_all_dependencies`).
pub fn all_dependencies(roles: &[Role], id: RoleId) -> Vec<RoleId> {
    let mut out = Vec::new();
    for dep in &roles[id.0].dependencies {
        out.extend(all_dependencies(roles, *dep));
        out.push(*dep);
    }
    out
}

/// `Role.get_vars(include_params=False, only_exports=True)`.
pub fn role_exports(roles: &[Role], id: RoleId) -> Mapping {
    let mut out = Mapping::new();
    let mut seen = Vec::new();
    for dep in all_dependencies(roles, id) {
        if !seen.contains(&dep) {
            merge(&mut out, &role_exports(roles, dep));
            seen.push(dep);
        }
    }
    merge(&mut out, &roles[id.0].role_vars);
    out
}

/// The host-independent variables of `play`, given the extra vars and the files loader.
pub fn play_vars(
    play: &Play,
    extra_vars: &Mapping,
    files: &dyn FileLoader,
    templar: &Templar,
) -> Result<Mapping, Diagnostic> {
    let layers = play_var_layers(play, extra_vars, files, templar)?;
    let mut all = layers.role_defaults;
    merge(&mut all, &layers.vars);
    Ok(all)
}

/// A play's variables split where a host's inventory variables go between them.
#[derive(Debug, Clone, Default)]
pub struct PlayVarLayers {
    /// Every public role's defaults (below inventory variables).
    pub role_defaults: Mapping,
    /// Play `vars`, `vars_files`, public roles' exported vars, extra vars and the
    /// host-independent magic variables (above them).
    pub vars: Mapping,
    /// What ansible notes each time it gathers the play's variables, with the `-v` count
    /// each needs, in order: for each `vars_files` item, the places looked for its names
    /// (`-vvvvv`) and ``Read `vars_file` 'path'.`` for the file it read (`-vvv`).
    pub read_notes: Vec<(u8, String)>,
    /// The `vars_files` entries whose names need a host's variables (`vars/{{ os }}.yml`):
    /// rendered and loaded for each host as its tasks run.
    pub deferred: Vec<Node>,
}

/// [`play_vars`] as its two layers.
pub fn play_var_layers(
    play: &Play,
    extra_vars: &Mapping,
    files: &dyn FileLoader,
    templar: &Templar,
) -> Result<PlayVarLayers, Diagnostic> {
    let magic = magic_vars(play);
    let mut defaults = Mapping::new();
    // The public roles loaded with the play (`roles:`, `import_role`: public unless they or
    // `private_role_vars` say otherwise); `include_role` exposes its role as it runs.
    let public: Vec<RoleId> =
        play.roles.iter().copied().filter(|id| play.role(*id).public).collect();
    for id in &public {
        merge(&mut defaults, &role_defaults(&play.role_arena, *id));
    }
    // `all` is what `vars_files` names render against (defaults included); `upper` is the
    // same merges without the defaults.
    let mut all = defaults.clone();
    merge(&mut all, &play.vars);
    let mut upper = play.vars.clone();
    let mut read_notes = Vec::new();

    let mut deferred = Vec::new();
    for item in &play.vars_files {
        let mut temp = all.clone();
        merge(&mut temp, extra_vars);
        merge(&mut temp, &magic);
        // The play's own variables only: no name here is a managed host's.
        let render =
            |candidate: &Node| templar.render_with_vars(candidate, &temp).map(|n| (n, false));
        let searched = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let heard = std::rc::Rc::clone(&searched);
        let loaded = tack_loader::notes::observe(
            move |level, line| heard.borrow_mut().push((level, line)),
            || load_vars_files_item(&play_basedir(play), item, render, files),
        )?;
        read_notes.append(&mut searched.borrow_mut());
        match loaded {
            VarsFileItem::Loaded(vars, found) => {
                merge(&mut all, &vars);
                merge(&mut upper, &vars);
                let shown = tack_py::repr::str_repr(&found.to_string_lossy());
                read_notes.push((3, format!("Read `vars_file` {shown}.")));
            }
            VarsFileItem::NotFound => {}
            // A name that needs a host's variables: each host renders it (ansible's variable
            // manager renders `vars_files` with the host's variables; without a host it warns
            // and passes over a name it cannot render).
            VarsFileItem::Undefined => {
                tack_diag::warn(&Diagnostic::at(
                    "skipping vars_files item due to an undefined variable",
                    item.origin.clone(),
                ));
                deferred.push(item.clone());
            }
        }
    }
    for id in &public {
        merge(&mut upper, &role_exports(&play.role_arena, *id));
    }
    merge(&mut upper, extra_vars);
    merge(&mut upper, &magic);
    Ok(PlayVarLayers { role_defaults: defaults, vars: upper, read_notes, deferred })
}

/// What one `vars_files` entry gave.
pub enum VarsFileItem {
    /// The first of its names that exists, loaded: its variables and the file.
    Loaded(Mapping, PathBuf),
    /// None of its names exists.
    NotFound,
    /// A name needs a variable its render did not have.
    Undefined,
}

/// One `vars_files` entry (a name, or a list of names of which the first that exists wins)
/// rendered with `render` (which also says whether a managed host's value named it), found
/// beside the play (`basedir`, its `vars/`) and loaded. A name a managed host chose is read
/// only inside `basedir` (seed 002): leaving it is an error, before and after the search.
pub fn load_vars_files_item(
    basedir: &Path,
    item: &Node,
    render: impl Fn(&Node) -> Result<(Node, bool), tack_template::TemplateError>,
    files: &dyn FileLoader,
) -> Result<VarsFileItem, Diagnostic> {
    let candidates: Vec<Node> = match &item.value {
        Value::Seq(list) => list.clone(),
        _ => vec![item.clone()],
    };
    for candidate in candidates {
        let Ok((rendered, host_named)) = render(&candidate) else {
            return Ok(VarsFileItem::Undefined);
        };
        let Some(name) = rendered.as_str() else {
            return Err(Diagnostic::at(
                format!("Invalid `vars_files` value of type '{}'.", rendered.python_type()),
                rendered.origin.clone(),
            )
            .parser()
            .with_help("A `vars_files` value should either be a string or list of strings."));
        };
        // `Play.get_search_path`: the play's own directory.
        let search = [basedir.to_path_buf()];
        let escaped = |escape: tack_loader::confine::Escape| {
            Diagnostic::at(escape.message("a `vars_files` name was", name), item.origin.clone())
        };
        if host_named {
            tack_loader::confine::check_name(name, &search).map_err(escaped)?;
        }
        let Ok(found) = path_dwim_relative_stack(basedir, &search, Some("vars"), name) else {
            continue;
        };
        if host_named {
            tack_loader::confine::check_found(&found, &search).map_err(escaped)?;
        }
        let data = files.load(&found).map_err(|e| {
            if e.class == tack_diag::ErrorClass::Parser {
                e
            } else {
                Diagnostic::caused_by(
                    format!(
                        "Invalid vars_files file {}.",
                        tack_yaml::pyrepr::str_repr(&found.to_string_lossy())
                    ),
                    None,
                    e,
                )
            }
        })?;
        let mut vars = Mapping::new();
        match &data.value {
            Value::Null => {}
            Value::Map(m) => merge(&mut vars, m),
            Value::Seq(items) => {
                for it in items {
                    let Some(m) = it.as_map() else { return Err(invalid_file_contents(it)) };
                    merge(&mut vars, m);
                }
            }
            _ => return Err(invalid_file_contents(&data)),
        }
        return Ok(VarsFileItem::Loaded(vars, found));
    }
    Ok(VarsFileItem::NotFound)
}

fn invalid_file_contents(at: &Node) -> Diagnostic {
    Diagnostic::at("Invalid variable file contents.", at.origin.clone()).parser().with_help(
        "Variable files must contain either a dictionary of variables, or a list of dictionaries.",
    )
}

/// The play's base directory for relative files.
pub fn play_basedir(play: &Play) -> PathBuf {
    play.included_path.clone().unwrap_or_else(|| play.basedir.clone())
}

/// The magic variables that do not depend on a host or the inventory.
fn magic_vars(play: &Play) -> Mapping {
    let mut m = Mapping::new();
    m.insert(s("playbook_dir"), s(&play_basedir(play).to_string_lossy()));
    let play_roles: Vec<Node> = play.roles.iter().map(|id| s(&play.role(*id).name)).collect();
    m.insert(s("ansible_play_role_names"), Node::bare(Value::Seq(play_roles.clone())));
    m.insert(s("role_names"), Node::bare(Value::Seq(play_roles)));
    // ansible builds these two from Python sets, whose order changes between runs; tack
    // lists them sorted.
    let mut dependencies = std::collections::BTreeSet::new();
    let mut pending: Vec<RoleId> =
        play.roles.iter().flat_map(|id| play.role(*id).dependencies.clone()).collect();
    while let Some(id) = pending.pop() {
        if dependencies.insert(play.role(id).name.clone()) {
            pending.extend(play.role(id).dependencies.iter().copied());
        }
    }
    let mut all = dependencies.clone();
    all.extend(play.roles.iter().map(|id| play.role(*id).name.clone()));
    let names = |set: &std::collections::BTreeSet<String>| {
        Node::bare(Value::Seq(set.iter().map(|n| s(n)).collect()))
    };
    m.insert(s("ansible_dependent_role_names"), names(&dependencies));
    m.insert(s("ansible_role_names"), names(&all));
    m
}
