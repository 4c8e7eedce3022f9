//! The lookups over the render's own variables: `vars` (a variable by name, its provenance
//! recorded through [`crate::value::RenderEnv::read`]), `varnames` (the names matching a
//! regular expression) and `inventory_hostnames` (the hosts a pattern selects, matched as
//! ansible's lookup matches them against an inventory rebuilt from the render's `groups`,
//! so the hosts `add_host` and `group_by` made count).
//!
//! They read variables only through the running render, so what they read is recorded.

use minijinja::value::Value as JValue;
use tack_inventory::{Inventory, PatternMismatch, pattern};
use tack_yaml::Value;

use super::options::py_str;
use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] = &[
    Entry::new("vars", vars),
    Entry::new("varnames", varnames),
    Entry::new("inventory_hostnames", inventory_hostnames),
];

fn vars(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let default = call.kwarg("default").filter(|v| !v.is_none());
    let mut out = Vec::new();
    for term in &call.terms {
        let Some(name) = term.as_str() else {
            return Err(LookupError::failed(format!(
                "Variable name must be 'str' not {}.",
                tack_yaml::pyrepr::str_repr(crate::filters::pyval::type_name(term))
            )));
        };
        match call.env.read(name) {
            Some(value) => out.push(value),
            None => match default {
                Some(d) => out.push(d.clone()),
                // ansible's `undef` with its words, for when the value is used.
                None => {
                    let hint = format!(
                        "No variable named {} was found.",
                        tack_yaml::pyrepr::str_repr(name)
                    );
                    crate::engine::active::undef_made(Some(hint));
                    out.push(JValue::UNDEFINED)
                }
            },
        }
    }
    Ok(out)
}

fn varnames(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let names: Vec<String> = call.env.scope().names().into_iter().map(str::to_string).collect();
    let mut out = Vec::new();
    for term in &call.terms {
        let Some(pattern) = term.as_str() else {
            return Err(LookupError::failed(format!(
                "Invalid setting identifier, \"{}\" is not a string, it is a {}",
                py_str(term),
                crate::filters::pyval::class_repr(term)
            )));
        };
        let re = crate::filters::regex::compile_python(pattern).map_err(|e| {
            LookupError::failed(format!("Unable to use \"{pattern}\" as a search parameter: {e}"))
        })?;
        for name in &names {
            if re.is_match(name).unwrap_or(false) {
                out.push(JValue::from(name.as_str()));
            }
        }
    }
    Ok(out)
}

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
