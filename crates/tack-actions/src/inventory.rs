//! `add_host` and `group_by`, as ansible's action plugins of those names read their
//! arguments and report (`add_host`: `{host_name, groups, host_vars}`; `group_by`:
//! `add_group`, `parent_groups`), changing the run's inventory through [`LiveInventory`].
//!
//! They change only the in-memory inventory; the executor runs `add_host` once per task
//! (it bypasses the host loop) and refreshes the play's view of the inventory after either.

use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

fn text(node: &Node) -> String {
    tack_yaml::pyrepr::str(&node.value)
}

fn failed(msg: &str, input: &ActionInput<'_>) -> ActionOutput {
    ActionOutput::action_failed(Mapping::new(), s(msg), input.task_origin.clone())
}

/// `add_host`.
pub(crate) fn add_host(input: &ActionInput<'_>) -> ActionOutput {
    let mut args = input.args.clone();
    let name = ["name", "hostname", "host"].iter().find_map(|k| args.get(k).cloned());
    let Some(name) = name else {
        return failed("name, host or hostname needs to be provided", input);
    };
    let name = text(&name);
    input.trace.note_at(2, format!("creating host via 'add_host': hostname={name}"));
    let (host_name, port) = match tack_inventory::parse_address(&name, false) {
        Ok((host, port)) => (host, port),
        Err(_) => (name.clone(), None),
    };
    if let Some(port) = port.filter(|p| *p != 0) {
        let value = i64::try_from(port).map(Value::Int).unwrap_or(Value::BigInt(port.to_string()));
        args.insert(s("ansible_ssh_port"), Node::bare(value));
    }
    let groups = ["groupname", "groups", "group"].iter().find_map(|k| args.get(k).cloned());
    let mut new_groups: Vec<String> = Vec::new();
    if let Some(groups) = groups.filter(|g| g.value.is_truthy()) {
        let list: Vec<String> = match &groups.value {
            Value::Seq(items) => items.iter().map(text).collect(),
            Value::Str(text) => text.split(',').map(str::to_string).collect(),
            _ => return failed("Groups must be specified as a list.", input),
        };
        for group in list {
            // ansible compares before stripping, as its loop does.
            if !new_groups.contains(&group) {
                new_groups.push(group.trim().to_string());
            }
        }
    }
    let special = ["name", "hostname", "groupname", "groups"];
    let mut host_vars = Mapping::new();
    for (k, v) in args.iter() {
        if !special.contains(&k.as_str().unwrap_or_default()) {
            host_vars.insert(k.clone(), v.clone());
        }
    }
    let request = tack_inventory::AddHost {
        host_name: host_name.clone(),
        groups: new_groups.clone(),
        host_vars: host_vars.clone(),
    };
    let changed = match input.inventory.add_host(request) {
        Ok(changed) => changed,
        Err(msg) => return failed(&msg, input),
    };
    let mut added = Mapping::new();
    added.insert(s("host_name"), s(&host_name));
    added.insert(s("groups"), Node::bare(Value::Seq(new_groups.iter().map(|g| s(g)).collect())));
    added.insert(s("host_vars"), Node::bare(Value::Map(host_vars)));
    let mut data = Mapping::new();
    data.insert(s("add_host"), Node::bare(Value::Map(added)));
    data.insert(s("changed"), b(changed));
    ActionOutput::new(data)
}

/// `group_by` on the host the task runs on.
pub(crate) fn group_by(input: &ActionInput<'_>) -> ActionOutput {
    let Some(key) = input.args.get("key") else {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        let msg = s("the 'key' param is required when using group_by");
        return ActionOutput::action_failed(data, msg, input.task_origin.clone());
    };
    let group_name = text(key);
    let parents: Vec<String> = match input.args.get("parents").map(|n| &n.value) {
        None => vec!["all".into()],
        Some(Value::Seq(items)) => items.iter().map(text).collect(),
        Some(other) => vec![tack_yaml::pyrepr::str(other)],
    };
    let parents: Vec<String> = parents.iter().map(|p| p.replace(' ', "-")).collect();
    let host = input
        .scope
        .get("inventory_hostname")
        .map(|b| tack_yaml::pyrepr::str(&b.node().value))
        .unwrap_or_default();
    let request = tack_inventory::AddGroup {
        host_name: host,
        group_name: group_name.clone(),
        parents: parents.clone(),
    };
    let changed = match input.inventory.add_group(request) {
        Ok(changed) => changed,
        Err(msg) => return failed(&msg, input),
    };
    let mut data = Mapping::new();
    data.insert(s("add_group"), s(&group_name.replace(' ', "-")));
    data.insert(s("parent_groups"), Node::bare(Value::Seq(parents.iter().map(|p| s(p)).collect())));
    data.insert(s("changed"), b(changed));
    ActionOutput::new(data)
}
