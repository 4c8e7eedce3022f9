//! `include_vars` for one file: found as ansible's action finds it (the role's and the
//! task's `vars/`, then beside them), loaded with the run's loader (vaults decrypted), its
//! variables set for the host at the `include_vars` rung (or nested under `name`).
//!
//! Directory loading (`dir`, `depth`, `files_matching`, `ignore_files`, `extensions`,
//! `ignore_unknown_extensions`) and `hash_behaviour` are refused by name.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::{ActionInput, ActionOutput};
use crate::result::{b, s};

const REFUSED: &[&str] = &[
    "dir",
    "depth",
    "files_matching",
    "ignore_files",
    "extensions",
    "ignore_unknown_extensions",
    "hash_behaviour",
];

pub fn run(input: &ActionInput<'_>) -> ActionOutput {
    let origin = input.task_origin.clone();
    for name in REFUSED {
        if input.args.get(name).is_some() {
            return super::errored(Diagnostic::at(
                format!("tack does not support the include_vars option '{name}' yet"),
                origin,
            ));
        }
    }
    if let Some(refused) = input.refuse_host_named(&["file", "_raw_params"], "read") {
        return refused;
    }
    let source = input.args.get("file").or_else(|| input.args.get("_raw_params"));
    let Some(source) = source.map(|n| tack_yaml::pyrepr::str(&n.value)) else {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        return ActionOutput::action_failed(data, s("No file was specified"), origin);
    };
    let path = match super::copy::find(input.search, "vars", &source) {
        Ok(path) => path,
        Err(e) => {
            // ansible's include_vars reports a missing file under `message`, with an empty
            // result and a generic failure text of its own.
            let mut data = Mapping::new();
            data.insert(s("ansible_facts"), Node::bare(Value::Map(Mapping::new())));
            data.insert(s("ansible_included_var_files"), Node::bare(Value::Seq(Vec::new())));
            data.insert(s("changed"), b(false));
            data.insert(s("message"), s(&e.message));
            data.insert(s("failed"), b(true));
            data.insert(s("msg"), s("Task failed: Action failed: Unknown error."));
            let mut out = ActionOutput::new(data);
            out.error = Some(Diagnostic::at("Task failed: Action failed: Unknown error.", origin));
            return out;
        }
    };
    let loaded = match input.templar.loader().load_file(&path) {
        Ok(node) => node,
        Err(e) => {
            return super::errored(Diagnostic::caused_by(
                "Task failed.",
                origin,
                e.to_diagnostic(),
            ));
        }
    };
    let vars = match loaded.value {
        Value::Map(m) => m,
        Value::Null => Mapping::new(),
        _ => {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let msg = format!("{} must be stored as a dictionary/hash", path.display());
            return ActionOutput::action_failed(data, s(&msg), origin);
        }
    };
    let facts = match input.args.get("name").map(|n| tack_yaml::pyrepr::str(&n.value)) {
        Some(name) => {
            let mut nested = Mapping::new();
            nested.insert(s(&name), Node::bare(Value::Map(vars)));
            nested
        }
        None => vars,
    };
    let mut data = Mapping::new();
    data.insert(s("ansible_facts"), Node::bare(Value::Map(facts.clone())));
    data.insert(
        s("ansible_included_var_files"),
        Node::bare(Value::Seq(vec![s(&path.to_string_lossy())])),
    );
    data.insert(s("changed"), b(false));
    let mut out = ActionOutput::new(data);
    out.included =
        facts.iter().map(|(k, v)| (tack_yaml::pyrepr::str(&k.value), v.clone())).collect();
    out
}
