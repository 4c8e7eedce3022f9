//! Inventory plugins tack has no native code for (`constructed`, `generator`, a collection's,
//! one in an `inventory_plugins/` directory), run by ansible-core's own plugin: one process
//! of the controller's ansible-core per source that needs one, running our `worker.py`, which
//! rebuilds ansible's inventory from what tack read so far, lets the plugin parse the source,
//! and answers with the inventory after it (`tack_inventory::foreign`).
//!
//! Owns the process and the wire format; which sources come here is the inventory reader's.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Map, Value as Json, json};
use tack_diag::Diagnostic;
use tack_inventory::foreign::{
    ForeignOutcome, ForeignPlugins, GroupSnapshot, HostSnapshot, Snapshot,
};
use tack_yaml::{Mapping, Value};

use crate::python_plugins::from_wire;

/// Our worker script, after what every worker shares (`python_wire.py`).
const WORKER: &str = concat!(include_str!("../python_wire.py"), include_str!("worker.py"));

/// ansible-core's inventory plugins, for the sources tack does not read itself.
#[derive(Debug, Clone, Default)]
pub struct PythonInventory {
    /// The configuration file the run read, so the worker's ansible reads the same.
    pub config_file: Option<PathBuf>,
    /// The directory relative paths in a plugin's configuration start from.
    pub basedir: PathBuf,
    /// Where collections are found (a collection's plugin is named by its full name).
    pub collections: Vec<PathBuf>,
    /// `inventory_plugins/` directories and the configured `inventory_plugins` path.
    pub plugin_dirs: Vec<PathBuf>,
    /// `cache_plugins/` directories (a plugin's inventory cache may name one there).
    pub cache_plugin_dirs: Vec<PathBuf>,
    pub verbosity: u8,
    /// The `-e` values, as written (a plugin templates with them).
    pub extra_vars: Vec<String>,
    /// Whether plugins may use their caches (not with `--flush-cache`).
    pub cache: bool,
    /// `--ansible-python` (or `TACK_ANSIBLE_PYTHON`), when given.
    pub explicit: Option<PathBuf>,
    /// The interpreters to try otherwise, in order (the inventory is not read yet, so its
    /// hosts' interpreters are not among them).
    pub candidates: Vec<String>,
    /// The interpreter found, once asked.
    pub found: std::sync::OnceLock<Result<PathBuf, String>>,
}

impl ForeignPlugins for PythonInventory {
    fn parse(
        &self,
        plugin: &str,
        source: &str,
        inventory: &Snapshot,
        processed: &[String],
    ) -> ForeignOutcome {
        match self.exchange(plugin, source, inventory, processed) {
            Ok(reply) => outcome(&reply),
            Err(why) => ForeignOutcome::Failed(Diagnostic::new(why)),
        }
    }
}

impl PythonInventory {
    fn exchange(
        &self,
        plugin: &str,
        source: &str,
        inventory: &Snapshot,
        processed: &[String],
    ) -> Result<Map<String, Json>, String> {
        let python = self.python().map_err(|why| {
            format!(
                "the '{plugin}' inventory plugin runs through ansible-core on the controller: {why}"
            )
        })?;
        let paths = |dirs: &[PathBuf]| -> Vec<String> {
            dirs.iter().map(|d| d.display().to_string()).collect()
        };
        let request = json!({
            "plugin": plugin,
            "source": source,
            "inventory": snapshot_to_wire(inventory),
            "processed": processed,
            "collections": paths(&self.collections),
            "plugin_dirs": paths(&self.plugin_dirs),
            "cache_plugin_dirs": paths(&self.cache_plugin_dirs),
            "basedir": self.basedir.display().to_string(),
            "verbosity": self.verbosity,
            "extra_vars": self.extra_vars,
            "cache": self.cache,
        });
        let mut command = Command::new(&python);
        command.arg("-c").arg(WORKER).stdin(Stdio::piped()).stdout(Stdio::piped());
        command.env("PYTHONDONTWRITEBYTECODE", "1");
        if let Some(config) = &self.config_file {
            command.env("ANSIBLE_CONFIG", config);
        }
        let mut child = command.spawn().map_err(|e| {
            format!("could not start {} for the '{plugin}' inventory plugin: {e}", python.display())
        })?;
        let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the inventory plugin worker's pipes were not opened".into());
        };
        let mut line = request.to_string();
        line.push('\n');
        let sent = input.write_all(line.as_bytes());
        drop(input);
        let mut answer = String::new();
        let read = BufReader::new(output).read_line(&mut answer);
        let status = child.wait();
        sent.map_err(|e| format!("the inventory plugin worker stopped: {e}"))?;
        read.map_err(|e| format!("the inventory plugin worker stopped: {e}"))?;
        match serde_json::from_str(&answer) {
            Ok(Json::Object(map)) => Ok(map),
            _ => Err(match status {
                Ok(status) => format!("the inventory plugin worker stopped ({status})"),
                Err(e) => format!("the inventory plugin worker stopped: {e}"),
            }),
        }
    }
}

impl PythonInventory {
    /// The controller's interpreter with ansible-core, found at the first source that needs
    /// it (one probe per candidate, once per run).
    fn python(&self) -> Result<PathBuf, String> {
        self.found
            .get_or_init(|| {
                match crate::python_path::find(self.explicit.as_deref(), &self.candidates) {
                    Ok(crate::python_path::Found::Core(core)) => Ok(core.python),
                    Ok(crate::python_path::Found::None(why)) => Err(why),
                    Err(e) => Err(e.to_string()),
                }
            })
            .clone()
    }
}

fn outcome(reply: &Map<String, Json>) -> ForeignOutcome {
    let text = |key: &str| reply.get(key).and_then(Json::as_str).map(str::to_string);
    if reply.get("declined").is_some() {
        return ForeignOutcome::Declined;
    }
    if let Some(why) = text("failed") {
        let origin = reply.get("origin").and_then(|o| {
            let path = o.get("path")?.as_str()?;
            let number = |k: &str| o.get(k).and_then(Json::as_u64).map_or(0, |n| n as u32);
            let path: std::sync::Arc<std::path::Path> = std::path::Path::new(path).into();
            Some(tack_diag::Origin::new(path, number("line"), number("col")))
        });
        return ForeignOutcome::Failed(Diagnostic::at(why, origin).parser());
    }
    if let Some(fatal) = text("fatal") {
        return ForeignOutcome::Failed(Diagnostic::new(format!(
            "the inventory plugin worker could not load ansible-core: {fatal}"
        )));
    }
    match reply.get("inventory") {
        Some(inventory) => ForeignOutcome::Parsed(snapshot_from_wire(inventory)),
        None => ForeignOutcome::Failed(Diagnostic::new(format!(
            "the inventory plugin worker answered {}",
            Json::Object(reply.clone())
        ))),
    }
}

fn value_from_wire(json: &Json) -> Value {
    match json {
        Json::Array(items) => {
            Value::Seq(items.iter().map(|j| tack_yaml::Node::bare(value_from_wire(j))).collect())
        }
        Json::Object(map) => match map.get("__tack__").and_then(Json::as_str) {
            Some("unsafe") => Value::Unsafe(text_of(map.get("text"))),
            Some("vault") => Value::Vault(text_of(map.get("ciphertext"))),
            Some(_) => from_wire(json),
            None => {
                let mut out = Mapping::new();
                for (k, v) in map {
                    out.insert(
                        tack_yaml::Node::bare(Value::Str(k.clone())),
                        tack_yaml::Node::bare(value_from_wire(v)),
                    );
                }
                Value::Map(out)
            }
        },
        other => from_wire(other),
    }
}

fn text_of(json: Option<&Json>) -> String {
    json.and_then(Json::as_str).unwrap_or_default().to_string()
}

fn vars_to_wire(vars: &Mapping) -> Json {
    crate::python_plugins::to_wire_kept(&Value::Map(vars.clone()))
}

fn vars_from_wire(json: Option<&Json>) -> Mapping {
    match json.map(value_from_wire) {
        Some(Value::Map(map)) => map,
        _ => Mapping::new(),
    }
}

fn names(json: Option<&Json>) -> Vec<String> {
    json.and_then(Json::as_array)
        .map(|items| items.iter().filter_map(Json::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn snapshot_to_wire(snapshot: &Snapshot) -> Json {
    let groups: Vec<Json> = snapshot
        .groups
        .iter()
        .map(|g| {
            json!({
                "name": g.name,
                "vars": vars_to_wire(&g.vars),
                "children": g.children,
                "hosts": g.hosts,
                "priority": g.priority,
            })
        })
        .collect();
    let hosts: Vec<Json> = snapshot
        .hosts
        .iter()
        .map(|h| json!({ "name": h.name, "vars": vars_to_wire(&h.vars) }))
        .collect();
    json!({ "groups": groups, "hosts": hosts })
}

fn snapshot_from_wire(json: &Json) -> Snapshot {
    let list = |key: &str| json.get(key).and_then(Json::as_array).cloned().unwrap_or_default();
    let name =
        |item: &Json| item.get("name").and_then(Json::as_str).unwrap_or_default().to_string();
    let groups = list("groups")
        .iter()
        .map(|g| GroupSnapshot {
            name: name(g),
            vars: vars_from_wire(g.get("vars")),
            children: names(g.get("children")),
            hosts: names(g.get("hosts")),
            priority: g.get("priority").and_then(Json::as_i64).unwrap_or(1),
        })
        .collect();
    let hosts = list("hosts")
        .iter()
        .map(|h| HostSnapshot { name: name(h), vars: vars_from_wire(h.get("vars")) })
        .collect();
    Snapshot { groups, hosts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_ansible_core_the_plugin_fails_naming_why() {
        let inventory = PythonInventory {
            explicit: Some(PathBuf::from("/nonexistent/python")),
            ..PythonInventory::default()
        };
        let ForeignOutcome::Failed(why) =
            inventory.parse("constructed", "/x/c.yml", &Snapshot::default(), &[])
        else {
            panic!("it parsed");
        };
        assert!(
            why.message.starts_with(
                "the 'constructed' inventory plugin runs through ansible-core on the controller: \
                 --ansible-python /nonexistent/python: cannot run it"
            ),
            "{}",
            why.message
        );
    }

    #[test]
    fn a_snapshot_crosses_the_wire_and_back() {
        let vars = tack_yaml::load_one("{a: 1, b: [x, {c: .nan}]}", None).unwrap();
        let Value::Map(vars) = vars.value else { panic!("a mapping") };
        let snapshot = Snapshot {
            groups: vec![GroupSnapshot {
                name: "web".into(),
                vars: vars.clone(),
                children: vec!["db".into()],
                hosts: vec!["h1".into()],
                priority: 3,
            }],
            hosts: vec![HostSnapshot { name: "h1".into(), vars }],
        };
        let back = snapshot_from_wire(&snapshot_to_wire(&snapshot));
        assert_eq!(back.groups[0].name, "web");
        assert_eq!(back.groups[0].children, ["db"]);
        assert_eq!(back.groups[0].hosts, ["h1"]);
        assert_eq!(back.groups[0].priority, 3);
        let repr = |m: &Mapping| tack_yaml::pyrepr::repr(&Value::Map(m.clone()));
        assert_eq!(repr(&back.hosts[0].vars), repr(&snapshot.hosts[0].vars));
    }
}
