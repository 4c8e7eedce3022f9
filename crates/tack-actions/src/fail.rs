//! `fail`: fails the task with `msg` (ansible's default text when none is given).

use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let msg = input
        .args
        .get("msg")
        .cloned()
        .unwrap_or_else(|| Node::bare(Value::Str("Failed as requested from task".into())));
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    ActionOutput::action_failed(data, msg, input.task_origin.clone())
}
