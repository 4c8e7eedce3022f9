//! `assert`: evaluates each `that` conditional in order; the first false one fails the task
//! with `fail_msg` (alias `msg`), otherwise the task is ok with `success_msg`.

use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let quiet = input.args.get("quiet").is_some_and(|q| q.value.is_truthy());
    let fail_msg = input
        .args
        .get("fail_msg")
        .or_else(|| input.args.get("msg"))
        .cloned()
        .unwrap_or_else(|| s("Assertion failed"));
    let success_msg =
        input.args.get("success_msg").cloned().unwrap_or_else(|| s("All assertions passed"));
    let that: Vec<Node> = match input.args.get("that").map(|n| &n.value) {
        Some(Value::Seq(items)) => items.clone(),
        // `that: '{{ list_of_expressions }}'`: each item of the list is a conditional.
        Some(_) => {
            let that = input.args.get("that").into_iter().cloned().collect();
            input
                .args
                .get("that")
                .and_then(|n| input.templar.resolve_to_list(n, input.scope))
                .unwrap_or(that)
        }
        None => {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let msg = s("missing required arguments: that");
            return ActionOutput::action_failed(data, msg, input.task_origin.clone());
        }
    };
    let mut data = Mapping::new();
    for condition in &that {
        match input.templar.evaluate_conditional(condition, input.scope) {
            Ok(result) if result.value => {}
            Ok(_) => {
                data.insert(s("evaluated_to"), b(false));
                data.insert(s("assertion"), condition.clone());
                data.insert(s("changed"), b(false));
                let mut out =
                    ActionOutput::action_failed(data, fail_msg, input.task_origin.clone());
                out.verbose_always = !quiet;
                return out;
            }
            Err(e) => {
                return crate::output::errored(tack_diag::Diagnostic::caused_by(
                    "Task failed.",
                    input.task_origin.clone(),
                    e.to_diagnostic(),
                ));
            }
        }
    }
    data.insert(s("changed"), b(false));
    data.insert(s("msg"), success_msg);
    let mut out = ActionOutput::new(data);
    out.verbose_always = !quiet;
    out
}
