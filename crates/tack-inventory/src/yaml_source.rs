//! The `yaml` inventory plugin: nested `hosts:`/`vars:`/`children:` mappings under group
//! names, host names that may be ranges, and the `auto` plugin's check for `plugin:` files.
//!
//! Unexpected keys and values are warned about and skipped as ansible does; structural errors
//! are ansible's messages. Whoever calls this decides the origin of an error (ansible shows the
//! plugin, not the YAML position, for errors raised here).

use std::path::Path;

use tack_diag::Diagnostic;
use tack_loader::{CacheMode, DataLoader};
use tack_yaml::{Mapping, Node, Value};

use crate::address::expand_hostpattern;
use crate::data::{InventoryData, python_str};

/// `<class '...'>` as ansible prints `type(value)` of a loaded value.
pub(crate) fn python_class(node: &Node) -> String {
    let tagged = |name: &str| format!("<class 'ansible.module_utils._internal._datatag.{name}'>");
    match &node.value {
        Value::Null => "<class 'NoneType'>".into(),
        Value::Bool(_) => "<class 'bool'>".into(),
        Value::Int(_) | Value::BigInt(_) => tagged("_AnsibleTaggedInt"),
        Value::Float(_) => tagged("_AnsibleTaggedFloat"),
        Value::Str(_) | Value::Unsafe(_) => tagged("_AnsibleTaggedStr"),
        Value::Timestamp(t) if t.time.is_none() => tagged("_AnsibleTaggedDate"),
        Value::Timestamp(_) => tagged("_AnsibleTaggedDateTime"),
        Value::Seq(_) => tagged("_AnsibleTaggedList"),
        Value::Map(_) => tagged("_AnsibleTaggedDict"),
        Value::Vault(_) => "<class 'ansible.parsing.vault.EncryptedString'>".into(),
    }
}

fn err(msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(msg).parser()
}

/// Parses a YAML inventory file into `data`.
pub(crate) fn parse(
    data: &mut InventoryData,
    loader: &DataLoader,
    path: &Path,
) -> Result<(), Diagnostic> {
    let doc =
        loader.load_file_with(path, CacheMode::None).map_err(|e| err(e.to_diagnostic().brief()))?;
    if !tack_loader::vars::is_truthy(&doc) {
        return Err(err("Parsed empty YAML file"));
    }
    let Value::Map(map) = &doc.value else {
        return Err(err(format!(
            "YAML inventory has invalid structure, it should be a dictionary, got: {}",
            python_class(&doc)
        )));
    };
    if map.get("plugin").is_some_and(tack_loader::vars::is_truthy) {
        return Err(err("Plugin configuration YAML file, not YAML inventory"));
    }
    for (name, group) in map.iter() {
        parse_group(data, name, group)?;
    }
    Ok(())
}

/// A mapping key as the group or host name Python would use (`str()` of it in messages).
fn key_name(key: &Node) -> String {
    python_str(key)
}

fn parse_group(data: &mut InventoryData, key: &Node, body: &Node) -> Result<String, Diagnostic> {
    let name = key_name(key);
    let body_map = match &body.value {
        Value::Null => None,
        Value::Map(m) => Some(m),
        _ => {
            tack_diag::warn(&Diagnostic::new(format!(
                "Skipping '{name}' as this is not a valid group definition"
            )));
            return Ok(name);
        }
    };
    if key.as_str().is_none() {
        return Err(err(format!(
            "Unable to add group {name}: Invalid group name supplied, expected a string but got \
             {} for {name}",
            python_class(key)
        )));
    }
    let group_id =
        data.add_group(&name).map_err(|e| err(format!("Unable to add group {name}: {}", e.0)))?;
    let group = data.group(group_id).name.clone();
    let Some(body_map) = body_map else { return Ok(group) };

    // A bare string under a section stands for a one-entry mapping.
    let mut sections = Mapping::new();
    for (k, v) in body_map.iter() {
        let is_section = matches!(k.as_str(), Some("vars" | "children" | "hosts"));
        let v = match (&v.value, is_section) {
            (Value::Str(s) | Value::Unsafe(s), true) => {
                let mut m = Mapping::new();
                m.insert(
                    Node::new(Value::Str(s.clone()), v.origin.clone()),
                    Node::bare(Value::Null),
                );
                Node::new(Value::Map(m), v.origin.clone())
            }
            (Value::Map(_) | Value::Null, _) | (_, false) => v.clone(),
            (_, true) => {
                return Err(err(format!(
                    "Invalid \"{}\" entry for \"{group}\" group, requires a dictionary, found \"{}\" instead.",
                    key_name(k),
                    python_class(v)
                )));
            }
        };
        sections.insert(k.clone(), v);
    }

    for (k, v) in sections.iter() {
        let section = key_name(k);
        let entries = match &v.value {
            Value::Map(m) => m,
            Value::Null => continue,
            _ => {
                tack_diag::warn(&Diagnostic::new(format!(
                    "Skipping key ({section}) in group ({group}) as it is not a mapping, it is a {}",
                    python_class(v)
                )));
                continue;
            }
        };
        match k.as_str() {
            Some("vars") => {
                for (var, value) in entries.iter() {
                    data.set_variable(&group, var.clone(), value.clone()).map_err(|e| err(e.0))?;
                }
            }
            Some("children") => {
                for (sub_key, sub_body) in entries.iter() {
                    let sub = parse_group(data, sub_key, sub_body)?;
                    data.add_child(&group, &sub).map_err(|e| err(e.0))?;
                }
            }
            Some("hosts") => {
                for (pattern, host_vars) in entries.iter() {
                    let Some(text) = pattern.as_str() else {
                        return Err(err(format!(
                            "Host pattern {} must be a string. Enclose integers/floats in quotation marks.",
                            key_name(pattern)
                        )));
                    };
                    let (hosts, port) = expand_hostpattern(text).map_err(|e| err(e.0))?;
                    populate_host_vars(data, &hosts, host_vars, Some(&group), port)?;
                }
            }
            _ => tack_diag::warn(&Diagnostic::new(format!(
                "Skipping unexpected key ({section}) in group ({group}), only \"vars\", \"children\" and \"hosts\" are valid"
            ))),
        }
    }
    Ok(group)
}

/// `_populate_host_vars`: adds each host (to `group` when given) and sets `vars` on it. A
/// missing value counts as no variables.
pub(crate) fn populate_host_vars(
    data: &mut InventoryData,
    hosts: &[String],
    vars: &Node,
    group: Option<&str>,
    port: Option<u64>,
) -> Result<(), Diagnostic> {
    let empty = Mapping::new();
    let map = match &vars.value {
        Value::Map(m) => m,
        _ if !tack_loader::vars::is_truthy(vars) => &empty,
        _ => {
            return Err(err(format!(
                "Invalid data from file, expected dictionary and got:\n\n{}",
                python_str(vars)
            )));
        }
    };
    let group_id = group.and_then(|g| data.find_group(g));
    for host in hosts {
        data.add_host(host, group_id, port).map_err(|e| err(e.0))?;
        for (k, v) in map.iter() {
            data.set_variable(host, k.clone(), v.clone()).map_err(|e| err(e.0))?;
        }
    }
    Ok(())
}

/// What the `auto` plugin reads from a `.yml`/`.yaml` file: the `plugin:` it names.
pub(crate) fn auto_plugin_name(loader: &DataLoader, path: &Path) -> Result<String, Diagnostic> {
    let doc = loader.load_file_with(path, CacheMode::None).map_err(|e| e.to_diagnostic())?;
    let name =
        doc.as_map().and_then(|m| m.get("plugin")).filter(|n| tack_loader::vars::is_truthy(n));
    match name {
        Some(n) => Ok(python_str(n)),
        None => Err(err(format!(
            "no root 'plugin' key found, '{}' is not a valid YAML inventory plugin config file",
            path.display()
        ))),
    }
}
