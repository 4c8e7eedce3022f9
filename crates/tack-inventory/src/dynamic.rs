//! The inventory changes a playbook run makes (`InventoryManager.add_dynamic_host` and
//! `add_dynamic_group`): a host added with groups and variables, a host put in a group with
//! parents. Each says whether it changed anything, as the actions report it.
//!
//! Only hosts and groups change here; nothing is read from files and nothing is templated.

use tack_loader::combine_vars;
use tack_yaml::Mapping;

use crate::data::{DataError, InventoryData};

/// `add_host`'s request: a host, the groups it joins, the variables it is given.
#[derive(Debug, Clone, PartialEq)]
pub struct AddHost {
    pub host_name: String,
    pub groups: Vec<String>,
    pub host_vars: Mapping,
}

/// `group_by`'s request for one host: the group it joins and that group's parents.
#[derive(Debug, Clone, PartialEq)]
pub struct AddGroup {
    pub host_name: String,
    pub group_name: String,
    pub parents: Vec<String>,
}

impl InventoryData {
    /// `add_dynamic_host`: creates the host under `all` when new, combines its variables,
    /// adds it to each group (created when new); whether anything changed.
    pub fn add_dynamic_host(&mut self, request: &AddHost) -> Result<bool, DataError> {
        let mut changed = false;
        let all = self.all();
        let id = match self.find_host(&request.host_name) {
            Some(id) => id,
            None => {
                changed = true;
                self.add_host(&request.host_name, Some(all), None)?
            }
        };
        let old = self.host(id).vars.clone();
        let combined = combine_vars(&old, &request.host_vars, self.hash_behaviour);
        // Values compare as Python compares them: where they were written plays no part.
        let text = |m: &Mapping| tack_yaml::pyrepr::repr(&tack_yaml::Value::Map(m.clone()));
        if text(&combined) != text(&old) {
            for (k, v) in request.host_vars.iter() {
                self.set_variable(&request.host_name, k.clone(), v.clone())?;
            }
            changed = true;
        }
        for name in &request.groups {
            let group = match self.find_group(name) {
                Some(g) => g,
                None => {
                    changed = true;
                    self.add_group(name)?
                }
            };
            if !self.group(group).hosts.contains(&id) {
                self.add_host(&request.host_name, Some(group), None)?;
                changed = true;
            }
        }
        if changed {
            self.reconcile()?;
        }
        Ok(changed)
    }

    /// `add_dynamic_group`: puts the host in the group (created when new) under each parent
    /// (created when new); whether anything changed. The host must exist.
    pub fn add_dynamic_group(&mut self, request: &AddGroup) -> Result<bool, DataError> {
        // The implicit localhost joins groups without becoming an inventory host, as
        // ansible's `add_dynamic_group` puts its `localhost` in them.
        let implicit =
            self.implicit_localhost().filter(|id| self.host(*id).name == request.host_name);
        let Some(host) = self.find_host(&request.host_name).or(implicit) else {
            return Err(DataError(format!("{} cannot be matched in inventory", request.host_name)));
        };
        let mut changed = false;
        let group = match self.find_group(&request.group_name) {
            Some(g) => g,
            None => self.add_group(&request.group_name)?,
        };
        for name in &request.parents {
            if self.find_group(name).is_none() {
                self.add_group(name)?;
                changed = true;
            }
        }
        for name in &request.parents {
            if let Some(parent) = self.find_group(name)
                && self.add_child_group(parent, group)?
            {
                changed = true;
            }
        }
        if self.add_host_to_group(group, host) {
            changed = true;
        }
        if changed {
            self.reconcile()?;
        }
        Ok(changed)
    }
}
