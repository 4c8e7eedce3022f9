//! The inventory as the run changes it: a copy of the loaded inventory that `add_host` and
//! `group_by` change for the rest of the run (later plays' host patterns, `groups`,
//! `hostvars`, `group_names`), and `meta: refresh_inventory`, which reads the sources again and
//! applies the run's changes again (ansible 2.21's inventory manager keeps them).
//!
//! Owns the inventory of the run; plays read it when they start and after each change. It
//! never prints and never templates.

use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use crate::{AddGroup, AddHost, Inventory};
use tack_diag::Diagnostic;
use tack_loader::DataLoader;

/// One change the run made, kept to apply again after a refresh.
#[derive(Debug, Clone)]
enum Change {
    Host(AddHost),
    Group(AddGroup),
}

/// The run's inventory and the changes made to it.
pub struct LiveInventory {
    // Locks, not cells: hosts run a task on threads of their own (`forks`), and a module's
    // run reads the inventory. Only controller actions, on the coordinating thread, write.
    inventory: RwLock<Inventory>,
    changes: RwLock<Vec<Change>>,
}

impl LiveInventory {
    pub fn new(inventory: &Inventory) -> LiveInventory {
        LiveInventory { inventory: RwLock::new(inventory.clone()), changes: RwLock::default() }
    }

    pub fn current(&self) -> RwLockReadGuard<'_, Inventory> {
        // A poisoned lock means a thread panicked, which ends the run with that panic; what
        // the inventory holds is read as it is until then.
        self.inventory.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// `add_dynamic_host`; whether anything changed.
    pub fn add_host(&self, request: AddHost) -> Result<bool, String> {
        let changed = self
            .inventory
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .data_mut()
            .add_dynamic_host(&request)
            .map_err(|e| e.0)?;
        self.changes.write().unwrap_or_else(PoisonError::into_inner).push(Change::Host(request));
        Ok(changed)
    }

    /// `add_dynamic_group`; whether anything changed.
    pub fn add_group(&self, request: AddGroup) -> Result<bool, String> {
        let changed = self
            .inventory
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .data_mut()
            .add_dynamic_group(&request)
            .map_err(|e| e.0)?;
        self.changes.write().unwrap_or_else(PoisonError::into_inner).push(Change::Group(request));
        Ok(changed)
    }

    /// `refresh_inventory`: the sources read again, then this run's changes applied again
    /// (a grouping whose host is gone is passed over).
    pub fn refresh(&self, loader: &DataLoader) -> Result<(), Diagnostic> {
        let mut fresh = self.current().reload(loader)?;
        for change in self.changes.read().unwrap_or_else(PoisonError::into_inner).iter() {
            let data = fresh.data_mut();
            let applied = match change {
                Change::Host(request) => data.add_dynamic_host(request).map(|_| ()),
                Change::Group(request) => match data.find_host(&request.host_name) {
                    Some(_) => data.add_dynamic_group(request).map(|_| ()),
                    None => Ok(()),
                },
            };
            applied.map_err(|e| Diagnostic::new(e.0))?;
        }
        *self.inventory.write().unwrap_or_else(PoisonError::into_inner) = fresh;
        Ok(())
    }
}
