//! The inventory model: hosts and groups with ansible's membership rules (`inventory/data.py`,
//! `group.py`, `host.py`).
//!
//! Hosts and groups keep the order they were first seen. A group knows its direct hosts, its
//! children and parents, its depth (longest path from `all`) and priority; a host knows every
//! group it belongs to, ancestors included. [`InventoryData::reconcile`] applies ansible's rules
//! after all sources are read: a group with no parent goes under `all`, a host in no other group
//! goes under `ungrouped`, and is taken out of `ungrouped` once it is in another group.
//!
//! The implicit `localhost` (a pattern naming `localhost`, `127.0.0.1` or `::1` when no such host
//! was defined) is kept apart: it is not listed among the hosts and `all` does not match it.
//!
//! This module only holds data; it reads no files and knows nothing of patterns or group_vars.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use tack_diag::{Diagnostic, Origin};
use tack_loader::{HashBehaviour, combine_vars};
use tack_yaml::{Mapping, Node, Value};

/// The names that mean the control machine (`C.LOCALHOST`).
pub const LOCALHOST_NAMES: &[&str] = &["127.0.0.1", "localhost", "::1"];

/// A host, by position. The implicit localhost has its own id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub(crate) u32);

/// A group, by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub(crate) u32);

impl HostId {
    pub(crate) const IMPLICIT_LOCALHOST: HostId = HostId(u32::MAX);
}

#[derive(Clone, Debug)]
pub struct Host {
    pub name: String,
    /// Variables set by inventory sources (`ansible_port`, inline vars, `inventory_file`, ...).
    pub vars: Mapping,
    /// Every group the host is in, ancestors included, in the order ansible records them.
    pub groups: Vec<GroupId>,
    /// The implicit localhost.
    pub implicit: bool,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    /// Variables set by inventory sources (without `ansible_group_priority`, kept as
    /// [`Group::priority`]).
    pub vars: Mapping,
    /// Hosts directly in the group, in order of addition.
    pub hosts: Vec<HostId>,
    pub children: Vec<GroupId>,
    pub parents: Vec<GroupId>,
    pub depth: u32,
    pub priority: i64,
}

/// What ansible does with group names that are not valid variable names
/// (`TRANSFORM_INVALID_GROUP_CHARS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransformGroupChars {
    /// Keep the name and warn (ansible's default).
    #[default]
    Never,
    /// Keep the name silently.
    Ignore,
    /// Replace the characters with `_` and warn.
    Always,
    /// Replace the characters silently.
    Silently,
}

/// An inventory-building failure, in ansible's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct DataError(pub String);

/// Hosts and groups.
#[derive(Debug, Clone)]
pub struct InventoryData {
    hosts: Vec<Host>,
    host_index: HashMap<String, HostId>,
    groups: Vec<Group>,
    group_index: HashMap<String, GroupId>,
    /// The first host defined under a localhost name.
    localhost: Option<HostId>,
    implicit_localhost: OnceLock<Host>,
    /// The source being parsed: new hosts record it as `inventory_file`.
    pub(crate) current_source: Option<String>,
    pub(crate) hash_behaviour: HashBehaviour,
    pub(crate) transform_group_chars: TransformGroupChars,
    /// The interpreter the implicit localhost gets as `ansible_python_interpreter`.
    pub(crate) localhost_python: String,
    /// What ansible's inventory manager says while reading the sources, from `-v` count
    /// `.0` on (see [`crate::Inventory::verbose_notes`]).
    pub(crate) notes: Vec<(u8, String)>,
}

fn invalid_name_chars(name: &str) -> bool {
    let mut chars = name.chars();
    let first_bad =
        chars.next().is_some_and(|c| c.is_numeric() || !(c.is_alphanumeric() || c == '_'));
    first_bad || name.chars().any(|c| !(c.is_alphanumeric() || c == '_'))
}

/// `validate_variable_name`: ASCII identifiers that are not Jinja2's reserved names.
pub(crate) fn is_valid_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(name, "true" | "false" | "none" | "True" | "False" | "None" | "not")
}

impl InventoryData {
    pub fn new(hash_behaviour: HashBehaviour, transform_group_chars: TransformGroupChars) -> Self {
        let mut data = InventoryData {
            hosts: Vec::new(),
            host_index: HashMap::new(),
            groups: Vec::new(),
            group_index: HashMap::new(),
            localhost: None,
            implicit_localhost: OnceLock::new(),
            current_source: None,
            hash_behaviour,
            transform_group_chars,
            localhost_python: "/usr/bin/python3".into(),
            notes: Vec::new(),
        };
        for name in ["all", "ungrouped"] {
            data.insert_group(name.to_string());
        }
        // Two fresh groups cannot form a loop.
        let _ = data.add_child_group(GroupId(0), GroupId(1));
        data
    }

    pub fn all(&self) -> GroupId {
        GroupId(0)
    }

    pub fn ungrouped(&self) -> GroupId {
        GroupId(1)
    }

    pub fn host(&self, id: HostId) -> &Host {
        if id == HostId::IMPLICIT_LOCALHOST {
            // Ids for it are only handed out after it was created.
            return self
                .implicit_localhost
                .get_or_init(|| self.make_implicit_localhost("localhost"));
        }
        &self.hosts[id.0 as usize]
    }

    pub fn group(&self, id: GroupId) -> &Group {
        &self.groups[id.0 as usize]
    }

    /// Every defined host (not the implicit localhost), in the order first seen.
    pub fn host_ids(&self) -> impl ExactSizeIterator<Item = HostId> {
        (0..self.hosts.len() as u32).map(HostId)
    }

    /// The implicit localhost's id, once a pattern or lookup created it.
    pub fn implicit_localhost(&self) -> Option<HostId> {
        self.implicit_localhost.get().map(|_| HostId::IMPLICIT_LOCALHOST)
    }

    /// Every group, in the order first seen.
    pub fn group_ids(&self) -> impl ExactSizeIterator<Item = GroupId> {
        (0..self.groups.len() as u32).map(GroupId)
    }

    pub fn find_host(&self, name: &str) -> Option<HostId> {
        self.host_index.get(name).copied()
    }

    pub fn find_group(&self, name: &str) -> Option<GroupId> {
        self.group_index.get(name).copied()
    }

    /// `get_host`: a defined host, or for a localhost name the first localhost-like host or the
    /// implicit localhost (created on first use, named as first asked).
    pub fn get_host(&self, name: &str) -> Option<HostId> {
        if let Some(id) = self.find_host(name) {
            return Some(id);
        }
        if !LOCALHOST_NAMES.contains(&name) {
            return None;
        }
        if let Some(id) = self.localhost {
            return Some(id);
        }
        self.implicit_localhost.get_or_init(|| self.make_implicit_localhost(name));
        Some(HostId::IMPLICIT_LOCALHOST)
    }

    fn make_implicit_localhost(&self, name: &str) -> Host {
        let mut vars = Mapping::new();
        let s = |t: &str| Node::bare(Value::Str(t.to_string()));
        vars.insert(s("ansible_python_interpreter"), s(&self.localhost_python));
        vars.insert(s("ansible_connection"), s("local"));
        // ansible merges `all`'s inventory vars under the implicit host's own when it
        // reconciles; the variable layers add them for every host anyway, so the result is the
        // same and the host keeps only its own.
        Host { name: name.to_string(), vars, groups: Vec::new(), implicit: true }
    }

    fn insert_group(&mut self, name: String) -> GroupId {
        let id = GroupId(self.groups.len() as u32);
        self.group_index.insert(name.clone(), id);
        self.groups.push(Group {
            name,
            vars: Mapping::new(),
            hosts: Vec::new(),
            children: Vec::new(),
            parents: Vec::new(),
            depth: 0,
            priority: 1,
        });
        id
    }

    /// The name a new group gets (`to_safe_group_name`), warning as ansible does.
    pub(crate) fn safe_group_name(&self, name: &str) -> String {
        if !invalid_name_chars(name) {
            return name.to_string();
        }
        let replace = || {
            name.chars()
                .map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' })
                .collect::<String>()
        };
        match self.transform_group_chars {
            TransformGroupChars::Never => {
                tack_diag::warn(&Diagnostic::new(
                    "Invalid characters were found in group names but not replaced, use -vvvv to see details",
                ));
                name.to_string()
            }
            TransformGroupChars::Ignore => name.to_string(),
            TransformGroupChars::Always => {
                tack_diag::warn(&Diagnostic::new(
                    "Invalid characters were found in group names and automatically replaced, use -vvvv to see details",
                ));
                fix_leading_digit(replace())
            }
            TransformGroupChars::Silently => fix_leading_digit(replace()),
        }
    }

    /// `add_group`: the group's id, creating it when new.
    pub fn add_group(&mut self, name: &str) -> Result<GroupId, DataError> {
        if name.is_empty() {
            return Err(DataError(format!("Invalid empty/false group name provided: {name}")));
        }
        if let Some(id) = self.find_group(name) {
            return Ok(id);
        }
        let safe = self.safe_group_name(name);
        if let Some(id) = self.find_group(&safe) {
            return Ok(id);
        }
        Ok(self.insert_group(safe))
    }

    /// `add_host`: the host's id, creating it (with `ansible_port` when given) when new, and
    /// adding it to `group` when given. The port of a host seen before is ignored, as ansible
    /// ignores it.
    pub fn add_host(
        &mut self,
        name: &str,
        group: Option<GroupId>,
        port: Option<u64>,
    ) -> Result<HostId, DataError> {
        if name.is_empty() {
            return Err(DataError(format!("Invalid empty host name provided: {name}")));
        }
        let id = match self.find_host(name) {
            Some(id) => id,
            None => self.insert_host(name, port),
        };
        if let Some(group) = group {
            self.add_host_to_group(group, id);
        }
        Ok(id)
    }

    fn insert_host(&mut self, name: &str, port: Option<u64>) -> HostId {
        let id = HostId(self.hosts.len() as u32);
        let mut vars = Mapping::new();
        let key = |k: &str| Node::bare(Value::Str(k.to_string()));
        if let Some(port) = port.filter(|p| *p != 0) {
            let value =
                i64::try_from(port).map(Value::Int).unwrap_or(Value::BigInt(port.to_string()));
            vars.insert(key("ansible_port"), Node::bare(value));
        }
        let (file, dir) = match &self.current_source {
            Some(source) => {
                let dir = tack_loader::paths::basedir(source)
                    .map(|d| Value::Str(d.to_string_lossy().into_owned()))
                    .unwrap_or(Value::Null);
                (Value::Str(source.clone()), dir)
            }
            None => (Value::Null, Value::Null),
        };
        vars.insert(key("inventory_file"), Node::bare(file));
        vars.insert(key("inventory_dir"), Node::bare(dir));
        self.hosts.push(Host { name: name.to_string(), vars, groups: Vec::new(), implicit: false });
        self.host_index.insert(name.to_string(), id);
        if LOCALHOST_NAMES.contains(&name) {
            match self.localhost {
                None => {
                    self.localhost = Some(id);
                    self.notes.push((4, format!("Set default localhost to {name}")));
                }
                Some(first) => tack_diag::warn(&Diagnostic::new(format!(
                    "A duplicate localhost-like entry was found ({name}). First found localhost was {}",
                    self.host(first).name
                ))),
            }
        }
        id
    }

    /// `Group.add_host`: also records the group and its ancestors on the host.
    pub(crate) fn add_host_to_group(&mut self, group: GroupId, host: HostId) -> bool {
        // A host in the group has the group among its own (short) list: only then is the
        // group's (long) list searched, so a range of many hosts is added in linear time.
        let listed = if host == HostId::IMPLICIT_LOCALHOST {
            self.implicit_localhost.get().is_none_or(|h| h.groups.contains(&group))
        } else {
            self.hosts[host.0 as usize].groups.contains(&group)
        };
        if listed && self.groups[group.0 as usize].hosts.contains(&host) {
            return false;
        }
        self.groups[group.0 as usize].hosts.push(host);
        let mut additions = self.ancestors(group);
        additions.push(group);
        let host = if host == HostId::IMPLICIT_LOCALHOST {
            // Only handed out once created (`get_host`), so it is there to change.
            let Some(implicit) = self.implicit_localhost.get_mut() else { return true };
            implicit
        } else {
            &mut self.hosts[host.0 as usize]
        };
        for g in additions {
            if !host.groups.contains(&g) {
                host.groups.push(g);
            }
        }
        true
    }

    /// Removes a host from a group and from the ancestors no other group of the host shares
    /// (`Group.remove_host`), never from `all`.
    fn remove_host_from_group(&mut self, group: GroupId, host: HostId) {
        self.groups[group.0 as usize].hosts.retain(|h| *h != host);
        self.remove_group_from_host(host, group);
    }

    fn remove_group_from_host(&mut self, host: HostId, group: GroupId) {
        let groups = &mut self.hosts[host.0 as usize].groups;
        let Some(pos) = groups.iter().position(|g| *g == group) else { return };
        groups.remove(pos);
        for old in self.ancestors(group) {
            if old == self.all() {
                continue;
            }
            let still_needed = self.hosts[host.0 as usize]
                .groups
                .iter()
                .any(|g| self.ancestors(*g).contains(&old));
            if !still_needed {
                self.remove_group_from_host(host, old);
            }
        }
    }

    /// `add_child`: puts a host or a group (looked up by name, groups first) under `parent`.
    pub fn add_child(&mut self, parent: &str, child: &str) -> Result<bool, DataError> {
        let Some(parent_id) = self.find_group(parent) else {
            return Err(DataError(format!("{parent} is not a known group")));
        };
        if let Some(child_id) = self.find_group(child) {
            return self.add_child_group(parent_id, child_id);
        }
        if let Some(host) = self.find_host(child) {
            return Ok(self.add_host_to_group(parent_id, host));
        }
        Err(DataError(format!("{child} is not a known host nor group")))
    }

    /// `Group.add_child_group`, with ansible's loop checks and depth updates.
    pub fn add_child_group(&mut self, parent: GroupId, child: GroupId) -> Result<bool, DataError> {
        if parent == child {
            return Err(DataError("can't add group to itself".into()));
        }
        if self.group(parent).children.contains(&child) {
            return Ok(false);
        }
        let start_ancestors = self.ancestors(child);
        let mut new_ancestors = self.ancestors(parent);
        if new_ancestors.contains(&child) {
            return Err(DataError(format!(
                "Adding group '{}' as child to '{}' creates a recursive dependency loop.",
                self.group(child).name,
                self.group(parent).name
            )));
        }
        new_ancestors.push(parent);
        new_ancestors.retain(|g| !start_ancestors.contains(g));

        self.groups[parent.0 as usize].children.push(child);
        let depth = (self.group(parent).depth + 1).max(self.group(child).depth);
        self.groups[child.0 as usize].depth = depth;
        self.check_children_depth(child)?;

        let parent_name = self.group(parent).name.clone();
        let has_parent_named =
            self.group(child).parents.iter().any(|p| self.group(*p).name == parent_name);
        if !has_parent_named {
            self.groups[child.0 as usize].parents.push(parent);
            for host in self.group_hosts(child) {
                if host == HostId::IMPLICIT_LOCALHOST {
                    continue;
                }
                let groups = &mut self.hosts[host.0 as usize].groups;
                for g in &new_ancestors {
                    if !groups.contains(g) {
                        groups.push(*g);
                    }
                }
            }
        }
        Ok(true)
    }

    /// `_check_children_depth`: pushes depths down the tree, failing on a loop.
    fn check_children_depth(&mut self, group: GroupId) -> Result<(), DataError> {
        let start_depth = self.group(group).depth;
        let mut depth = start_depth;
        let mut seen: Vec<GroupId> = Vec::new();
        let mut unprocessed: Vec<GroupId> = self.group(group).children.clone();
        while !unprocessed.is_empty() {
            for g in &unprocessed {
                if !seen.contains(g) {
                    seen.push(*g);
                }
            }
            depth += 1;
            let mut next = Vec::new();
            for g in unprocessed {
                if self.group(g).depth < depth {
                    self.groups[g.0 as usize].depth = depth;
                    for c in &self.group(g).children {
                        if !next.contains(c) {
                            next.push(*c);
                        }
                    }
                }
            }
            unprocessed = next;
            if (depth - start_depth) as usize > seen.len() {
                return Err(DataError(format!(
                    "The group named '{}' has a recursive dependency loop.",
                    self.group(group).name
                )));
            }
        }
        Ok(())
    }

    /// Every ancestor of a group, nearest first.
    pub fn ancestors(&self, group: GroupId) -> Vec<GroupId> {
        self.walk(group, |g| &g.parents)
    }

    /// Every descendant of a group, nearest first.
    pub fn descendants(&self, group: GroupId) -> Vec<GroupId> {
        self.walk(group, |g| &g.children)
    }

    fn walk(&self, start: GroupId, rel: impl Fn(&Group) -> &Vec<GroupId>) -> Vec<GroupId> {
        let mut out: Vec<GroupId> = Vec::new();
        let mut layer: Vec<GroupId> = rel(self.group(start)).clone();
        while !layer.is_empty() {
            let mut next = Vec::new();
            for g in layer {
                if g == start || out.contains(&g) {
                    continue;
                }
                out.push(g);
                next.extend(rel(self.group(g)).iter().copied());
            }
            layer = next;
        }
        out
    }

    /// `Group.get_hosts`: the group's hosts and its descendants', each once, the group's own
    /// first; `all` never includes the implicit localhost.
    pub fn group_hosts(&self, group: GroupId) -> Vec<HostId> {
        let mut out: Vec<HostId> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut order = vec![group];
        order.extend(self.descendants(group));
        // Even once a `group_by` put the implicit localhost in one of `all`'s groups.
        let is_all = group == self.all();
        for g in order {
            for h in &self.group(g).hosts {
                if seen.insert(*h) && !(is_all && *h == HostId::IMPLICIT_LOCALHOST) {
                    out.push(*h);
                }
            }
        }
        out
    }

    /// `set_variable` on a host or group (groups first, as ansible looks them up).
    /// `ansible_group_priority` sets the group's priority; a mapping given for a key that
    /// holds a mapping is combined with it.
    pub fn set_variable(&mut self, entity: &str, key: Node, value: Node) -> Result<(), DataError> {
        let name = key.as_str().map(str::to_string).unwrap_or_default();
        if key.as_str().is_none() || !is_valid_variable_name(&name) {
            deprecate_invalid_name(&key);
        }
        let behaviour = self.hash_behaviour;
        if let Some(g) = self.find_group(entity) {
            if name == "ansible_group_priority" {
                self.set_priority(g, &value);
                return Ok(());
            }
            let vars = &mut self.groups[g.0 as usize].vars;
            set_in(vars, key, value, behaviour);
            return Ok(());
        }
        if let Some(h) = self.find_host(entity) {
            set_in(&mut self.hosts[h.0 as usize].vars, key, value, behaviour);
            return Ok(());
        }
        Err(DataError(format!("Could not identify group or host named {entity}")))
    }

    fn set_priority(&mut self, group: GroupId, value: &Node) {
        match python_int_of(value) {
            Ok(p) => self.groups[group.0 as usize].priority = p,
            Err(reason) => {
                let msg = format!(
                    "Invalid priority value '{}' for group '{}'.Setting priority to default value.",
                    crate::pyrepr::str_of(&value.value),
                    self.group(group).name
                );
                tack_diag::warn(&Diagnostic::caused_by(msg, None, Diagnostic::new(reason)));
            }
        }
    }

    /// `reconcile_inventory`: parentless groups go under `all`; hosts in no other group go
    /// under `ungrouped`, and leave it once they are in another group.
    pub fn reconcile(&mut self) -> Result<(), DataError> {
        self.current_source = None;
        let all = self.all();
        let ungrouped = self.ungrouped();
        for g in self.group_ids().collect::<Vec<_>>() {
            if g != all && self.ancestors(g).is_empty() {
                self.add_child_group(all, g)?;
            }
        }
        for h in self.host_ids().collect::<Vec<_>>() {
            let groups = self.host(h).groups.clone();
            if groups.contains(&ungrouped) {
                if groups.iter().any(|g| *g != all && *g != ungrouped) {
                    self.remove_host_from_group(ungrouped, h);
                }
            } else if groups.is_empty() || (groups.len() == 1 && groups[0] == all) {
                self.add_host_to_group(ungrouped, h);
            }
        }
        for h in self.host_ids() {
            let name = &self.host(h).name;
            if self.find_group(name).is_some() {
                tack_diag::warn(&Diagnostic::new(format!(
                    "Found both group and host with same name: {name}"
                )));
            }
        }
        Ok(())
    }

    /// Groups sorted as ansible merges their variables: by depth, then priority, then name.
    pub fn sort_groups(&self, groups: &[GroupId]) -> Vec<GroupId> {
        let mut sorted = groups.to_vec();
        sorted.sort_by(|a, b| {
            let (ga, gb) = (self.group(*a), self.group(*b));
            (ga.depth, ga.priority, &ga.name).cmp(&(gb.depth, gb.priority, &gb.name))
        });
        sorted
    }

    pub(crate) fn set_localhost_python(&mut self, python: String) {
        self.localhost_python = python;
    }
}

fn fix_leading_digit(name: String) -> String {
    // `^[\d\W]` matches a leading digit too; ansible replaces it like any other bad character.
    match name.chars().next() {
        Some(c) if c.is_numeric() => format!("_{}", &name[c.len_utf8()..]),
        _ => name,
    }
}

fn set_in(vars: &mut Mapping, key: Node, value: Node, behaviour: HashBehaviour) {
    let name = key.as_str().map(str::to_string);
    let existing_is_map =
        name.as_deref().and_then(|n| vars.get(n)).is_some_and(|v| v.as_map().is_some());
    if existing_is_map && value.as_map().is_some() {
        let mut single = Mapping::new();
        single.insert(key, value);
        *vars = combine_vars(vars, &single, behaviour);
    } else {
        vars.insert(key, value);
    }
}

/// ansible's deprecation for inventory variables whose names are not identifiers.
fn deprecate_invalid_name(key: &Node) {
    let msg = format!(
        "Accepting inventory variable with invalid name {}.",
        crate::pyrepr::repr(&key.value)
    );
    let diag = Diagnostic::at(msg, key.origin.clone()).with_help(
        "Variable names must be strings starting with a letter or underscore character, and \
         contain only letters, numbers and underscores.",
    );
    deprecate(diag, None);
}

/// A `[DEPRECATION WARNING]` for behaviour ansible-core 2.23 removes, raised by ansible-core
/// itself or by one of its plugins (`inventory plugin 'script'`). Whether deprecations show
/// at all is tack-diag's process-wide `deprecation_warnings` switch.
pub(crate) fn deprecate(mut diag: Diagnostic, plugin: Option<&str>) {
    let from = match plugin {
        Some(plugin) => format!("{plugin} in ansible-core"),
        None => "ansible-core".to_string(),
    };
    diag.message =
        format!("{} This feature will be removed from {from} version 2.23.", diag.message);
    tack_diag::deprecate_formatted(&diag);
}

/// `int(value)` as `Group.set_priority` applies it.
fn python_int_of(value: &Node) -> Result<i64, String> {
    match &value.value {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Float(x) if x.is_finite() => Ok(x.trunc() as i64),
        Value::Float(x) if x.is_nan() => Err("cannot convert float NaN to integer".into()),
        Value::Float(_) => Err("cannot convert float infinity to integer".into()),
        Value::Str(s) | Value::Unsafe(s) => tack_py::num::int(s).map_err(|e| match e {
            tack_py::num::IntError::Invalid(message) => message,
            tack_py::num::IntError::TooLarge => {
                format!("tack cannot hold a priority past 64-bit integers: {s}")
            }
        }),
        Value::Null => Err(
            "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"
                .into(),
        ),
        other => Err(format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            other.python_type()
        )),
    }
}

/// An origin for a value read from the current source at `line`.
pub(crate) fn line_origin(path: Option<&Arc<Path>>, line: u32) -> Option<Origin> {
    path.map(|p| Origin::new(p.clone(), line, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> InventoryData {
        InventoryData::new(HashBehaviour::Replace, TransformGroupChars::Ignore)
    }

    fn names(d: &InventoryData, ids: &[GroupId]) -> Vec<String> {
        ids.iter().map(|g| d.group(*g).name.clone()).collect()
    }

    #[test]
    fn reconcile_places_groups_and_hosts() {
        let mut d = data();
        let web = d.add_group("web").unwrap();
        d.add_host("a", Some(web), None).unwrap();
        let b = d.add_host("b", Some(d.ungrouped()), Some(2222)).unwrap();
        let c = d.add_host("c", Some(d.ungrouped()), None).unwrap();
        d.add_child("web", "c").unwrap();
        d.reconcile().unwrap();
        assert_eq!(names(&d, &d.group(d.all()).children), ["ungrouped", "web"]);
        assert_eq!(d.group(d.ungrouped()).hosts, vec![b]);
        assert!(!d.host(c).groups.contains(&d.ungrouped()));
        assert_eq!(d.host(b).vars.get("ansible_port").unwrap().value, Value::Int(2222));
    }

    #[test]
    fn depth_and_loops() {
        let mut d = data();
        let a = d.add_group("a").unwrap();
        let b = d.add_group("b").unwrap();
        let c = d.add_group("c").unwrap();
        d.add_child_group(a, b).unwrap();
        d.add_child_group(b, c).unwrap();
        assert_eq!(d.group(c).depth, 2);
        assert_eq!(
            d.add_child_group(c, a).unwrap_err().0,
            "Adding group 'a' as child to 'c' creates a recursive dependency loop."
        );
        assert_eq!(d.add_child_group(a, a).unwrap_err().0, "can't add group to itself");
        assert_eq!(names(&d, &d.sort_groups(&[c, a, b])), ["a", "b", "c"]);
    }

    #[test]
    fn implicit_localhost_is_apart() {
        let mut d = data();
        d.add_host("x", None, None).unwrap();
        d.reconcile().unwrap();
        let lh = d.get_host("127.0.0.1").unwrap();
        assert!(d.host(lh).implicit);
        assert_eq!(d.host(lh).name, "127.0.0.1");
        assert_eq!(d.get_host("localhost"), Some(lh));
        assert!(!d.group_hosts(d.all()).contains(&lh));
        assert_eq!(d.host_ids().len(), 1);
    }

    #[test]
    fn priority_is_kept_apart_from_vars() {
        let mut d = data();
        d.add_group("g").unwrap();
        let k = |s: &str| Node::bare(Value::Str(s.into()));
        d.set_variable("g", k("ansible_group_priority"), k("10")).unwrap();
        let g = d.find_group("g").unwrap();
        assert_eq!(d.group(g).priority, 10);
        assert!(d.group(g).vars.is_empty());
    }
}
