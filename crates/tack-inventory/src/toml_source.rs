//! The `toml` inventory plugin: `[group]` tables with `hosts`, `vars` and `children`, for
//! files ending in `.toml`.
//!
//! Parsing uses the `toml` crate, so a valid file reads as Python's `tomllib` reads it, but the
//! wording of a syntax error after `TOML file '...' is invalid:` is the crate's, not tomllib's.
//! A bare local time (`07:32:00`), which Python keeps as a `time` object, becomes its ISO text.

use std::path::Path;

use tack_diag::Diagnostic;
use tack_loader::DataLoader;
use tack_yaml::{Mapping, Node, TimeOfDay, Timestamp, Value};

use crate::address::expand_hostpattern;
use crate::data::InventoryData;
use crate::pyrepr::repr_str;
use crate::yaml_source::populate_host_vars;

fn err(msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(msg).parser()
}

/// `type(value)` of a value `tomllib` produced.
fn python_class(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "<class 'str'>",
        toml::Value::Integer(_) => "<class 'int'>",
        toml::Value::Float(_) => "<class 'float'>",
        toml::Value::Boolean(_) => "<class 'bool'>",
        toml::Value::Datetime(d) => match (d.date, d.time) {
            (Some(_), Some(_)) => "<class 'datetime.datetime'>",
            (Some(_), None) => "<class 'datetime.date'>",
            _ => "<class 'datetime.time'>",
        },
        toml::Value::Array(_) => "<class 'list'>",
        toml::Value::Table(_) => "<class 'dict'>",
    }
}

/// A TOML value as the variable `tomllib` would give ansible.
fn to_node(value: &toml::Value) -> Node {
    let v = match value {
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => datetime(d),
        toml::Value::Array(items) => Value::Seq(items.iter().map(to_node).collect()),
        toml::Value::Table(table) => Value::Map(to_mapping(table)),
    };
    Node::bare(v)
}

fn to_mapping(table: &toml::Table) -> Mapping {
    table.iter().map(|(k, v)| (Node::bare(Value::Str(k.clone())), to_node(v))).collect()
}

fn datetime(d: &toml::value::Datetime) -> Value {
    // tomllib keeps microseconds, dropping further digits.
    let time = d.time.map(|t| TimeOfDay {
        hour: t.hour,
        minute: t.minute,
        second: t.second,
        microsecond: t.nanosecond / 1000,
        utc_offset_minutes: d.offset.map(|o| match o {
            toml::value::Offset::Z => 0,
            toml::value::Offset::Custom { minutes } => i32::from(minutes),
        }),
    });
    match (d.date, time) {
        (Some(date), time) => Value::Timestamp(Timestamp {
            year: i32::from(date.year),
            month: date.month,
            day: date.day,
            time,
        }),
        (None, Some(t)) => {
            let mut text = format!("{:02}:{:02}:{:02}", t.hour, t.minute, t.second);
            if t.microsecond != 0 {
                text.push_str(&format!(".{:06}", t.microsecond));
            }
            Value::Str(text)
        }
        (None, None) => Value::Null,
    }
}

/// Parses a TOML inventory file into `data`.
pub(crate) fn parse(
    data: &mut InventoryData,
    loader: &DataLoader,
    path: &Path,
) -> Result<(), Diagnostic> {
    let shown = repr_str(&path.to_string_lossy());
    let file = loader.file_text(path).map_err(|e| err(e.to_diagnostic().brief()))?;
    let table: toml::Table = file.text.parse().map_err(|e: toml::de::Error| {
        let reason = e.message().trim().to_string();
        err(format!("TOML file {shown} is invalid: {reason}"))
    })?;
    if table.is_empty() {
        return Err(err("Parsed empty TOML file"));
    }
    let has_plugin = table.get("plugin").is_some_and(|p| tack_loader::vars::is_truthy(&to_node(p)));
    if has_plugin {
        return Err(err("Plugin configuration TOML file, not TOML inventory"));
    }
    for (name, group) in &table {
        parse_group(data, name, Some(group))?;
    }
    Ok(())
}

fn parse_group(
    data: &mut InventoryData,
    name: &str,
    body: Option<&toml::Value>,
) -> Result<(), Diagnostic> {
    let body = match body {
        None => None,
        Some(toml::Value::Table(t)) => Some(t),
        Some(_) => {
            tack_diag::warn(&Diagnostic::new(format!(
                "Skipping '{name}' as this is not a valid group definition"
            )));
            return Ok(());
        }
    };
    let id = data.add_group(name).map_err(|e| err(e.0))?;
    let group = data.group(id).name.clone();
    let Some(body) = body else { return Ok(()) };
    for (key, value) in body {
        match key.as_str() {
            "vars" => {
                let toml::Value::Table(vars) = value else {
                    return Err(err(format!(
                        "Invalid \"vars\" entry for \"{group}\" group, requires a dict, found \"{}\" instead.",
                        python_class(value)
                    )));
                };
                for (k, v) in vars {
                    data.set_variable(&group, Node::bare(Value::Str(k.clone())), to_node(v))
                        .map_err(|e| err(e.0))?;
                }
            }
            "children" => {
                let toml::Value::Array(children) = value else {
                    return Err(err(format!(
                        "Invalid \"children\" entry for \"{group}\" group, requires a list, found \"{}\" instead.",
                        python_class(value)
                    )));
                };
                for child in children {
                    let toml::Value::String(child) = child else {
                        return Err(err(format!(
                            "Invalid group name supplied, expected a string but got {} for {}",
                            python_class(child),
                            crate::pyrepr::str_of(&to_node(child).value)
                        )));
                    };
                    parse_group(data, child, Some(&toml::Value::Table(toml::Table::new())))?;
                    data.add_child(&group, child).map_err(|e| err(e.0))?;
                }
            }
            "hosts" => {
                let toml::Value::Table(hosts) = value else {
                    return Err(err(format!(
                        "Invalid \"hosts\" entry for \"{group}\" group, requires a dict, found \"{}\" instead.",
                        python_class(value)
                    )));
                };
                for (pattern, vars) in hosts {
                    let (names, port) = expand_hostpattern(pattern).map_err(|e| err(e.0))?;
                    populate_host_vars(data, &names, &to_node(vars), Some(&group), port)?;
                }
            }
            _ => tack_diag::warn(&Diagnostic::new(format!(
                "Skipping unexpected key \"{key}\" in group \"{group}\", only \"vars\", \"children\" and \"hosts\" are valid"
            ))),
        }
    }
    Ok(())
}
