//! The action groups a play's `module_defaults` resolved: which actions each group holds and
//! which groups each action is in, as ansible caches them on the play. The loader fills it
//! (`load::module_defaults`); the run only asks [`ActionGroups::has`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// The action groups a play's `module_defaults` named, as far as resolved: ansible's
/// `Play._group_actions` and `Play._action_groups`.
#[derive(Debug, Default)]
pub struct ActionGroups {
    tables: Mutex<GroupTables>,
}

#[derive(Debug, Default)]
struct GroupTables {
    /// Each group resolved (fully qualified) and its actions.
    actions: HashMap<String, Vec<String>>,
    /// Each action and the groups it was found in.
    groups: HashMap<String, Vec<String>>,
}

impl ActionGroups {
    /// Whether the resolved action `action` is in the group `group` (fully qualified).
    pub fn has(&self, group: &str, action: &str) -> bool {
        let tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        tables.groups.get(action).is_some_and(|groups| groups.iter().any(|g| g == group))
    }

    pub(crate) fn cached(&self, group: &str) -> Option<Vec<String>> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner).actions.get(group).cloned()
    }

    /// Records `actions` as members of `group` (after those it has).
    pub(crate) fn add(&self, group: &str, actions: &[String]) {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        for action in actions {
            tables.groups.entry(action.clone()).or_default().push(group.to_string());
        }
        tables.actions.entry(group.to_string()).or_default().extend(actions.iter().cloned());
    }
}
