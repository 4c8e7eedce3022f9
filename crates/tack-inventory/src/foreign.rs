//! Inventory plugins tack has no native code for (`constructed`, `generator`, a collection's,
//! one in an `inventory_plugins/` directory): a source that needs one is handed, with the
//! inventory read so far, to whoever the run wires in (ansible-core's own plugin, through
//! `tack_actions::python_inventory`), and what it answers becomes the inventory.
//!
//! Owns the exchange's shape ([`Snapshot`]) and how an answer is applied: only what the plugin
//! added or changed is written back, so what tack read (an `!unsafe` value, a vaulted one)
//! keeps its kind.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node};

use crate::data::{DataError, InventoryData};

/// Runs inventory plugins tack has no native code for.
pub trait ForeignPlugins: Send + Sync + std::fmt::Debug {
    /// Offers `source` to `plugin`, with the inventory read so far and the sources already
    /// parsed (ansible's `processed_sources`).
    fn parse(
        &self,
        plugin: &str,
        source: &str,
        inventory: &Snapshot,
        processed: &[String],
    ) -> ForeignOutcome;
}

/// What a foreign plugin made of a source.
pub enum ForeignOutcome {
    /// Its `verify_file` declined the source.
    Declined,
    /// It failed to parse it (ansible's message).
    Failed(Diagnostic),
    /// The whole inventory after it parsed the source.
    Parsed(Snapshot),
}

/// Every group and host with what the sources set on them, in ansible's order.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub groups: Vec<GroupSnapshot>,
    pub hosts: Vec<HostSnapshot>,
}

#[derive(Debug, Clone)]
pub struct GroupSnapshot {
    pub name: String,
    pub vars: Mapping,
    pub children: Vec<String>,
    pub hosts: Vec<String>,
    pub priority: i64,
}

#[derive(Debug, Clone)]
pub struct HostSnapshot {
    pub name: String,
    pub vars: Mapping,
}

impl InventoryData {
    /// The inventory as a foreign plugin is handed it (the implicit localhost left out, as
    /// ansible's inventory never holds it).
    pub fn snapshot(&self) -> Snapshot {
        let groups = self
            .group_ids()
            .map(|g| {
                let group = self.group(g);
                GroupSnapshot {
                    name: group.name.clone(),
                    vars: group.vars.clone(),
                    children: group.children.iter().map(|c| self.group(*c).name.clone()).collect(),
                    hosts: group.hosts.iter().map(|h| self.host(*h).name.clone()).collect(),
                    priority: group.priority,
                }
            })
            .collect();
        let hosts = self
            .host_ids()
            .map(|h| self.host(h))
            .filter(|h| !h.implicit)
            .map(|h| HostSnapshot { name: h.name.clone(), vars: h.vars.clone() })
            .collect();
        Snapshot { groups, hosts }
    }

    /// Writes back what a foreign plugin added or changed.
    pub fn apply(&mut self, snapshot: &Snapshot) -> Result<(), DataError> {
        for group in &snapshot.groups {
            self.add_group(&group.name)?;
        }
        for host in &snapshot.hosts {
            self.add_host(&host.name, None, None)?;
        }
        for group in &snapshot.groups {
            for child in &group.children {
                self.add_child(&group.name, child)?;
            }
            let Some(id) = self.find_group(&group.name) else { continue };
            for host in &group.hosts {
                self.add_host(host, Some(id), None)?;
            }
            let current = self.group(id).vars.clone();
            self.apply_vars(&group.name, &current, &group.vars)?;
            if group.priority != self.group(id).priority {
                let priority = Node::bare(tack_yaml::Value::Int(group.priority));
                self.set_variable(&group.name, key("ansible_group_priority"), priority)?;
            }
        }
        for host in &snapshot.hosts {
            let Some(id) = self.find_host(&host.name) else { continue };
            let current = self.host(id).vars.clone();
            self.apply_vars(&host.name, &current, &host.vars)?;
        }
        Ok(())
    }

    fn apply_vars(
        &mut self,
        entity: &str,
        current: &Mapping,
        answered: &Mapping,
    ) -> Result<(), DataError> {
        let same = |a: &Node, b: &Node| {
            tack_yaml::pyrepr::repr(&a.value) == tack_yaml::pyrepr::repr(&b.value)
        };
        for (k, v) in answered.iter() {
            let unchanged = k.as_str().and_then(|k| current.get(k)).is_some_and(|c| same(c, v));
            if !unchanged {
                self.set_variable(entity, k.clone(), v.clone())?;
            }
        }
        Ok(())
    }
}

fn key(name: &str) -> Node {
    Node::bare(tack_yaml::Value::Str(name.to_string()))
}
