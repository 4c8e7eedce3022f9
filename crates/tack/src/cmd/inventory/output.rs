//! What `ansible-inventory` prints: the `--list` document, `--host` variables and the
//! `--graph` tree, built from a loaded inventory exactly as ansible's `InventoryCLI` builds them
//! (which groups appear, which keys are dropped when empty, which variables each view shows).

use std::collections::HashSet;
use std::path::PathBuf;

use tack_diag::{Diagnostic, ErrorClass};
use tack_inventory::{GroupId, HostId, Inventory, python_str, remove_internal};
use tack_loader::{DataLoader, HashBehaviour, combine_vars};
use tack_yaml::{JsonOptions, Mapping, Node, Value, to_json};

pub(super) struct View<'a> {
    pub inventory: &'a Inventory,
    pub loader: &'a DataLoader,
    pub extra_vars: &'a Mapping,
    pub export: bool,
    /// `--playbook-dir`, absolute.
    pub playbook_dir: Option<PathBuf>,
}

fn s(text: &str) -> Node {
    Node::bare(Value::Str(text.to_string()))
}

fn map_node(map: Mapping) -> Node {
    Node::bare(Value::Map(map))
}

impl View<'_> {
    /// `_get_host_variables`: with `--export` the host's own variables, otherwise everything
    /// the host sees (group and host layers, then extra vars), internal names removed.
    pub(super) fn host_variables(&self, host: HostId) -> Result<Mapping, Diagnostic> {
        let mut vars = if self.export {
            self.inventory.host_own_vars(self.loader, host, self.playbook_dir.as_deref())?
        } else {
            // Without --playbook-dir ansible takes the current directory as the playbook's.
            let basedir = vec![self.loader.basedir().to_path_buf()];
            let merged = self.inventory.host_vars(self.loader, host, &basedir)?;
            let merged = combine_vars(&merged, self.extra_vars, HashBehaviour::Replace);
            tack_loader::vars::warn_if_reserved(&merged);
            merged
        };
        remove_internal(&mut vars);
        Ok(vars)
    }

    /// `_get_group_variables`.
    pub(super) fn group_variables(&self, group: GroupId) -> Result<Mapping, Diagnostic> {
        let mut vars =
            self.inventory.group_own_vars(self.loader, group, self.playbook_dir.as_deref())?;
        remove_internal(&mut vars);
        Ok(vars)
    }

    fn available_hosts(&self) -> Result<(Vec<HostId>, HashSet<String>), Diagnostic> {
        let hosts = self.inventory.select("all")?;
        let data = self.inventory.data();
        let names = hosts.iter().map(|h| data.host(*h).name.clone()).collect();
        Ok((hosts, names))
    }

    /// `json_inventory`: every group reachable from `all` with its hosts (within the limit)
    /// and children, then `_meta.hostvars`.
    pub(super) fn json_inventory(&self) -> Result<Node, Diagnostic> {
        let data = self.inventory.data();
        let (hosts, available) = self.available_hosts()?;
        let mut results = Mapping::new();
        let mut seen = HashSet::new();
        self.json_group(data.all(), &available, &mut seen, &mut results)?;
        let mut hostvars = Mapping::new();
        for host in hosts {
            let vars = self.host_variables(host)?;
            if !vars.is_empty() {
                hostvars.insert(s(&data.host(host).name), map_node(vars));
            }
        }
        let mut meta = Mapping::new();
        meta.insert(s("hostvars"), map_node(hostvars));
        meta.insert(s("profile"), s("inventory_legacy"));
        results.insert(s("_meta"), map_node(meta));
        Ok(map_node(results))
    }

    fn json_group(
        &self,
        group: GroupId,
        available: &HashSet<String>,
        seen: &mut HashSet<GroupId>,
        results: &mut Mapping,
    ) -> Result<(), Diagnostic> {
        let data = self.inventory.data();
        let g = data.group(group);
        let mut entry = Mapping::new();
        if group != data.all() {
            let hosts: Vec<Node> = g
                .hosts
                .iter()
                .map(|h| data.host(*h).name.as_str())
                .filter(|name| available.contains(*name))
                .map(s)
                .collect();
            if !hosts.is_empty() {
                entry.insert(s("hosts"), Node::bare(Value::Seq(hosts)));
            }
        }
        let mut children = Vec::new();
        let mut nested = Mapping::new();
        for child in &g.children {
            children.push(s(&data.group(*child).name));
            if seen.insert(*child) {
                self.json_group(*child, available, seen, &mut nested)?;
            }
        }
        if !children.is_empty() {
            entry.insert(s("children"), Node::bare(Value::Seq(children)));
        }
        if self.export {
            let vars = self.group_variables(group)?;
            if !vars.is_empty() {
                entry.insert(s("vars"), map_node(vars));
            }
        }
        if !entry.is_empty() {
            results.insert(s(&g.name), map_node(entry));
        }
        for (k, v) in nested {
            results.insert(k, v);
        }
        Ok(())
    }

    /// `yaml_inventory`: groups nested under their parents, each host's variables under its
    /// first appearance.
    pub(super) fn yaml_inventory(&self) -> Result<Node, Diagnostic> {
        let data = self.inventory.data();
        let (_, available) = self.available_hosts()?;
        let mut seen_hosts = HashSet::new();
        let mut seen_groups = HashSet::new();
        let mut top = Mapping::new();
        self.yaml_group(data.all(), &available, &mut seen_hosts, &mut seen_groups, &mut top)?;
        Ok(map_node(top))
    }

    fn yaml_group(
        &self,
        group: GroupId,
        available: &HashSet<String>,
        seen_hosts: &mut HashSet<HostId>,
        seen_groups: &mut HashSet<GroupId>,
        results: &mut Mapping,
    ) -> Result<(), Diagnostic> {
        let data = self.inventory.data();
        let g = data.group(group);
        let mut entry = Mapping::new();
        let mut children = Mapping::new();
        for child in &g.children {
            if *child == data.all() {
                continue;
            }
            if seen_groups.contains(child) {
                children.insert(s(&data.group(*child).name), map_node(Mapping::new()));
            } else {
                self.yaml_group(*child, available, seen_hosts, seen_groups, &mut children)?;
                seen_groups.insert(*child);
            }
        }
        if !children.is_empty() {
            entry.insert(s("children"), map_node(children));
        }
        self.hosts_and_vars(group, available, seen_hosts, &mut entry)?;
        if !entry.is_empty() {
            results.insert(s(&g.name), map_node(entry));
        }
        Ok(())
    }

    /// A group's `hosts` (those within the limit, each one's variables the first time it is
    /// met, none for `all`) and, when exporting, its `vars`, added to `entry` when not empty:
    /// what the YAML and TOML listings write for every group alike.
    fn hosts_and_vars(
        &self,
        group: GroupId,
        available: &HashSet<String>,
        seen: &mut HashSet<HostId>,
        entry: &mut Mapping,
    ) -> Result<(), Diagnostic> {
        let data = self.inventory.data();
        let mut hosts = Mapping::new();
        if group != data.all() {
            for h in &data.group(group).hosts {
                let name = &data.host(*h).name;
                if !available.contains(name) {
                    continue;
                }
                let vars = if seen.insert(*h) { self.host_variables(*h)? } else { Mapping::new() };
                hosts.insert(s(name), map_node(vars));
            }
        }
        if !hosts.is_empty() {
            entry.insert(s("hosts"), map_node(hosts));
        }
        if self.export {
            let vars = self.group_variables(group)?;
            if !vars.is_empty() {
                entry.insert(s("vars"), map_node(vars));
            }
        }
        Ok(())
    }

    /// `toml_inventory`: every group reachable from `all` as a table of its own (`children`
    /// names, `hosts` with their variables the first time a host is met, `vars` when
    /// exporting), subgroups after their parent; `ungrouped` only when it has hosts.
    pub(super) fn toml_inventory(&self) -> Result<Mapping, Diagnostic> {
        let data = self.inventory.data();
        let (_, available) = self.available_hosts()?;
        let all = data.group(data.all());
        let has_ungrouped = all
            .children
            .iter()
            .find(|c| data.group(**c).name == "ungrouped")
            .is_some_and(|c| !data.group(*c).hosts.is_empty());
        let mut seen = HashSet::new();
        let mut results = Mapping::new();
        self.toml_group(data.all(), &available, has_ungrouped, &mut seen, &mut results)?;
        Ok(results)
    }

    fn toml_group(
        &self,
        group: GroupId,
        available: &HashSet<String>,
        has_ungrouped: bool,
        seen: &mut HashSet<HostId>,
        results: &mut Mapping,
    ) -> Result<(), Diagnostic> {
        let data = self.inventory.data();
        let g = data.group(group);
        let is_all = group == data.all();
        // The group's own entry comes first; its subgroups' entries follow (or update where
        // they were, as a Python dict does).
        results.insert(s(&g.name), map_node(Mapping::new()));
        let mut children = Vec::new();
        for child in &g.children {
            let name = &data.group(*child).name;
            if name == "ungrouped" && !has_ungrouped {
                continue;
            }
            if !is_all {
                children.push(s(name));
            }
            self.toml_group(*child, available, has_ungrouped, seen, results)?;
        }
        let mut entry = Mapping::new();
        if !children.is_empty() {
            entry.insert(s("children"), Node::bare(Value::Seq(children)));
        }
        self.hosts_and_vars(group, available, seen, &mut entry)?;
        if entry.is_empty() {
            results.remove(g.name.as_str());
        } else {
            results.insert(s(&g.name), map_node(entry));
        }
        Ok(())
    }

    /// `inventory_graph`: the tree under `start` (a group name), with variables when asked.
    pub(super) fn graph(&self, start: &str, show_vars: bool) -> Result<String, Diagnostic> {
        let data = self.inventory.data();
        let Some(group) = data.find_group(start) else {
            return Err(Diagnostic::new("Pattern must be valid group name when using --graph")
                .with_class(ErrorClass::Options));
        };
        let mut lines = Vec::new();
        self.graph_group(group, 0, show_vars, &mut lines)?;
        Ok(lines.join("\n"))
    }

    fn graph_group(
        &self,
        group: GroupId,
        depth: usize,
        show_vars: bool,
        lines: &mut Vec<String>,
    ) -> Result<(), Diagnostic> {
        let data = self.inventory.data();
        let g = data.group(group);
        lines.push(graph_name(&format!("@{}:", g.name), depth));
        let depth = depth + 1;
        for child in &g.children {
            self.graph_group(*child, depth, show_vars, lines)?;
        }
        if group != data.all() {
            for h in &g.hosts {
                lines.push(graph_name(&data.host(*h).name, depth));
                if show_vars {
                    let vars = self.host_variables(*h)?;
                    self.show_vars(&vars, depth + 1, lines)?;
                }
            }
        }
        if show_vars {
            let vars = self.group_variables(group)?;
            self.show_vars(&vars, depth, lines)?;
        }
        Ok(())
    }

    /// `_show_vars`: `{name = value}` lines sorted by name, values as Python's `str()`.
    fn show_vars(
        &self,
        vars: &Mapping,
        depth: usize,
        lines: &mut Vec<String>,
    ) -> Result<(), Diagnostic> {
        let mut entries: Vec<(String, &Node)> =
            vars.iter().map(|(k, v)| (python_str(&k.value), v)).collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, value) in entries {
            self.check_vault(value)?;
            lines.push(graph_name(&format!("{{{name} = {}}}", python_str(&value.value)), depth));
        }
        Ok(())
    }

    /// Printing a vault value decrypts it in ansible; tack decrypts it too, so a missing or
    /// wrong password fails the same way, but prints a mask.
    fn check_vault(&self, value: &Node) -> Result<(), Diagnostic> {
        match &value.value {
            Value::Vault(ciphertext) => {
                self.loader.secrets().decrypt(ciphertext.as_bytes()).map(|_| ()).map_err(|e| {
                    let mut diag = e.to_diagnostic();
                    diag.origin = value.origin.clone();
                    diag
                })
            }
            Value::Seq(items) => items.iter().try_for_each(|i| self.check_vault(i)),
            Value::Map(m) => m.iter().try_for_each(|(_, v)| self.check_vault(v)),
            _ => Ok(()),
        }
    }
}

fn graph_name(name: &str, depth: usize) -> String {
    if depth == 0 {
        return name.to_string();
    }
    format!("{}--{name}", "  |".repeat(depth))
}

/// `dump`: JSON as ansible-inventory writes it (sorted keys, indent 4, UTF-8 kept), or YAML
/// as its `AnsibleDumper` does (block style, sorted keys, vault values kept encrypted).
pub(super) fn dump(
    value: &impl AsNode,
    yaml: bool,
    mark_unsafe: bool,
) -> Result<String, Diagnostic> {
    if yaml {
        let options = tack_yaml::DumpOptions {
            indent: None,
            width: None,
            default_flow_style: Some(false),
            sort_keys: true,
            vault: tack_yaml::VaultDump::KeepEncrypted,
            block_strings: None,
        };
        return tack_yaml::dump(&value.as_node().value, &options)
            .map_err(|e| Diagnostic::new(e.to_string()));
    }
    let options =
        JsonOptions { ensure_ascii: false, mark_unsafe, ..JsonOptions::indented(4, true) };
    to_json(&value.as_node(), &options).map_err(|e| Diagnostic::new(e.to_string()))
}

/// Something `dump` can print.
pub(super) trait AsNode {
    fn as_node(&self) -> Node;
}

impl AsNode for Node {
    fn as_node(&self) -> Node {
        self.clone()
    }
}

impl AsNode for Mapping {
    fn as_node(&self) -> Node {
        map_node(self.clone())
    }
}
