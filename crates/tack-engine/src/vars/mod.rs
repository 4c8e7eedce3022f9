//! The variables a task sees on one host, layered as ansible-core's `VariableManager.get_vars`
//! orders them (lowest first): inventory variables, play variables (vars, vars_files),
//! block and task `vars`, the host's facts and registered results (`set_fact`, `register`),
//! extra vars, then the magic variables. Also `hostvars`: every inventory host's view.
//!
//! Layers are shared (`Arc`) and never deep-copied per task; only the per-host fact layer
//! changes during a play, and it is replaced, not mutated, so a running render keeps a
//! consistent view.

pub(crate) mod prompt;
pub(crate) mod read_notes;
pub(crate) mod reserved;
pub(crate) mod restricted_facts;
pub(crate) mod roles;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use tack_diag::Diagnostic;
use tack_inventory::Inventory;
use tack_loader::DataLoader;
use tack_template::{Binding, HostVars, Layer, Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use tack_report::result::{b, s};

use crate::context::RunFacts;

/// What a task adds to its host's variables: its role's layers and its blocks' and its own
/// `vars`, outermost first.
#[derive(Default)]
pub(crate) struct TaskVars<'a> {
    pub role: crate::vars::roles::RoleLayers,
    pub vars: Vec<&'a Mapping>,
    /// Include parameters (`include_tasks` vars and loop variable), above role parameters.
    pub params: Option<Arc<Layer>>,
    /// A running task's scope (not `hostvars`'): it also has the connection's names a play
    /// context adds where no variable set them (`ansible_host`, `ansible_ssh_host`,
    /// `ansible_connection`, ...).
    pub running: bool,
    /// The task's inherited `connection` and `remote_user` keywords, as written: the play
    /// context's `ansible_connection` and `ansible_user` where no variable sets them.
    pub connection: Option<&'a Node>,
    pub remote_user: Option<&'a Node>,
    /// The host is not in the inventory (a task delegated to a name the inventory lacks):
    /// ansible's bare `Host(name)`, with no inventory variables, no groups and no facts.
    pub outside_inventory: bool,
}

/// The run's part of what a play context adds to a running task's variables.
struct PlayContextDefaults {
    layer: Arc<Layer>,
    /// The connection a task takes when neither a variable nor a keyword names one.
    connection: String,
}

/// One play's variables for every host, shared by all its tasks (and by `hostvars`).
pub(crate) struct PlayScope {
    /// Public roles' defaults; an `include_role` with `public` adds its role's.
    role_defaults: RwLock<Arc<Layer>>,
    /// What the inventory says, replaced when a task changes the inventory.
    view: RwLock<Arc<InventoryView>>,
    /// Where `group_vars/` and `host_vars/` beside the playbook are looked for.
    dirs: Vec<PathBuf>,
    /// The play's variables; an `include_role` with `public` adds its role's exports.
    play: RwLock<Arc<Layer>>,
    extra: Arc<Layer>,
    /// What the play context adds where no variable set it, for every host and task (the
    /// run's settings); a task's own connection keywords go over it (`task_scope`).
    play_context: PlayContextDefaults,
    common_magic: Mapping,
    facts: RwLock<BTreeMap<String, Arc<Layer>>>,
    /// Gathered facts (`ansible_facts` and the injected `ansible_*` names), below play vars.
    gathered: RwLock<BTreeMap<String, Arc<Layer>>>,
    /// What a host without gathered facts sees at their rung: `ansible_facts` empty, as
    /// ansible's `namespace_facts` of an empty fact cache gives.
    no_facts: Arc<Layer>,
    /// Variables `include_vars` loaded, between task vars and `set_fact`.
    included: RwLock<BTreeMap<String, Arc<Layer>>>,
    play_hosts: RwLock<Arc<Layer>>,
    /// The magic variables `hostvars` shows, which need no play: `play_hosts`' layer without
    /// the play's names (its host lists and `ansible_play_name`).
    hostvars_magic: RwLock<Arc<Layer>>,
    /// What changed since a render started (`args`).
    pub(crate) versions: crate::task::args::Versions,
    /// The `vars_files` entries each host renders for itself (see `PlayVarLayers::deferred`).
    host_vars_files: RwLock<Option<Arc<HostVarsFiles>>>,
    /// The run's fact cache: the gathered layer of a host is made from what it holds.
    cache: Arc<crate::fact_cache::FactCache>,
    /// `inject_facts_as_vars` (see `RunFacts::inject_facts`).
    inject_facts: Option<bool>,
}

/// `vars_files` entries whose names need a host's variables, and what renders and loads them.
struct HostVarsFiles {
    items: Vec<Node>,
    basedir: PathBuf,
    templar: tack_template::Templar,
}

fn list(items: &[String]) -> Node {
    Node::bare(Value::Seq(items.iter().map(|i| s(i)).collect()))
}

impl PlayScope {
    /// Builds the play's layers: `play_vars` are the play's own variables (vars, vars_files,
    /// role exports) as `tack_playbook::play_vars` computes them.
    // Each argument is one of the layers ansible stacks for a play; a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        inventory: &Inventory,
        loader: &DataLoader,
        role_defaults: &Mapping,
        play_vars: &Mapping,
        extra_vars: &Mapping,
        playbook_dir: &std::path::Path,
        play_name: &str,
        run: &RunFacts,
        cache: Arc<crate::fact_cache::FactCache>,
    ) -> Result<Arc<PlayScope>, Diagnostic> {
        let dirs = vec![playbook_dir.to_path_buf()];
        let view = InventoryView::new(inventory, loader, &dirs)?;
        let mut common = Mapping::new();
        common.insert(s("playbook_dir"), s(&playbook_dir.to_string_lossy()));
        common.insert(s("ansible_play_name"), s(play_name));
        common.insert(s("ansible_check_mode"), b(run.check_mode));
        common.insert(s("ansible_diff_mode"), b(run.diff_mode));
        common.insert(s("ansible_forks"), Node::bare(Value::Int(run.forks)));
        common.insert(s("ansible_verbosity"), Node::bare(Value::Int(run.verbosity)));
        let run_tags =
            if run.run_tags.is_empty() { vec!["all".to_string()] } else { run.run_tags.clone() };
        common.insert(s("ansible_run_tags"), list(&run_tags));
        common.insert(s("ansible_skip_tags"), list(&run.skip_tags));
        common.insert(s("ansible_inventory_sources"), list(&run.inventory_sources));
        if let Some(limit) = &run.limit {
            common.insert(s("ansible_limit"), s(limit));
        }
        if let Some(python) = &run.playbook_python {
            common.insert(s("ansible_playbook_python"), s(python));
        }
        if let Some(file) = &run.config_file {
            common.insert(s("ansible_config_file"), s(&file.to_string_lossy()));
        }
        let mut version = Mapping::new();
        version.insert(s("string"), s(crate::context::ANSIBLE_VERSION));
        version.insert(s("full"), s(crate::context::ANSIBLE_VERSION));
        let parts: Vec<i64> =
            crate::context::ANSIBLE_VERSION.split('.').filter_map(|p| p.parse().ok()).collect();
        for (key, value) in ["major", "minor", "revision"].iter().zip(parts) {
            version.insert(s(key), Node::bare(Value::Int(value)));
        }
        common.insert(s("ansible_version"), Node::bare(Value::Map(version)));

        // `PlayContext.update_vars`: each value under every name ansible gives it.
        let mut context = run.play_context_vars.clone();
        let both = |m: &mut Mapping, names: [&str; 2], value: Node| {
            for name in names {
                m.insert(s(name), value.clone());
            }
        };
        if let Some(user) = &run.ssh.user {
            both(&mut context, ["ansible_ssh_user", "ansible_user"], s(user));
        }
        if let Some(key) = &run.ssh.private_key_file {
            let names = ["ansible_ssh_private_key_file", "ansible_private_key_file"];
            both(&mut context, names, s(key));
        }
        if let Some(timeout) = run.ssh.timeout {
            let timeout = Node::bare(Value::Int(i64::try_from(timeout).unwrap_or(i64::MAX)));
            both(&mut context, ["ansible_ssh_timeout", "ansible_timeout"], timeout);
        }
        let play_context = PlayContextDefaults {
            layer: Arc::new(Layer::from_mapping(&context, Provenance::Trusted)),
            connection: run.ssh.connection.clone().unwrap_or_else(|| "ssh".to_string()),
        };

        Ok(Arc::new(PlayScope {
            play_context,
            role_defaults: RwLock::new(Arc::new(Layer::from_mapping(
                role_defaults,
                Provenance::Trusted,
            ))),
            view: RwLock::new(Arc::new(view)),
            dirs,
            play: RwLock::new(Arc::new(Layer::from_mapping(play_vars, Provenance::Trusted))),
            extra: Arc::new(Layer::from_mapping(extra_vars, Provenance::Trusted)),
            common_magic: common,
            facts: RwLock::new(BTreeMap::new()),
            gathered: RwLock::new(BTreeMap::new()),
            no_facts: Arc::new(no_facts_layer()),
            included: RwLock::new(BTreeMap::new()),
            play_hosts: RwLock::new(Arc::new(Layer::new())),
            hostvars_magic: RwLock::new(Arc::new(Layer::new())),
            versions: crate::task::args::Versions::default(),
            host_vars_files: RwLock::new(None),
            cache,
            inject_facts: run.inject_facts,
        }))
    }

    /// The play's `vars_files` entries that need a host's variables: each running task's
    /// scope renders and loads them for its host, at the play's rung (ansible renders
    /// `vars_files` with the host's variables each time it gathers them).
    pub(crate) fn defer_vars_files(
        &self,
        items: Vec<Node>,
        basedir: PathBuf,
        templar: &tack_template::Templar,
    ) {
        if items.is_empty() {
            return;
        }
        let deferred = HostVarsFiles { items, basedir, templar: templar.clone() };
        if let Ok(mut slot) = self.host_vars_files.write() {
            *slot = Some(Arc::new(deferred));
        }
    }

    /// The variables the deferred `vars_files` give in `scope` (a host's scope up to the play's
    /// rung); an entry whose names still cannot be rendered, or that names no file, gives
    /// nothing, as ansible passes over it.
    fn host_vars_files_layer(&self, scope: &Scope) -> Option<Arc<Layer>> {
        let deferred = self.host_vars_files.read().ok()?.clone()?;
        let mut vars = Mapping::new();
        for item in &deferred.items {
            // A fact or a registered value may name the file: the host chose it.
            let render = |candidate: &Node| {
                deferred
                    .templar
                    .render(candidate, scope)
                    .map(|r| (r.value, r.provenance.is_managed_host()))
            };
            let loaded = tack_playbook::play_vars::load_vars_files_item(
                &deferred.basedir,
                item,
                render,
                deferred.templar.loader(),
            );
            match loaded {
                Ok(tack_playbook::play_vars::VarsFileItem::Loaded(found, _)) => {
                    for (k, v) in found.iter() {
                        vars.insert(k.clone(), v.clone());
                    }
                }
                Ok(_) => {}
                // A file that will not load (or a host's name that leaves the playbook's
                // directory) gives nothing and says why, once; a scope cannot fail its task.
                Err(refused) => tack_diag::warn(&refused),
            }
        }
        (!vars.is_empty()).then(|| Arc::new(Layer::from_mapping(&vars, Provenance::Trusted)))
    }

    /// The play's own variables (what names loaded at run time are rendered with).
    /// The extra vars' layer (`-e`).
    pub(crate) fn extra(&self) -> &Layer {
        &self.extra
    }

    pub(crate) fn play_vars(&self) -> Mapping {
        let mut out = Mapping::new();
        let play = read_layer(&self.play);
        for name in play.names() {
            if let Some(binding) = play.get(name) {
                out.insert(s(name), binding.node().clone());
            }
        }
        out
    }

    /// A public role's defaults and exported vars join the play's from now on
    /// (`include_role` with `public: true`).
    pub(crate) fn expose_role(&self, defaults: &Mapping, exports: &Mapping) {
        self.versions.shared_changed();
        for (slot, vars) in [(&self.role_defaults, defaults), (&self.play, exports)] {
            let old = read_layer(slot);
            let mut layer = Layer::new();
            for name in old.names() {
                if let Some(binding) = old.get(name) {
                    layer.insert_binding(name, binding.clone());
                }
            }
            for (k, v) in vars.iter() {
                layer.insert(tack_yaml::pyrepr::str(&k.value), v.clone(), Provenance::Trusted);
            }
            if let Ok(mut slot) = slot.write() {
                *slot = Arc::new(layer);
            }
        }
    }

    /// An `include_role` added `role` (and its dependencies) to the play's roles, as
    /// ansible's `IncludeRole` appends it: `ansible_play_role_names` and `role_names` list it
    /// once more, `ansible_role_names` and `ansible_dependent_role_names` gain the names they
    /// lack (kept sorted, as tack lists those sets).
    pub(crate) fn role_appended(&self, role: &str, dependencies: &[String]) {
        self.versions.shared_changed();
        let old = read_layer(&self.play);
        let names = |name: &str| -> Vec<Node> {
            old.get(name).and_then(|b| b.node().as_seq().map(<[Node]>::to_vec)).unwrap_or_default()
        };
        let mut layer = Layer::new();
        for name in old.names() {
            if let Some(binding) = old.get(name) {
                layer.insert_binding(name, binding.clone());
            }
        }
        for key in ["ansible_play_role_names", "role_names"] {
            let mut list = names(key);
            list.push(s(role));
            layer.insert(key, Node::bare(Value::Seq(list)), Provenance::Trusted);
        }
        let sorted_union = |key: &str, more: &mut dyn Iterator<Item = &str>| {
            let mut set: std::collections::BTreeSet<String> =
                names(key).iter().map(|n| tack_yaml::pyrepr::str(&n.value)).collect();
            set.extend(more.map(str::to_string));
            Node::bare(Value::Seq(set.iter().map(|n| s(n)).collect()))
        };
        let deps = sorted_union(
            "ansible_dependent_role_names",
            &mut dependencies.iter().map(String::as_str),
        );
        layer.insert("ansible_dependent_role_names", deps, Provenance::Trusted);
        let all = sorted_union(
            "ansible_role_names",
            &mut dependencies.iter().map(String::as_str).chain(std::iter::once(role)),
        );
        layer.insert("ansible_role_names", all, Provenance::Trusted);
        if let Ok(mut slot) = self.play.write() {
            *slot = Arc::new(layer);
        }
    }

    /// The play's hosts magic variables under `serial`: every host of the play, those not
    /// failed, and those of the current batch not failed.
    pub(crate) fn set_play_batch(&self, all: &[String], active: &[String], batch: &[String]) {
        self.versions.shared_changed();
        let groups = self.view().groups.clone();
        let mut without_play = self.common_magic.clone();
        without_play.remove("ansible_play_name");
        let mut without_play = Layer::from_mapping(&without_play, Provenance::Trusted);
        without_play.insert("groups", groups.clone(), Provenance::Trusted);
        if let Ok(mut slot) = self.hostvars_magic.write() {
            *slot = Arc::new(without_play);
        }
        let mut layer = Layer::from_mapping(&self.common_magic, Provenance::Trusted);
        layer.insert("groups", groups, Provenance::Trusted);
        layer.insert("ansible_play_hosts_all", list(all), Provenance::Trusted);
        layer.insert("ansible_play_hosts", list(active), Provenance::Trusted);
        layer.insert("ansible_play_batch", list(batch), Provenance::Trusted);
        let deprecation = tack_template::Deprecation {
            message: "The `play_hosts` magic variable is deprecated.".into(),
            removed_in: "2.23".into(),
            help: Some("Use `ansible_play_batch` instead.".into()),
        };
        layer.insert_deprecated("play_hosts", list(batch), Provenance::Trusted, deprecation);
        if let Ok(mut slot) = self.play_hosts.write() {
            *slot = Arc::new(layer);
        }
    }

    /// Records `value` as the host's fact or registered variable `name`.
    pub(crate) fn set_host_var(&self, host: &str, name: &str, value: Node, provenance: Provenance) {
        self.versions.host_changed(host);
        set_in(&self.facts, host, name, Binding::new(value, provenance));
    }

    /// Records `value`, whose strings each say their own trust (`Value::Unsafe` where not
    /// trusted), as the host's fact `name`: its provenance still says what it was made from.
    pub(crate) fn set_marked_host_var(
        &self,
        host: &str,
        name: &str,
        value: Node,
        provenance: Provenance,
    ) {
        self.versions.host_changed(host);
        let binding = Binding::new(value, provenance).with_trusted_at(vec![Vec::new()]);
        set_in(&self.facts, host, name, binding);
    }

    /// Records a task's result as the host's registered variable `name`, the values a module
    /// tagged `Deprecated` in it still tagged and the places the user's data sits in it (a
    /// loop's items) still trusted.
    pub(crate) fn set_registered(
        &self,
        host: &str,
        name: &str,
        value: Node,
        provenance: Provenance,
        tags: RegisteredTags,
    ) {
        self.versions.host_changed(host);
        let binding = Binding::new(value, provenance)
            .with_deprecated_values(tags.deprecated)
            .with_trusted_at(tags.trusted);
        set_in(&self.facts, host, name, binding);
    }

    /// Records `value` as a variable `include_vars` loaded for the host (below `set_fact`).
    pub(crate) fn set_included_var(&self, host: &str, name: &str, value: Node) {
        self.versions.host_changed(host);
        set_in(&self.included, host, name, Binding::new(value, Provenance::Trusted));
    }

    /// The host's `set_fact`/registered and `include_vars` layers, to carry into the next
    /// play (ansible keeps them for the whole run; facts live in the fact cache).
    pub(crate) fn carried(&self, host: &str) -> Carried {
        Carried { set_facts: self.facts_of(host), included: self.included_of(host) }
    }

    /// Starts the host with the layers an earlier play left (see [`PlayScope::carried`]).
    pub(crate) fn carry_in(
        &self,
        host: &str,
        facts: Option<Arc<Layer>>,
        included: Option<Arc<Layer>>,
    ) {
        self.versions.host_changed(host);
        for (slot, layer) in [(&self.facts, facts), (&self.included, included)] {
            if let (Some(layer), Ok(mut map)) = (layer, slot.write()) {
                map.insert(host.to_string(), layer);
            }
        }
    }

    fn included_of(&self, host: &str) -> Option<Arc<Layer>> {
        self.included.read().ok().and_then(|f| f.get(host).cloned())
    }
}

/// What a registered result carries beside its value (see [`PlayScope::set_registered`]).
pub(crate) struct RegisteredTags {
    pub deprecated: Vec<tack_yaml::tagged::DeprecatedAt>,
    pub trusted: Vec<Vec<tack_yaml::tagged::PathStep>>,
}

/// What a host's variables carry from one play into the next (see [`PlayScope::carried`]).
pub(crate) struct Carried {
    pub set_facts: Option<Arc<Layer>>,
    pub included: Option<Arc<Layer>>,
}

fn read_layer(slot: &RwLock<Arc<Layer>>) -> Arc<Layer> {
    match slot.read() {
        Ok(layer) => layer.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// Replaces the host's layer in `slot` with one that also binds `name`.
fn set_in(slot: &RwLock<BTreeMap<String, Arc<Layer>>>, host: &str, name: &str, binding: Binding) {
    {
        let Ok(mut facts) = slot.write() else { return };
        let mut layer = Layer::new();
        if let Some(old) = facts.get(host) {
            for name in old.names() {
                if let Some(binding) = old.get(name) {
                    layer.insert_binding(name, binding.clone());
                }
            }
        }
        layer.insert_binding(name, Arc::new(binding));
        facts.insert(host.to_string(), Arc::new(layer));
    }
}

impl PlayScope {
    /// Adds `facts` (as a module returned them under `ansible_facts`, a gathering's, or
    /// `cacheable` `set_fact` values) to the host's facts in the fact cache, as ansible's
    /// strategy does (`set_host_facts`: newer keys win, the rest stay), and makes its facts
    /// layer from what the cache then holds.
    pub(crate) fn merge_module_facts(&self, host: &str, facts: &Mapping) {
        let merged = self.cache.merge(host, facts);
        let inject = self.inject_facts;
        self.set_gathered(host, self.cache.layer(host, &merged, |f| facts_layer(f, inject)));
    }

    /// Starts every inventory host, and the play's `hosts` (the implicit localhost is one the
    /// inventory does not list), with the facts the cache holds for it (an earlier play's,
    /// or, with a persistent cache, an earlier run's).
    pub(crate) fn load_cached_facts(&self, hosts: &[String]) -> Result<(), Diagnostic> {
        let view = self.view();
        let extra = hosts.iter().filter(|h| !view.host_order.contains(h));
        for host in view.host_order.iter().chain(extra) {
            if let Some(facts) = self.cache.get(host)? {
                let inject = self.inject_facts;
                let layer = self.cache.layer(host, &facts, |f| facts_layer(f, inject));
                self.set_gathered(host, layer);
            }
        }
        Ok(())
    }

    fn set_gathered(&self, host: &str, layer: Arc<Layer>) {
        self.versions.host_changed(host);
        if let Ok(mut gathered) = self.gathered.write() {
            gathered.insert(host.to_string(), layer);
        }
    }

    /// `meta: clear_facts`: `host` has no facts from now on (`ansible_facts` is `{}` again),
    /// in the fact cache either.
    pub(crate) fn clear_gathered(&self, host: &str) {
        self.cache.delete(host);
        self.set_gathered(host, self.no_facts.clone());
    }

    /// Whether `host`'s facts carry the mark a gathering leaves (`_ansible_facts_gathered`,
    /// which `gathering = smart` reads).
    pub(crate) fn facts_gathered(&self, host: &str) -> bool {
        let Some(layer) = self.gathered_of(host) else { return false };
        let Some(binding) = layer.get("ansible_facts") else { return false };
        binding
            .node()
            .as_map()
            .and_then(|facts| facts.get("_ansible_facts_gathered"))
            .is_some_and(|mark| mark.value.is_truthy())
    }

    fn gathered_of(&self, host: &str) -> Option<Arc<Layer>> {
        self.gathered.read().ok().and_then(|f| f.get(host).cloned())
    }

    fn facts_of(&self, host: &str) -> Option<Arc<Layer>> {
        self.facts.read().ok().and_then(|f| f.get(host).cloned())
    }

    /// The variables of `host` without block or task variables: what `hostvars[host]` shows.
    pub(crate) fn host_scope(self: &Arc<Self>, host: &str) -> Option<Scope> {
        self.task_scope(host, &TaskVars::default())
    }

    /// `hostvars[host]`, as ansible's `HostVars` reads a host (`get_vars` without a play):
    /// its inventory variables, facts, `include_vars` and `set_fact`/registered values,
    /// extra vars and the magic variables that need no play. The play's `vars`,
    /// `vars_files`, roles and host lists are not in it.
    fn hostvars_scope(self: &Arc<Self>, host: &str) -> Option<Scope> {
        let view = self.view();
        let mut scope = Scope::new();
        scope = scope.with_layer(view.inventory_vars.get(host)?.clone());
        scope = scope.with_layer(self.gathered_of(host).unwrap_or_else(|| self.no_facts.clone()));
        if let Some(included) = self.included_of(host) {
            scope = scope.with_layer(included);
        }
        if let Some(facts) = self.facts_of(host) {
            scope = scope.with_layer(facts);
        }
        scope = scope.with_layer(self.extra.clone());
        if tack_loader::hash_behaviour() == tack_loader::HashBehaviour::Merge
            && let Some(merged) = merged_dicts(&scope)
        {
            scope = scope.with_layer(merged);
        }
        if let Ok(magic) = self.hostvars_magic.read() {
            scope = scope.with_layer(magic.clone());
        }
        scope = scope.with_layer(view.host_magic.get(host)?.clone());
        let hostvars: Arc<dyn HostVars> = Arc::new(HostVarsView(self.clone()));
        Some(scope.with_hostvars(hostvars))
    }

    /// The variables a task sees on `host`: its role's layers and its blocks' and its own
    /// `vars` at their rungs between the play's layers.
    pub(crate) fn task_scope(self: &Arc<Self>, host: &str, task: &TaskVars<'_>) -> Option<Scope> {
        let push = |scope: Scope, layer: &Option<Arc<Layer>>| match layer {
            Some(l) => scope.with_layer(l.clone()),
            None => scope,
        };
        let view = self.view();
        let bare = task.outside_inventory.then(|| bare_host(host, &view.outside_vars));
        let connection_magic = match &bare {
            Some(b) => &b.connection,
            None => view.connection_magic.get(host)?,
        };
        let inventory_vars = match &bare {
            Some(b) => &b.inventory,
            None => view.inventory_vars.get(host)?,
        };
        let host_magic = match &bare {
            Some(b) => &b.magic,
            None => view.host_magic.get(host)?,
        };
        let mut scope = Scope::new();
        if task.running {
            // Below everything: `PlayContext.update_vars` only fills names no variable set.
            let mut context = Layer::new();
            for layer in [connection_magic, &self.play_context.layer] {
                for (name, binding) in layer.bindings() {
                    context.insert_binding(name, binding.clone());
                }
            }
            let connection =
                task.connection.cloned().unwrap_or_else(|| s(&self.play_context.connection));
            context.insert("ansible_connection", connection, Provenance::Trusted);
            if let Some(user) = task.remote_user {
                for name in ["ansible_ssh_user", "ansible_user"] {
                    context.insert(name, user.clone(), Provenance::Trusted);
                }
            }
            scope = scope.with_fallback(Arc::new(context));
        }
        scope = scope.with_layer(read_layer(&self.role_defaults));
        scope = push(scope, &task.role.defaults);
        scope = scope.with_layer(inventory_vars.clone());
        scope = scope.with_layer(self.gathered_of(host).unwrap_or_else(|| self.no_facts.clone()));
        scope = scope.with_layer(read_layer(&self.play));
        if task.running {
            // ansible renders the entries with the variables so far, the extra vars and the
            // magic ones over them, `hostvars` included (a host's view in `hostvars` leaves
            // the deferred entries out, so reading it here does not come back here).
            let mut names = scope.with_layer(self.extra.clone());
            if let Ok(magic) = self.play_hosts.read() {
                names = names.with_layer(magic.clone());
            }
            names = names.with_layer(host_magic.clone());
            let hostvars: Arc<dyn HostVars> = Arc::new(HostVarsView(self.clone()));
            if let Some(files) = self.host_vars_files_layer(&names.with_hostvars(hostvars)) {
                scope = scope.with_layer(files);
            }
        }
        scope = push(scope, &task.role.vars);
        for vars in &task.vars {
            if !vars.is_empty() {
                scope = scope.with_layer(Arc::new(Layer::from_mapping(vars, Provenance::Trusted)));
            }
        }
        if let Some(included) = self.included_of(host) {
            scope = scope.with_layer(included);
        }
        if let Some(facts) = self.facts_of(host) {
            scope = scope.with_layer(facts);
        }
        scope = push(scope, &task.role.params);
        scope = push(scope, &task.params);
        scope = scope.with_layer(self.extra.clone());
        if tack_loader::hash_behaviour() == tack_loader::HashBehaviour::Merge
            && let Some(merged) = merged_dicts(&scope)
        {
            scope = scope.with_layer(merged);
        }
        if let Ok(magic) = self.play_hosts.read() {
            scope = scope.with_layer(magic.clone());
        }
        scope = scope.with_layer(host_magic.clone());
        scope = push(scope, &task.role.magic);
        let hostvars: Arc<dyn HostVars> = Arc::new(HostVarsView(self.clone()));
        Some(scope.with_hostvars(hostvars))
    }
}

/// The layers of a host the inventory does not have (ansible's `Host(name)` for a delegated
/// name): its address is its name, it is in no group, and of the inventory's variables it has
/// the `all` group's. (ansible would also read a `host_vars/<name>` file for it; tack does
/// not yet.)
struct BareHost {
    connection: Arc<Layer>,
    inventory: Arc<Layer>,
    magic: Arc<Layer>,
}

fn bare_host(name: &str, all: &Arc<Layer>) -> BareHost {
    let mut connection = Layer::new();
    connection.insert("ansible_host", s(name), Provenance::Trusted);
    connection.insert("ansible_ssh_host", s(name), Provenance::Trusted);
    let mut magic = Layer::new();
    magic.insert("inventory_hostname", s(name), Provenance::Trusted);
    let short = name.split('.').next().unwrap_or(name);
    magic.insert("inventory_hostname_short", s(short), Provenance::Trusted);
    magic.insert("group_names", list(&[]), Provenance::Trusted);
    BareHost { connection: Arc::new(connection), inventory: all.clone(), magic: Arc::new(magic) }
}

/// `hash_behaviour = merge` across a host's variable layers, as ansible's `combine_vars`
/// merges each layer into the ones below it: every name whose value is a mapping in more
/// than one layer in a row (a non-mapping value starts afresh) gets its merged mapping, in a
/// layer put over them. What a managed host said in any of them makes the merge the host's.
fn merged_dicts(scope: &Scope) -> Option<Arc<Layer>> {
    let mut merged: indexmap::IndexMap<&str, (Mapping, Provenance, usize)> =
        indexmap::IndexMap::new();
    for layer in scope.layers() {
        for name in layer.names() {
            let Some(binding) = layer.get(name) else { continue };
            let Some(map) = binding.node().as_map() else {
                merged.shift_remove(name);
                continue;
            };
            let provenance = binding.provenance().clone();
            match merged.get_mut(name) {
                Some((acc, prov, count)) => {
                    *acc = tack_loader::vars::merge_hash(acc, map);
                    if !matches!(provenance, Provenance::Trusted) {
                        *prov = provenance;
                    }
                    *count += 1;
                }
                None => {
                    merged.insert(name, (map.clone(), provenance, 1));
                }
            }
        }
    }
    let mut layer = Layer::new();
    for (name, (map, provenance, count)) in merged {
        if count > 1 {
            layer.insert(name, Node::bare(Value::Map(map)), provenance);
        }
    }
    (!layer.is_empty()).then(|| Arc::new(layer))
}

/// What the play's variables take from the inventory: each host's inventory variables and
/// magic names, the hosts' order and `groups`.
struct InventoryView {
    inventory_vars: BTreeMap<String, Arc<Layer>>,
    host_order: Vec<String>,
    groups: Node,
    host_magic: BTreeMap<String, Arc<Layer>>,
    /// Per host, the address names a running task sees where no variable set them.
    connection_magic: BTreeMap<String, Arc<Layer>>,
    /// What a host outside the inventory has of it: the `all` group's variables.
    outside_vars: Arc<Layer>,
}

impl InventoryView {
    fn new(
        inventory: &Inventory,
        loader: &DataLoader,
        dirs: &[PathBuf],
    ) -> Result<InventoryView, Diagnostic> {
        let data = inventory.data();
        let mut inventory_vars = BTreeMap::new();
        let mut host_magic = BTreeMap::new();
        let mut connection_magic = BTreeMap::new();
        let mut host_order = Vec::new();
        let mut groups = Mapping::new();
        for gid in data.group_ids() {
            let group = data.group(gid);
            let names: Vec<String> =
                data.group_hosts(gid).into_iter().map(|h| data.host(h).name.clone()).collect();
            groups.insert(s(&group.name), list(&names));
        }
        // The implicit localhost has variables too, once a play named it.
        for hid in data.host_ids().chain(data.implicit_localhost()) {
            let host = data.host(hid);
            let vars = inventory.host_vars(loader, hid, dirs)?;
            // The play context's remote address: the host's `ansible_host` (or the older
            // `ansible_ssh_host`), else its address (the implicit localhost's is 127.0.0.1).
            let address = vars
                .get("ansible_host")
                .or_else(|| vars.get("ansible_ssh_host"))
                .cloned()
                .unwrap_or_else(|| s(if host.implicit { "127.0.0.1" } else { &host.name }));
            let mut connection = Layer::new();
            connection.insert("ansible_host", address.clone(), Provenance::Trusted);
            connection.insert("ansible_ssh_host", address, Provenance::Trusted);
            connection_magic.insert(host.name.clone(), Arc::new(connection));
            inventory_vars.insert(
                host.name.clone(),
                Arc::new(Layer::from_mapping(&vars, Provenance::Trusted)),
            );
            let mut magic = Layer::new();
            magic.insert("inventory_hostname", s(&host.name), Provenance::Trusted);
            let short = host.name.split('.').next().unwrap_or(&host.name);
            magic.insert("inventory_hostname_short", s(short), Provenance::Trusted);
            let mut names: Vec<String> = host
                .groups
                .iter()
                .map(|g| data.group(*g).name.clone())
                .filter(|n| n != "all")
                .collect();
            names.sort();
            magic.insert("group_names", list(&names), Provenance::Trusted);
            host_magic.insert(host.name.clone(), Arc::new(magic));
            // `hostvars` lists only the inventory's hosts, though it answers for localhost.
            if !host.implicit {
                host_order.push(host.name.clone());
            }
        }
        let outside = inventory.outside_host_vars(loader, dirs)?;
        Ok(InventoryView {
            outside_vars: Arc::new(Layer::from_mapping(&outside, Provenance::Trusted)),
            inventory_vars,
            host_order,
            groups: Node::bare(Value::Map(groups)),
            host_magic,
            connection_magic,
        })
    }
}

impl PlayScope {
    fn view(&self) -> Arc<InventoryView> {
        match self.view.read() {
            Ok(view) => view.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reads the inventory's hosts, groups and variables again after a task changed it;
    /// the next `set_play_batch` then publishes the new `groups`.
    pub(crate) fn set_inventory(
        &self,
        inventory: &Inventory,
        loader: &DataLoader,
    ) -> Result<(), Diagnostic> {
        let view = InventoryView::new(inventory, loader, &self.dirs)?;
        self.versions.shared_changed();
        if let Ok(mut slot) = self.view.write() {
            *slot = Arc::new(view);
        }
        Ok(())
    }
}

/// `hostvars`: every inventory host's variables, as the play sees them now.
struct HostVarsView(Arc<PlayScope>);

impl HostVars for HostVarsView {
    fn hosts(&self) -> Vec<String> {
        self.0.versions.hostvars_read();
        self.0.view().host_order.clone()
    }

    fn host_scope(&self, host: &str) -> Option<Scope> {
        self.0.versions.hostvars_read();
        self.0.hostvars_scope(host)
    }
}

/// The facts rung of a host nothing was gathered for: `ansible_facts: {}` (said by no one,
/// but facts are the host's, so it is marked as such).
fn no_facts_layer() -> Layer {
    let mut layer = Layer::new();
    layer.insert("ansible_facts", Node::bare(Value::Map(Mapping::new())), Provenance::ManagedHost);
    layer
}

/// A host's facts as variables: `ansible_facts` (names without the `ansible_` prefix), and
/// each fact under its own name as well unless `inject` is `Some(false)`
/// (`INJECT_FACTS_AS_VARS`; at its default, `None`, with ansible's deprecation when read).
/// Everything in it was said by the host.
pub(crate) fn facts_layer(facts: &Mapping, inject: Option<bool>) -> Layer {
    let mut namespaced = Mapping::new();
    let mut layer = Layer::new();
    for (k, v) in facts.iter() {
        let name = tack_yaml::pyrepr::str(&k.value);
        // `namespace_facts`: every `ansible_` prefix goes but `ansible_local`'s.
        let short = match name.strip_prefix("ansible_") {
            Some(short) if name != "ansible_local" => short,
            _ => &name,
        };
        namespaced.insert(s(short), v.clone());
        if inject == Some(false) {
            continue;
        }
        match name.as_str() {
            // The gathering's own mark lives in `ansible_facts` only.
            "_ansible_facts_gathered" => {}
            // `clean_facts`: in `ansible_facts`, never a top-level variable.
            _ if restricted_facts::is_restricted(&name) => {}
            // Local facts are a variable of their own, read without the top-level warning.
            "ansible_local" => layer.insert(&name, v.clone(), Provenance::ManagedHost),
            _ if inject == Some(true) => layer.insert(&name, v.clone(), Provenance::ManagedHost),
            // ansible tags the value itself with the deprecation, and a bool or None cannot
            // carry a tag: reading `ansible_fips` says nothing.
            _ if matches!(v.value, Value::Bool(_) | Value::Null) => {
                layer.insert(&name, v.clone(), Provenance::ManagedHost)
            }
            _ => layer.insert_deprecated(
                name.clone(),
                v.clone(),
                Provenance::ManagedHost,
                tack_template::Deprecation::top_level_fact(),
            ),
        }
    }
    layer.insert("ansible_facts", Node::bare(Value::Map(namespaced)), Provenance::ManagedHost);
    layer
}
