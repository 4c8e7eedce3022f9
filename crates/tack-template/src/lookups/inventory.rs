//! `inventory_hostnames`: the hosts a host pattern selects, matched as ansible's lookup
//! matches them, against an inventory rebuilt from the render's `groups` variable (so the
//! hosts `add_host` and `group_by` made count, and nothing else of the inventory is read).

use minijinja::value::Value as JValue;
use tack_inventory::{Inventory, PatternMismatch, pattern};
use tack_yaml::Value;

use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] = &[Entry::new("inventory_hostnames", inventory_hostnames)];

fn inventory_hostnames(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let groups = match call.env.read("groups") {
        Some(groups) => crate::value::to_value(&groups).map_err(|e| {
            LookupError::failed(format!("the groups variable could not be read: {e}"))
        })?,
        None => Value::Map(Default::default()),
    };
    let mut listed = Vec::new();
    if let Value::Map(groups) = &groups {
        for (name, hosts) in groups.iter() {
            let hosts = match &hosts.value {
                Value::Seq(items) => {
                    items.iter().map(|h| tack_yaml::pyrepr::str(&h.value)).collect()
                }
                _ => Vec::new(),
            };
            listed.push((tack_yaml::pyrepr::str(&name.value), hosts));
        }
    }
    let mut terms = Vec::new();
    for term in &call.terms {
        let text = term.as_str().map(str::to_string).unwrap_or_else(|| term.to_string());
        terms.extend(pattern::split_host_pattern(&text));
    }
    let inventory = Inventory::from_groups(&listed, mismatch());
    // ansible's lookup answers an empty list for any pattern its inventory rejects.
    let Ok(hosts) = inventory.select_terms(&terms) else { return Ok(Vec::new()) };
    let data = inventory.data();
    Ok(hosts.into_iter().map(|h| JValue::from(data.host(h).name.as_str())).collect())
}

/// `host_pattern_mismatch`, as the run's configuration says.
fn mismatch() -> PatternMismatch {
    match super::config::installed().map(|c| c.host_pattern_mismatch()) {
        Ok(tack_config::MismatchPolicy::Error) => PatternMismatch::Error,
        Ok(tack_config::MismatchPolicy::Ignore) => PatternMismatch::Ignore,
        _ => PatternMismatch::Warning,
    }
}
