//! `group_vars/` and `host_vars/`: ansible's `host_group_vars` vars plugin, and the layers a
//! host's variables are merged from.
//!
//! Next to each inventory source (its directory, or the directory itself for a directory
//! source) and next to the playbook, `group_vars/NAME` and `host_vars/NAME` are read with
//! [`DataLoader::find_vars_files`] (bare name, `.yml`, `.yaml`, `.json`, or a directory of
//! files). A file that is empty is skipped; one that is not a mapping is an error naming it.
//!
//! [`VarLayer`] names the precedence layers in ansible's order, lowest first; the merged view
//! is those layers combined in that order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use tack_diag::Diagnostic;
use tack_loader::{DataLoader, HashBehaviour, combine_vars, paths};
use tack_yaml::{Mapping, Value};

/// The variable layers of a host that come from the inventory, lowest precedence first
/// (ansible's `VARIABLE_PRECEDENCE` entries, then the host layers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarLayer {
    /// `all`'s variables from inventory files and scripts (`all_inventory`).
    AllInventory,
    /// The host's other groups' variables from inventory files and scripts, merged by depth,
    /// priority and name (`groups_inventory`).
    GroupsInventory,
    /// `group_vars/all` next to the inventory sources (`all_plugins_inventory`).
    AllInventoryFiles,
    /// `group_vars/all` next to the playbook (`all_plugins_play`).
    AllPlaybookFiles,
    /// `group_vars/<group>` next to the inventory sources (`groups_plugins_inventory`).
    GroupsInventoryFiles,
    /// `group_vars/<group>` next to the playbook (`groups_plugins_play`).
    GroupsPlaybookFiles,
    /// The host's variables from inventory files and scripts.
    HostInventory,
    /// `host_vars/<host>` next to the inventory sources.
    HostInventoryFiles,
    /// `host_vars/<host>` next to the playbook.
    HostPlaybookFiles,
}

impl VarLayer {
    /// ansible's default `VARIABLE_PRECEDENCE` followed by the host layers.
    pub const DEFAULT_ORDER: [VarLayer; 9] = [
        VarLayer::AllInventory,
        VarLayer::GroupsInventory,
        VarLayer::AllInventoryFiles,
        VarLayer::AllPlaybookFiles,
        VarLayer::GroupsInventoryFiles,
        VarLayer::GroupsPlaybookFiles,
        VarLayer::HostInventory,
        VarLayer::HostInventoryFiles,
        VarLayer::HostPlaybookFiles,
    ];

    /// The `VARIABLE_PRECEDENCE` entry naming this layer, for the group layers.
    pub fn setting_name(self) -> Option<&'static str> {
        Some(match self {
            VarLayer::AllInventory => "all_inventory",
            VarLayer::GroupsInventory => "groups_inventory",
            VarLayer::AllInventoryFiles => "all_plugins_inventory",
            VarLayer::AllPlaybookFiles => "all_plugins_play",
            VarLayer::GroupsInventoryFiles => "groups_plugins_inventory",
            VarLayer::GroupsPlaybookFiles => "groups_plugins_play",
            _ => return None,
        })
    }
}

/// Whose variables a `*_vars` directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entity<'a> {
    Host(&'a str),
    Group(&'a str),
}

impl Entity<'_> {
    fn name(&self) -> &str {
        match self {
            Entity::Host(n) | Entity::Group(n) => n,
        }
    }
}

/// What `vars_from_path` found per directory and entity, so a thousand hosts in one group read
/// and merge that group's files once (ansible caches the file list and the parsed files too).
#[derive(Debug, Default)]
pub struct VarsCache {
    found: Mutex<HashMap<(PathBuf, bool, String), Mapping>>,
}

impl VarsCache {
    fn get(&self, key: &(PathBuf, bool, String)) -> Option<Mapping> {
        self.found.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
    }

    fn put(&self, key: (PathBuf, bool, String), vars: Mapping) {
        self.found.lock().unwrap_or_else(PoisonError::into_inner).insert(key, vars);
    }
}

/// The `host_group_vars` plugin for one directory: the entities' files merged in order.
pub fn vars_from_path(
    loader: &DataLoader,
    path: &Path,
    entities: &[Entity<'_>],
    behaviour: HashBehaviour,
    cache: &VarsCache,
) -> Result<Mapping, Diagnostic> {
    let mut data = Mapping::new();
    for entity in entities {
        let is_host = matches!(entity, Entity::Host(_));
        let key = (path.to_path_buf(), is_host, entity.name().to_string());
        let found = match cache.get(&key) {
            Some(found) => found,
            None => {
                let found = entity_vars(loader, path, entity, behaviour)?;
                cache.put(key, found.clone());
                found
            }
        };
        if !found.is_empty() {
            data = combine_vars(&data, &found, behaviour);
        }
    }
    Ok(data)
}

/// One entity's `group_vars`/`host_vars` files under `path`'s directory, merged in order.
fn entity_vars(
    loader: &DataLoader,
    path: &Path,
    entity: &Entity<'_>,
    behaviour: HashBehaviour,
) -> Result<Mapping, Diagnostic> {
    let mut data = Mapping::new();
    let Some(base) = paths::basedir(&path.to_string_lossy()) else { return Ok(data) };
    let base = paths::realpath(&base);
    let name = entity.name();
    // Host names such as chroot paths are not file names.
    if name.starts_with('/') {
        return Ok(data);
    }
    let subdir = match entity {
        Entity::Host(_) => "host_vars",
        Entity::Group(_) => "group_vars",
    };
    let dir = base.join(subdir);
    if !dir.exists() {
        return Ok(data);
    }
    if !dir.is_dir() {
        tack_diag::warn(&Diagnostic::new(format!(
            "Found {subdir} that is not a directory, skipping: {}",
            dir.display()
        )));
        return Ok(data);
    }
    for file in loader.find_vars_files(&dir, name) {
        let flatten = |d: Diagnostic| Diagnostic::new(d.brief()).parser();
        let loaded = loader.load_file(&file).map_err(|e| flatten(e.to_diagnostic()))?;
        if !tack_loader::vars::is_truthy(&loaded) {
            continue;
        }
        let Value::Map(map) = &loaded.value else {
            return Err(flatten(Diagnostic::caused_by(
                format!("Could not process {}.", crate::pyrepr::repr_str(&file.to_string_lossy())),
                None,
                Diagnostic::new(format!(
                    "failed to combine variables, expected dicts but got a 'dict' and a '{}'.",
                    tack_loader::vars::loaded_type_name(&loaded)
                )),
            )));
        };
        data = combine_vars(&data, map, behaviour);
    }
    Ok(data)
}

/// The directory whose `group_vars`/`host_vars` belong to an inventory source, or `None` for a
/// host list.
pub fn source_vars_dir(source: &str) -> Option<PathBuf> {
    let path = Path::new(source);
    if source.contains(',') && !path.exists() {
        return None;
    }
    if path.is_dir() {
        return Some(path.to_path_buf());
    }
    Some(PathBuf::from(paths::dirname(source)))
}

/// `get_vars_from_inventory_sources`: each source's directory in turn.
pub fn vars_from_inventory_sources(
    loader: &DataLoader,
    sources: &[String],
    entities: &[Entity<'_>],
    behaviour: HashBehaviour,
    cache: &VarsCache,
) -> Result<Mapping, Diagnostic> {
    let mut data = Mapping::new();
    for source in sources {
        let Some(dir) = source_vars_dir(source) else { continue };
        let found = vars_from_path(loader, &dir, entities, behaviour, cache)?;
        if !found.is_empty() {
            data = combine_vars(&data, &found, behaviour);
        }
    }
    Ok(data)
}
