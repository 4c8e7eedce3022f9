//! The `script` inventory plugin: an executable run with `--list`, whose JSON names groups
//! (`hosts`, `vars`, `children`) and, under `_meta.hostvars`, every host's variables. Without
//! `_meta`, the script is run again with `--host NAME` for each host, as ansible does (with its
//! deprecation warning).
//!
//! Errors read as ansible's: the exit status, the script's standard error as help text, and
//! Python's JSON error messages. Strings ansible would not trust as templates (variables of a
//! group written without `hosts`/`vars`/`children`) become `!unsafe` values.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use tack_diag::{Diagnostic, Origin};
use tack_yaml::{Mapping, Node, Value};

use crate::data::InventoryData;
use crate::yaml_source::populate_host_vars;
use tack_py::repr::str_repr as repr_str;

struct Output {
    stdout: String,
    /// What the script wrote to its standard error, ending in a newline when not empty.
    stderr: String,
    help: Option<String>,
}

/// `run_command`: runs the script, failing on a spawn error, a non-zero exit or output that is
/// not UTF-8; the script's standard error becomes help text.
fn run(path: &Path, args: &[&str]) -> Result<Output, Diagnostic> {
    let mut argv = vec![path.to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let out = Command::new(path).args(args).stdin(Stdio::inherit()).output().map_err(|e| {
        let joined: Vec<String> = argv.iter().map(|a| tack_py::shlex::quote(a)).collect();
        let cause = tack_py::oserror::os_error(&e, Path::new(&argv[0]));
        Diagnostic::caused_by(
            format!("Failed to execute inventory script command {}.", repr_str(&joined.join(" "))),
            None,
            Diagnostic::new(cause),
        )
    })?;
    let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !stderr.is_empty() && !stderr.ends_with('\n') {
        stderr.push('\n');
    }
    let help = (!stderr.trim().is_empty())
        .then(|| format!("Standard error from inventory script:\n{stderr}"));
    let with_help = |d: Diagnostic| match &help {
        Some(h) => d.with_help(h.clone()),
        None => d,
    };
    if !out.status.success() {
        let code = out.status.code().unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            -out.status.signal().unwrap_or(0)
        });
        return Err(with_help(Diagnostic::new(format!(
            "Inventory script returned non-zero exit code {code}."
        ))));
    }
    let stdout = String::from_utf8(out.stdout).map_err(|_| {
        with_help(Diagnostic::new(
            "Inventory script result contained characters that cannot be interpreted as UTF-8.",
        ))
    })?;
    Ok(Output { stdout, stderr, help })
}

fn with_help(d: Diagnostic, help: &Option<String>) -> Diagnostic {
    match help {
        Some(h) => d.with_help(h.clone()),
        None => d,
    }
}

/// `detect_profile_name`: the JSON profile the output declares, which must be an inventory
/// one; ansible knows only `inventory_legacy`.
fn check_profile(doc: &Node) -> Result<(), String> {
    let Value::Map(map) = &doc.value else {
        return Err(format!("Value is '{}' instead of 'dict'.", doc.python_type()));
    };
    let Some(meta) = map.get("_meta") else { return Ok(()) };
    let Value::Map(meta) = &meta.value else {
        return Err(format!(
            "Value contains '_meta' which is '{}' instead of 'dict'.",
            meta.python_type()
        ));
    };
    let Some(profile) = meta.get("profile") else { return Ok(()) };
    let Some(name) = profile.as_str() else {
        return Err(format!(
            "Value contains '_meta.profile' which is '{}' instead of 'str'.",
            profile.python_type()
        ));
    };
    if !name.starts_with("inventory_") {
        return Err(format!("Non-inventory profile {} is not allowed.", repr_str(name)));
    }
    if name != "inventory_legacy" {
        return Err(format!("Unknown profile name {}.", repr_str(name)));
    }
    Ok(())
}

/// Runs an inventory script and adds what it reports to `data`. `show_stderr` is the
/// plugin's `always_show_stderr`: what the script wrote to its standard error is shown as an
/// error once its output was read, even though it succeeded.
pub(crate) fn parse(
    data: &mut InventoryData,
    path: &Path,
    show_stderr: bool,
) -> Result<(), Diagnostic> {
    let out = run(path, &["--list"])?;
    let origin = Origin::described(format!(
        "<inventory script output from {}>",
        repr_str(&path.to_string_lossy())
    ));
    // ansible's inventory decoder tags no value with where it came from (a warning about a
    // variable's name shows `<unknown>`); the messages below name the script themselves.
    let doc = match tack_loader::json::parse(&out.stdout, None) {
        Ok(doc) => doc,
        Err(tack_loader::json::JsonReadError::Syntax(e)) => {
            let cause = Diagnostic::caused_by(
                "Value could not be parsed as JSON.",
                None,
                Diagnostic::new(e.to_string()),
            );
            return Err(with_help(
                Diagnostic::caused_by(
                    "Unable to get JSON decoder for inventory script result.",
                    None,
                    cause,
                ),
                &out.help,
            ));
        }
        Err(e) => {
            let cause = Diagnostic::at(format!("JSON parsing failed: {e}"), Some(origin.clone()));
            return Err(with_help(
                Diagnostic::caused_by(
                    "Inventory script result could not be parsed as JSON.",
                    None,
                    cause,
                ),
                &out.help,
            ));
        }
    };
    if let Err(msg) = check_profile(&doc) {
        return Err(with_help(
            Diagnostic::caused_by(
                "Unable to get JSON decoder for inventory script result.",
                None,
                Diagnostic::new(msg),
            ),
            &out.help,
        ));
    }
    if show_stderr && !out.stderr.is_empty() {
        tack_diag::show_error(&Diagnostic::new(out.stderr.trim()));
    }
    let Value::Map(top) = &doc.value else { return Ok(()) };

    let mut hosts: BTreeSet<String> = BTreeSet::new();
    let mut hostvars: Option<Mapping> = None;
    for (key, value) in top.iter() {
        let name = crate::pyrepr::str_of(&key.value);
        if name == "_meta" {
            match value.as_map().and_then(|m| m.get("hostvars")) {
                Some(Node { value: Value::Map(m), .. }) => hostvars = Some(m.clone()),
                other => {
                    let found = other.map_or("NoneType", Node::python_type);
                    return Err(Diagnostic::new(format!(
                        "Value contains '_meta.hostvars' which is '{found}' instead of 'dict'."
                    )));
                }
            }
        } else {
            parse_group(data, &name, value, &origin, &mut hosts)?;
        }
    }
    if hostvars.is_none() {
        crate::data::deprecate(
            Diagnostic::at(
                "Inventory scripts should always provide 'meta.hostvars'. Host variables will be \
                 collected by running the inventory script with the '--host' option for each host.",
                Some(origin.clone()),
            ),
            Some("inventory plugin 'script'"),
        );
    }
    for host in hosts {
        let vars = match &hostvars {
            Some(meta) => {
                meta.get(&host).cloned().unwrap_or_else(|| Node::bare(Value::Map(Mapping::new())))
            }
            None => host_variables(path, &host)?,
        };
        // A host's variables must be a mapping, empty or not (ansible's `_populate_host_vars`;
        // the YAML plugin, which shares it here, reads an empty value as none).
        if !matches!(vars.value, Value::Map(_)) {
            return Err(Diagnostic::new(format!(
                "Invalid data from file, expected dictionary and got:\n\n{}",
                crate::pyrepr::str_of(&vars.value)
            )));
        }
        populate_host_vars(data, std::slice::from_ref(&host), &vars, None, None)?;
    }
    Ok(())
}

fn parse_group(
    data: &mut InventoryData,
    name: &str,
    value: &Node,
    origin: &Origin,
    hosts: &mut BTreeSet<String>,
) -> Result<(), Diagnostic> {
    let group_id = data.add_group(name).map_err(|e| Diagnostic::new(e.0))?;
    let group = data.group(group_id).name.clone();
    let map = match &value.value {
        Value::Map(m) if ["hosts", "vars", "children"].iter().any(|k| m.get(k).is_some()) => {
            m.clone()
        }
        Value::Map(m) => {
            crate::data::deprecate(
                Diagnostic::at(
                    format!(
                        "Treating malformed group {} as the sole host of that group. Variables \
                         provided in this manner cannot be templated.",
                        repr_str(&group)
                    ),
                    Some(origin.clone()),
                ),
                Some("inventory plugin 'script'"),
            );
            let mut fixed = Mapping::new();
            let s = |t: &str| Node::bare(Value::Str(t.to_string()));
            fixed.insert(s("hosts"), Node::bare(Value::Seq(vec![s(&group)])));
            fixed.insert(s("vars"), untrusted(&Node::bare(Value::Map(m.clone()))));
            fixed
        }
        _ => {
            crate::data::deprecate(
                Diagnostic::at(
                    format!(
                        "Group {} was converted to 'dict' from {}.",
                        repr_str(&group),
                        repr_str(value.python_type())
                    ),
                    Some(origin.clone()),
                ),
                Some("inventory plugin 'script'"),
            );
            let mut fixed = Mapping::new();
            fixed.insert(Node::bare(Value::Str("hosts".into())), value.clone());
            fixed
        }
    };
    if let Some(list) = map.get("hosts") {
        let Value::Seq(items) = &list.value else {
            return Err(Diagnostic::new(format!(
                "Value contains '{group}.hosts' which is '{}' instead of 'list'.",
                list.python_type()
            )));
        };
        for item in items {
            let host = crate::pyrepr::str_of(&item.value);
            hosts.insert(host.clone());
            data.add_host(&host, Some(group_id), None).map_err(|e| Diagnostic::new(e.0))?;
        }
    }
    if let Some(vars) = map.get("vars") {
        let Value::Map(vars) = &vars.value else {
            return Err(Diagnostic::new(format!(
                "Value contains '{group}.vars' which is '{}' instead of 'dict'.",
                vars.python_type()
            )));
        };
        for (k, v) in vars.iter() {
            data.set_variable(&group, k.clone(), v.clone()).map_err(|e| Diagnostic::new(e.0))?;
        }
    }
    if let Some(children) = map.get("children") {
        let names: Vec<String> = match &children.value {
            Value::Seq(items) => items.iter().map(|i| crate::pyrepr::str_of(&i.value)).collect(),
            Value::Map(m) => m.keys().map(|k| crate::pyrepr::str_of(&k.value)).collect(),
            Value::Str(s) => s.chars().map(String::from).collect(),
            _ => Vec::new(),
        };
        for child in names {
            let child_id = data.add_group(&child).map_err(|e| Diagnostic::new(e.0))?;
            let child = data.group(child_id).name.clone();
            data.add_child(&group, &child).map_err(|e| Diagnostic::new(e.0))?;
        }
    }
    Ok(())
}

/// Strings ansible's decoder leaves untrusted outside `_meta.hostvars` and `vars`.
fn untrusted(node: &Node) -> Node {
    let value = match &node.value {
        Value::Str(s) => Value::Unsafe(s.clone()),
        Value::Seq(items) => Value::Seq(items.iter().map(untrusted).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), untrusted(v))).collect()),
        other => other.clone(),
    };
    Node::new(value, node.origin.clone())
}

/// `get_host_variables`: the script's `--host NAME` output (empty output is no variables).
fn host_variables(path: &Path, host: &str) -> Result<Node, Diagnostic> {
    let out = run(path, &["--host", host])?;
    if out.stdout.trim().is_empty() {
        return Ok(Node::bare(Value::Map(Mapping::new())));
    }
    tack_loader::json::parse(&out.stdout, None).map_err(|e| {
        with_help(
            Diagnostic::caused_by(
                format!(
                    "Inventory script result for host {} could not be parsed as JSON.",
                    repr_str(host)
                ),
                None,
                Diagnostic::new(e.to_string()),
            ),
            &out.help,
        )
    })
}
