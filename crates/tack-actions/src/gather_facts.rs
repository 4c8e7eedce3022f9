//! `gather_facts` as a task, as ansible-core 2.21's action plugin runs it with its default
//! `FACTS_MODULES` (`smart`, which is `setup` for tack's connections): `setup` with the
//! task's arguments (`parallel` taken out, unset ones dropped), its facts marked gathered
//! when they are kept (the mark is internal: the result does not show it), its warnings and deprecations kept, and the result hidden from `-v` as ansible hides it.
//! A failed `setup` fails the task in ansible's words, naming the module.

use tack_agent::Invocation;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let mut args = json::map_to_json(input.args);
    args.remove("parallel");
    args.retain(|_, v| !v.is_null());
    let invocation = Invocation { diff: false, ..input.invocation(args) };
    let answer = match input.conn.run_module("setup", &invocation) {
        Ok(answer) => json::map_from_json(&answer),
        Err(e) => {
            let mut failed = Mapping::new();
            failed.insert(s("failed"), b(true));
            failed.insert(s("msg"), s(&e.to_string()));
            failed
        }
    };
    let mut data = Mapping::new();
    let mut facts = Mapping::new();
    if answer.get("failed").is_some_and(|f| f.value.is_truthy()) {
        let mut failed = Mapping::new();
        failed.insert(s("ansible.legacy.setup"), Node::bare(Value::Map(answer)));
        data.insert(s("failed_modules"), Node::bare(Value::Map(failed)));
        data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
        let msg = "The following modules failed to execute: ansible.legacy.setup.";
        return ActionOutput::action_failed(data, s(msg), input.task_origin.clone());
    }
    if let Some(found) = answer.get("ansible_facts").and_then(Node::as_map) {
        facts = found.clone();
    }
    data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
    for key in ["warnings", "deprecations"] {
        if let Some(list) = answer.get(key).filter(|l| l.as_seq().is_some_and(|l| !l.is_empty())) {
            data.insert(s(key), list.clone());
        }
    }
    data.insert(s("changed"), b(false));
    ActionOutput::new(data)
}
