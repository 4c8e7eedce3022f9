//! `set_stats`, as ansible's action plugin reads it: `data` (a mapping), `per_host` and
//! `aggregate` (ansible's loose booleans), returned under `ansible_stats` for the executor
//! to add to the run's custom stats.

use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::input::loose_bool;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let data = match input.args.get("data").map(|n| &n.value) {
        None => Mapping::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => {
            let mut out = Mapping::new();
            out.insert(s("failed"), b(true));
            out.insert(s("msg"), s("The 'data' option needs to be a dictionary/hash"));
            let mut output = ActionOutput::new(out);
            output.error = Some(tack_diag::Diagnostic::at(
                "Task failed: The 'data' option needs to be a dictionary/hash",
                input.task_origin.clone(),
            ));
            return output;
        }
    };
    // ansible's set_stats validates each key as a variable name, as set_fact does.
    for (key, _) in data.iter() {
        if let Err(invalid) = tack_playbook::validate_variable_name(key) {
            return crate::output::errored(tack_diag::Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                invalid,
            ));
        }
    }
    let per_host = input.args.get("per_host").is_some_and(loose_bool);
    let aggregate = input.args.get("aggregate").is_none_or(loose_bool);
    let mut stats = Mapping::new();
    stats.insert(s("data"), Node::bare(Value::Map(data)));
    stats.insert(s("per_host"), b(per_host));
    stats.insert(s("aggregate"), b(aggregate));
    let mut out = Mapping::new();
    out.insert(s("changed"), b(false));
    out.insert(s("ansible_stats"), Node::bare(Value::Map(stats)));
    ActionOutput::new(out)
}
