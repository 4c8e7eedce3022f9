//! `plugin_filters_cfg`: the file that rejects modules and actions by name, read once at
//! startup as ansible's plugin loader reads it (its warnings come before anything else the
//! command prints). It owns the file's reading and judging; where a rejected name stops a
//! task is the loader's (`tack_playbook::ModuleSearch::rejects`).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use tack_config::Config;
use tack_diag::{Diagnostic, ErrorClass};
use tack_yaml::Value;

/// Where ansible looks when the setting is not set; a missing file there is no warning.
const DEFAULT_FILE: &str = "/etc/ansible/plugin_filters.yml";

/// The names a run rejects (empty without a filter file), after printing ansible's warnings
/// for a file it skips. Rejecting `stat` is an error, as in ansible: its action plugins cannot
/// work without it.
pub(crate) fn load(config: &Config) -> Result<Arc<BTreeSet<String>>, Diagnostic> {
    let configured = config.get("PLUGIN_FILTERS_CFG").and_then(|v| v.as_str());
    let file = configured.unwrap_or(DEFAULT_FILE);
    let rejected = match std::fs::read(file) {
        Ok(bytes) => read(Path::new(file), &bytes)?,
        Err(_) => {
            if configured.is_some() {
                warn(format!("The plugin filter file, {file} does not exist. Skipping."));
            }
            BTreeSet::new()
        }
    };
    if rejected.contains("stat") {
        return Err(Diagnostic::new(format!(
            "The stat module was specified in the module reject list file, {file}, but Ansible \
             will not function without the stat module.  Please remove stat from the reject \
             list."
        )));
    }
    Ok(Arc::new(rejected))
}

fn warn(message: String) {
    tack_diag::warn(&Diagnostic::new(message));
}

/// The reject list of a filter file's text, or nothing (with ansible's warning) for a file
/// ansible skips. A file ansible itself crashes on (no mapping, a version 1.0 without
/// `module_rejectlist`) is an error naming the file and what it lacks.
fn read(path: &Path, bytes: &[u8]) -> Result<BTreeSet<String>, Diagnostic> {
    let file = path.display();
    let parsed =
        tack_yaml::source_text(bytes, path).and_then(|text| tack_yaml::load_one(text, None));
    let data = match parsed {
        Ok(node) => node.value,
        Err(err) => {
            warn(format!("The plugin filter file, {file} was not parsable. Skipping: {err}"));
            return Ok(BTreeSet::new());
        }
    };
    let unexpected = |what: &str| {
        Diagnostic::new(format!("The plugin filter file, {file}, {what}."))
            .with_class(ErrorClass::Unexpected)
    };
    let Value::Map(map) = data else {
        return Err(unexpected("is not a mapping of filter_version and module_rejectlist"));
    };
    let Some(version) = map.get("filter_version") else {
        warn(format!("The plugin filter file, {file} was invalid. Skipping."));
        return Ok(BTreeSet::new());
    };
    // ansible compares the version's text: `1.0` written as a float is `1.0`, `1` is not.
    let version = match &version.value {
        Value::Str(s) | Value::Unsafe(s) => s.trim().to_string(),
        Value::Float(f) => tack_py::repr::float_repr(*f),
        Value::Int(i) => i.to_string(),
        other => format!("{other:?}"),
    };
    if version != "1.0" {
        warn(format!(
            "The plugin filter file, {file} was a version not recognized by this version of \
             Ansible. Skipping."
        ));
        return Ok(BTreeSet::new());
    }
    let Some(list) = map.get("module_rejectlist") else {
        return Err(unexpected("has filter_version 1.0 but no module_rejectlist"));
    };
    // Python's `frozenset` of what is there: a list's items, a mapping's keys, a string's
    // characters; anything else is not a list.
    let names: Vec<String> = match &list.value {
        Value::Seq(items) => items.iter().filter_map(scalar_text).collect(),
        Value::Map(map) => map.keys().filter_map(scalar_text).collect(),
        Value::Str(s) | Value::Unsafe(s) => s.chars().map(String::from).collect(),
        _ => {
            warn(format!(
                "Unable to parse the plugin filter file {file} as module_rejectlist is not a \
                 list. Skipping."
            ));
            return Ok(BTreeSet::new());
        }
    };
    Ok(names.into_iter().collect())
}

/// A name the list can hold that a task could be called by: only strings are.
fn scalar_text(node: &tack_yaml::Node) -> Option<String> {
    match &node.value {
        Value::Str(s) | Value::Unsafe(s) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Result<Vec<String>, Diagnostic> {
        read(Path::new("/f.yml"), text.as_bytes()).map(|set| set.into_iter().collect())
    }

    #[test]
    fn a_version_one_list_rejects_its_names() {
        let text = "filter_version: 1.0\nmodule_rejectlist:\n  - copy\n  - pause\n";
        assert_eq!(names(text).unwrap(), ["copy", "pause"]);
        let text = "filter_version: '1.0'\nmodule_rejectlist: {ping: 1}\n";
        assert_eq!(names(text).unwrap(), ["ping"]);
    }

    #[test]
    fn files_ansible_skips_reject_nothing() {
        assert!(names("filter_version: 2\nmodule_rejectlist: [copy]\n").unwrap().is_empty());
        assert!(names("filter_version: 1\nmodule_rejectlist: [copy]\n").unwrap().is_empty());
        assert!(names("module_rejectlist: [copy]\n").unwrap().is_empty());
        assert!(names("filter_version: 1.0\nmodule_rejectlist: 5\n").unwrap().is_empty());
        assert!(names("filter_version: 1.0\nmodule_rejectlist:\n").unwrap().is_empty());
        assert!(names("{{{\n").unwrap().is_empty());
    }

    #[test]
    fn files_ansible_crashes_on_are_errors_naming_the_file() {
        let err = names("- a\n").unwrap_err();
        assert_eq!(err.class, ErrorClass::Unexpected);
        assert!(err.message.contains("/f.yml"), "{}", err.message);
        let err = names("filter_version: 1.0\n").unwrap_err();
        assert!(err.message.contains("no module_rejectlist"), "{}", err.message);
    }
}
