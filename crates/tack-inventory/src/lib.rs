//! Inventories as ansible-core 2.21 reads them, with no network: everything
//! `ansible-inventory` does before it prints.
//!
//! ```no_run
//! use tack_inventory::{Inventory, InventoryOptions};
//! use tack_loader::DataLoader;
//!
//! let loader = DataLoader::new(Default::default());
//! let mut inventory = Inventory::load(&loader, &["hosts.ini".into()], InventoryOptions::default())?;
//! inventory.restrict_to(Some("web*:!web03"))?;
//! for host in inventory.select("all")? {
//!     let vars = inventory.host_vars(&loader, host, &[])?;
//!     println!("{} {:?}", inventory.data().host(host).name, vars);
//! }
//! # Ok::<(), tack_diag::Diagnostic>(())
//! ```
//!
//! - Sources ([`sources`]): INI, YAML and TOML files, executable scripts, directories of those,
//!   comma-separated host lists; ansible's plugin order, warnings and errors.
//! - Model ([`InventoryData`]): hosts and groups in the order first seen, `all`/`ungrouped`
//!   rules, depth and priority, the implicit localhost.
//! - Variables ([`vars`]): `group_vars/` and `host_vars/` next to the sources and the
//!   playbook, as separate precedence layers ([`VarLayer`]) and merged.
//! - Patterns ([`pattern`]): `select` and `--limit`.
//!
//! The crate never prints except through `tack_diag`'s warning channel, never templates (a
//! `constructed` or `generator` source, or any plugin it has no native code for, goes to the
//! run's [`foreign::ForeignPlugins`]), and never decrypts inline `!vault` values.

mod address;
mod data;
mod dynamic;
pub mod foreign;
mod ini;
mod literal;
pub mod live;
pub mod pattern;
mod pyrepr;
mod script;
pub mod sources;
mod toml_source;
pub mod vars;
mod yaml_source;

use std::path::{Path, PathBuf};

use tack_diag::{Diagnostic, ErrorClass};
use tack_loader::{DataLoader, HashBehaviour, combine_vars};
use tack_yaml::{Mapping, Node, Value};

pub use address::{expand_hostname_range, is_ip_address, parse_address};
pub use data::{Group, GroupId, Host, HostId, InventoryData, LOCALHOST_NAMES, TransformGroupChars};
pub use dynamic::{AddGroup, AddHost};
pub use pattern::PatternMismatch;
pub use pyrepr::{VAULT_MASK, repr as python_repr, str_of as python_str};
pub use sources::{DEFAULT_HOST_LIST, SourceOptions};
pub use vars::{Entity, VarLayer};

/// A selected host.
pub type HostRef = HostId;

/// Variables ansible computes itself and `ansible-inventory` leaves out of what it prints
/// (`C.INTERNAL_STATIC_VARS`).
pub const INTERNAL_STATIC_VARS: &[&str] = &[
    "ansible_async_path",
    "ansible_collection_name",
    "ansible_config_file",
    "ansible_dependent_role_names",
    "ansible_diff_mode",
    "ansible_facts",
    "ansible_forks",
    "ansible_inventory_sources",
    "ansible_limit",
    "ansible_play_batch",
    "ansible_play_hosts",
    "ansible_play_hosts_all",
    "ansible_play_role_names",
    "ansible_playbook_python",
    "ansible_role_name",
    "ansible_role_names",
    "ansible_run_tags",
    "ansible_skip_tags",
    "ansible_verbosity",
    "ansible_version",
    "inventory_dir",
    "inventory_file",
    "inventory_hostname",
    "inventory_hostname_short",
    "groups",
    "group_names",
    "hostvars",
    "playbook_dir",
    "play_hosts",
    "role_name",
    "role_names",
    "role_path",
    "role_uuid",
];

/// Settings that change how an inventory is read and matched.
#[derive(Clone, Debug)]
pub struct InventoryOptions {
    pub sources: SourceOptions,
    /// `hash_behaviour`.
    pub hash_behaviour: HashBehaviour,
    /// `TRANSFORM_INVALID_GROUP_CHARS`.
    pub transform_group_chars: TransformGroupChars,
    /// `host_pattern_mismatch`.
    pub pattern_mismatch: PatternMismatch,
    /// The group layers' order (`VARIABLE_PRECEDENCE`); the host layers always follow.
    pub group_precedence: Vec<VarLayer>,
    /// `ansible_python_interpreter` of the implicit localhost. ansible uses the Python that
    /// runs it; tack has none, so the command decides (see its documentation).
    pub localhost_python: String,
}

impl Default for InventoryOptions {
    fn default() -> Self {
        InventoryOptions {
            sources: SourceOptions::default(),
            hash_behaviour: HashBehaviour::Replace,
            transform_group_chars: TransformGroupChars::Never,
            pattern_mismatch: PatternMismatch::Warning,
            group_precedence: VarLayer::DEFAULT_ORDER[..6].to_vec(),
            localhost_python: "/usr/bin/python3".into(),
        }
    }
}

/// A loaded inventory: its hosts and groups, the sources they came from, and the current
/// `--limit`.
#[derive(Debug)]
pub struct Inventory {
    data: InventoryData,
    sources: Vec<String>,
    limit: Option<Vec<String>>,
    options: InventoryOptions,
    vars_cache: vars::VarsCache,
}

/// A copy shares nothing with the original: the variable-file cache starts empty.
impl Clone for Inventory {
    fn clone(&self) -> Inventory {
        Inventory {
            data: self.data.clone(),
            sources: self.sources.clone(),
            limit: self.limit.clone(),
            options: self.options.clone(),
            vars_cache: vars::VarsCache::default(),
        }
    }
}

impl Inventory {
    /// Reads `sources` (as given to `-i`) in order.
    pub fn load(
        loader: &DataLoader,
        sources: &[String],
        options: InventoryOptions,
    ) -> Result<Inventory, Diagnostic> {
        let mut data = InventoryData::new(options.hash_behaviour, options.transform_group_chars);
        data.set_localhost_python(options.localhost_python.clone());
        sources::SourceReader::new(&mut data, loader, &options.sources)?.parse_sources(sources)?;
        Ok(Inventory {
            data,
            sources: sources.to_vec(),
            limit: None,
            options,
            vars_cache: vars::VarsCache::default(),
        })
    }

    /// An inventory of only these groups and their hosts (in order), as ansible's
    /// `inventory_hostnames` lookup builds one from the `groups` variable to match a pattern
    /// against. A name ansible's inventory would refuse is left out.
    pub fn from_groups(groups: &[(String, Vec<String>)], mismatch: PatternMismatch) -> Inventory {
        let options =
            InventoryOptions { pattern_mismatch: mismatch, ..InventoryOptions::default() };
        let mut data = InventoryData::new(options.hash_behaviour, options.transform_group_chars);
        for (group, hosts) in groups {
            let Ok(id) = data.add_group(group) else { continue };
            for host in hosts {
                let _ = data.add_host(host, Some(id), None);
            }
        }
        Inventory {
            data,
            sources: Vec::new(),
            limit: None,
            options,
            vars_cache: vars::VarsCache::default(),
        }
    }

    pub fn data(&self) -> &InventoryData {
        &self.data
    }

    /// The hosts and groups, to change during a run (`add_host`, `group_by`).
    pub fn data_mut(&mut self) -> &mut InventoryData {
        &mut self.data
    }

    /// `refresh_inventory`'s first half: the sources read again with the same options and
    /// the same `--limit` (what the run added is the caller's to apply again).
    pub fn reload(&self, loader: &DataLoader) -> Result<Inventory, Diagnostic> {
        let mut fresh = Inventory::load(loader, &self.sources, self.options.clone())?;
        fresh.limit = self.limit.clone();
        Ok(fresh)
    }

    /// The lines ansible's inventory manager and plugins show while reading the sources
    /// (`display.vvv`/`vvvv`), in order, each with the `-v` count it needs: the plugins
    /// declining or parsing each source, `setting up inventory plugins`, the default
    /// localhost. Only what [`Inventory::load`] read; a reload's are not kept here.
    pub fn verbose_notes(&self) -> &[(u8, String)] {
        &self.data.notes
    }

    /// The sources as given.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    pub fn options(&self) -> &InventoryOptions {
        &self.options
    }

    /// `subset`: limits every later [`Inventory::select`] to hosts matching `limit` (`None`
    /// removes the limit). `@file` terms read one pattern per line.
    pub fn restrict_to(&mut self, limit: Option<&str>) -> Result<(), Diagnostic> {
        self.limit = match limit {
            None => None,
            Some(l) => Some(pattern::limit_terms(l)?),
        };
        Ok(())
    }

    fn evaluator(&self) -> pattern::Evaluator<'_> {
        pattern::Evaluator { data: &self.data, mismatch: self.options.pattern_mismatch }
    }

    /// `get_hosts`: the hosts `pattern` selects within the current limit, each once, in
    /// inventory order.
    pub fn select(&self, pattern: &str) -> Result<Vec<HostRef>, Diagnostic> {
        self.select_terms(&pattern::split_host_pattern(pattern))
    }

    /// [`Inventory::select`] over terms already split (a play's `hosts:` list).
    pub fn select_terms(&self, terms: &[String]) -> Result<Vec<HostRef>, Diagnostic> {
        let eval = self.evaluator();
        let mut hosts = eval.evaluate(terms)?;
        if let Some(limit) = &self.limit {
            let allowed: std::collections::HashSet<HostId> =
                eval.evaluate(limit)?.into_iter().collect();
            hosts.retain(|h| allowed.contains(h));
        }
        Ok(pattern::dedupe(hosts))
    }

    fn group_entities(&self, groups: &[GroupId]) -> Vec<Entity<'_>> {
        groups.iter().map(|g| Entity::Group(&self.data.group(*g).name)).collect()
    }

    fn files_for(
        &self,
        loader: &DataLoader,
        entities: &[Entity<'_>],
        inventory: bool,
        playbook_dirs: &[PathBuf],
    ) -> Result<Mapping, Diagnostic> {
        let behaviour = self.options.hash_behaviour;
        if inventory {
            return vars::vars_from_inventory_sources(
                loader,
                &self.sources,
                entities,
                behaviour,
                &self.vars_cache,
            );
        }
        let mut data = Mapping::new();
        for dir in playbook_dirs {
            let found = vars::vars_from_path(loader, dir, entities, behaviour, &self.vars_cache)?;
            data = combine_vars(&data, &found, behaviour);
        }
        Ok(data)
    }

    /// A host's inventory variables layer by layer, lowest precedence first. `playbook_dirs`
    /// are the directories whose `group_vars/`/`host_vars/` count as the playbook's.
    pub fn host_var_layers(
        &self,
        loader: &DataLoader,
        host: HostRef,
        playbook_dirs: &[PathBuf],
    ) -> Result<Vec<(VarLayer, Mapping)>, Diagnostic> {
        let h = self.data.host(host);
        let all = self.data.all();
        let others: Vec<GroupId> = h.groups.iter().copied().filter(|g| *g != all).collect();
        let host_groups = self.data.sort_groups(&others);
        let mut order = self.options.group_precedence.clone();
        order.extend(&VarLayer::DEFAULT_ORDER[6..]);
        let mut layers = Vec::with_capacity(order.len());
        for layer in order {
            let vars = match layer {
                VarLayer::AllInventory => self.data.group(all).vars.clone(),
                VarLayer::GroupsInventory => {
                    let mut merged = Mapping::new();
                    for g in &host_groups {
                        merged = combine_vars(
                            &merged,
                            &self.data.group(*g).vars,
                            self.options.hash_behaviour,
                        );
                    }
                    merged
                }
                VarLayer::AllInventoryFiles => {
                    self.files_for(loader, &self.group_entities(&[all]), true, playbook_dirs)?
                }
                VarLayer::AllPlaybookFiles => {
                    self.files_for(loader, &self.group_entities(&[all]), false, playbook_dirs)?
                }
                VarLayer::GroupsInventoryFiles => {
                    self.files_for(loader, &self.group_entities(&host_groups), true, playbook_dirs)?
                }
                VarLayer::GroupsPlaybookFiles => self.files_for(
                    loader,
                    &self.group_entities(&host_groups),
                    false,
                    playbook_dirs,
                )?,
                VarLayer::HostInventory => h.vars.clone(),
                VarLayer::HostInventoryFiles => {
                    self.files_for(loader, &[Entity::Host(&h.name)], true, playbook_dirs)?
                }
                VarLayer::HostPlaybookFiles => {
                    self.files_for(loader, &[Entity::Host(&h.name)], false, playbook_dirs)?
                }
            };
            layers.push((layer, vars));
        }
        Ok(layers)
    }

    /// The inventory variables of a host the inventory does not have (ansible's bare
    /// `Host(name)`, a delegated name): the `all` group's, inline and from `group_vars/all`,
    /// as every host has them.
    pub fn outside_host_vars(
        &self,
        loader: &DataLoader,
        playbook_dirs: &[PathBuf],
    ) -> Result<Mapping, Diagnostic> {
        let all = self.data.all();
        let mut order = self.options.group_precedence.clone();
        order.extend(&VarLayer::DEFAULT_ORDER[6..]);
        let mut merged = Mapping::new();
        for layer in order {
            let vars = match layer {
                VarLayer::AllInventory => self.data.group(all).vars.clone(),
                VarLayer::AllInventoryFiles => {
                    self.files_for(loader, &self.group_entities(&[all]), true, playbook_dirs)?
                }
                VarLayer::AllPlaybookFiles => {
                    self.files_for(loader, &self.group_entities(&[all]), false, playbook_dirs)?
                }
                _ => continue,
            };
            merged = combine_vars(&merged, &vars, self.options.hash_behaviour);
        }
        Ok(merged)
    }

    /// A host's inventory variables merged in precedence order (what a play sees from the
    /// inventory, before facts, play variables and extra vars).
    pub fn host_vars(
        &self,
        loader: &DataLoader,
        host: HostRef,
        playbook_dirs: &[PathBuf],
    ) -> Result<Mapping, Diagnostic> {
        let mut merged = Mapping::new();
        for (_, layer) in self.host_var_layers(loader, host, playbook_dirs)? {
            merged = combine_vars(&merged, &layer, self.options.hash_behaviour);
        }
        Ok(merged)
    }

    /// A host's own variables: from inventory sources, then `host_vars/` next to the sources
    /// and next to `playbook_dir` (what `ansible-inventory --export` shows for a host).
    pub fn host_own_vars(
        &self,
        loader: &DataLoader,
        host: HostRef,
        playbook_dir: Option<&Path>,
    ) -> Result<Mapping, Diagnostic> {
        let h = self.data.host(host);
        let entity = [Entity::Host(&h.name)];
        let dirs: Vec<PathBuf> = playbook_dir.map(Path::to_path_buf).into_iter().collect();
        let behaviour = self.options.hash_behaviour;
        let mut vars = h.vars.clone();
        vars = combine_vars(&vars, &self.files_for(loader, &entity, true, &dirs)?, behaviour);
        vars = combine_vars(&vars, &self.files_for(loader, &entity, false, &dirs)?, behaviour);
        Ok(vars)
    }

    /// A group's own variables: from inventory sources, then `group_vars/` next to the sources
    /// and next to `playbook_dir`, with `ansible_group_priority` when it is not 1.
    pub fn group_own_vars(
        &self,
        loader: &DataLoader,
        group: GroupId,
        playbook_dir: Option<&Path>,
    ) -> Result<Mapping, Diagnostic> {
        let g = self.data.group(group);
        let entity = [Entity::Group(&g.name)];
        let dirs: Vec<PathBuf> = playbook_dir.map(Path::to_path_buf).into_iter().collect();
        let behaviour = self.options.hash_behaviour;
        let mut vars = g.vars.clone();
        vars = combine_vars(&vars, &self.files_for(loader, &entity, true, &dirs)?, behaviour);
        vars = combine_vars(&vars, &self.files_for(loader, &entity, false, &dirs)?, behaviour);
        if g.priority != 1 {
            vars.insert(
                Node::bare(Value::Str("ansible_group_priority".into())),
                Node::bare(Value::Int(g.priority)),
            );
        }
        Ok(vars)
    }

    /// A host by name as `--host` and `add_host` look it up, localhost names included.
    pub fn get_host(&self, name: &str) -> Option<HostRef> {
        self.data.get_host(name)
    }
}

/// Removes the variables ansible computes itself (as `ansible-inventory` does before printing).
pub fn remove_internal(vars: &mut Mapping) {
    for name in INTERNAL_STATIC_VARS {
        vars.remove(name);
    }
}

/// An options error (exit code 5) in ansible's words.
pub fn options_error(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(message).with_class(ErrorClass::Options)
}
