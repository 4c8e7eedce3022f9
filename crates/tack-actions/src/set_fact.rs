//! `set_fact`: sets host variables from its (rendered) arguments, at the precedence of facts
//! and registered results; with `cacheable` they also join the host's facts, as ansible's
//! fact cache keeps them (the executor applies both). Its keys are templates (ansible renders them, for
//! names made at run time); a name a managed host's value chose makes the fact the host's.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let mut facts = Mapping::new();
    let mut out_facts = Vec::new();
    // `boolean(cacheable)`, strict as ansible's default.
    let cacheable = match input.args.get("cacheable").map(|n| n.value.boolean_strict()) {
        None => false,
        Some(Ok(cacheable)) => cacheable,
        // Raised inside the action, not a failure it returns.
        Some(Err(message)) => {
            return crate::output::errored(Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                Diagnostic::new(message),
            ));
        }
    };
    for (key, value) in input.args.iter() {
        if key.as_str() == Some("cacheable") {
            continue;
        }
        let mut provenance = input.derived.clone();
        let key = match key.as_str() {
            Some(text) if tack_template::is_possibly_template(text) => {
                match input.templar.render(key, input.scope) {
                    Ok(rendered) => {
                        if rendered.provenance.is_managed_host() {
                            provenance = tack_template::Provenance::ManagedHost;
                        }
                        Node::new(rendered.value.value, key.origin.clone())
                    }
                    Err(e) => {
                        return crate::output::errored(Diagnostic::caused_by(
                            "Task failed.",
                            input.task_origin.clone(),
                            e.to_diagnostic(),
                        ));
                    }
                }
            }
            _ => key.clone(),
        };
        if let Err(invalid) = tack_playbook::validate_variable_name(&key) {
            return crate::output::errored(Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                invalid,
            ));
        }
        let name = tack_yaml::pyrepr::str(&key.value);
        facts.insert(key, value.clone());
        out_facts.push((name, value.clone(), provenance));
    }
    let mut data = Mapping::new();
    if facts.is_empty() {
        data.insert(s("changed"), b(false));
        let msg =
            "No key/value pairs provided, at least one is required for this action to succeed";
        return ActionOutput::action_failed(data, s(msg), input.task_origin.clone());
    }
    tack_loader::vars::warn_if_reserved(&facts);
    data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
    data.insert(s("changed"), b(false));
    let mut out = ActionOutput::new(data);
    // What set_fact stores is what its arguments rendered to: its provenance is that of
    // everything the render read, which the executor passes in.
    out.facts = out_facts;
    out.facts_trust_marked = input.trust_marked;
    out.cacheable = cacheable;
    out
}
