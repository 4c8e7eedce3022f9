//! `validate_argument_spec`, as ansible's action plugin runs it: the value of every task
//! variable named like an option (rendered), overridden by `provided_arguments`, validated
//! against `argument_spec` by [`crate::argspec::validate`]; every error is listed in the
//! failure (`argument_errors`, `msg`), with the spec (`argument_spec_data`) and
//! `validate_args_context` (a role's name, entry point and path when the role loader added
//! the task). A spec's `default`s are checked, never made variables.
//!
//! The task a role's or a play's spec adds has no place in any file
//! (`Role._prepend_validation_task` and `PlayIterator` build its data in memory), so its error shows `Origin: <unknown>` and that data's repr,
//! as ansible's does.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use crate::output::errored;
use tack_report::result::{b, s};

fn map_of(nodes: Vec<(&str, Node)>) -> Node {
    let mut m = Mapping::new();
    for (k, v) in nodes {
        m.insert(s(k), v);
    }
    Node::bare(Value::Map(m))
}

/// The repr of the task data `Role._create_validation_task` builds, which ansible shows
/// (shortened) for an error in it.
fn generated_task_repr(args: &Mapping) -> String {
    let arg = |k: &str| args.get(k).cloned().unwrap_or_else(|| map_of(Vec::new()));
    let context = arg("validate_args_context");
    let entry = context
        .as_map()
        .and_then(|m| m.get("argument_spec_name"))
        .map(|n| tack_yaml::pyrepr::str(&n.value))
        .unwrap_or_default();
    // A play's task (`PlayIterator`) is written name first and without `provided_arguments`;
    // its `tags` come last, past what the shortened repr ever shows.
    if context.as_map().and_then(|m| m.get("type")).and_then(Node::as_str) == Some("play") {
        let data = map_of(vec![
            ("name", s(&format!("Validating arguments against arg spec {entry}"))),
            ("action", s("ansible.builtin.validate_argument_spec")),
            (
                "args",
                map_of(vec![
                    ("argument_spec", arg("argument_spec")),
                    ("validate_args_context", context),
                ]),
            ),
            ("tags", Node::bare(Value::Seq(vec![s("always")]))),
        ]);
        return tack_yaml::pyrepr::repr(&data.value);
    }
    let data = map_of(vec![
        ("action", s("ansible.builtin.validate_argument_spec")),
        (
            "args",
            map_of(vec![
                ("argument_spec", arg("argument_spec")),
                ("provided_arguments", arg("provided_arguments")),
                ("validate_args_context", context),
            ]),
        ),
        ("name", s(&format!("Validating arguments against arg spec '{entry}'"))),
        ("tags", Node::bare(Value::Seq(vec![s("always")]))),
    ]);
    tack_yaml::pyrepr::repr(&data.value)
}

/// An error ansible's action raises (`AnsibleError`), before any result is made.
fn raised(msg: String, input: &ActionInput<'_>) -> ActionOutput {
    let cause = Diagnostic::new(msg);
    let mut out =
        errored(Diagnostic::caused_by("Task failed.", input.task_origin.clone(), cause.clone()));
    if input.task_origin.is_none() {
        let mut diag = Diagnostic::caused_by("Task failed.", None, cause);
        diag.origin = Some(tack_diag::Origin::described("<unknown>"));
        diag.value_repr = Some(generated_task_repr(input.args).into());
        out.error = Some(diag);
    }
    out
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let args = input.args;
    let context = args.get("validate_args_context").cloned().unwrap_or_else(|| map_of(Vec::new()));
    let Some(spec_node) = args.get("argument_spec") else {
        let shown = tack_yaml::pyrepr::repr(&Value::Map(args.clone()));
        return raised(format!("\"argument_spec\" arg is required in args: {shown}"), input);
    };
    let Value::Map(spec) = &spec_node.value else {
        return raised(
            format!(
                "Incorrect type for argument_spec, expected dict and got {}",
                spec_node.value.loaded_type_repr()
            ),
            input,
        );
    };
    let provided = match args.get("provided_arguments").map(|n| &n.value) {
        None => Mapping::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(other) => {
            return raised(
                format!(
                    "Incorrect type for provided_arguments, expected dict and got {}",
                    other.loaded_type_repr()
                ),
                input,
            );
        }
    };
    // `get_args_from_task_vars`: the variables named like an option, rendered together as
    // ansible renders them (one templating operation: a deprecation they share shows once).
    let mut from_vars = Mapping::new();
    for (name, _) in spec.iter() {
        let name_text = tack_yaml::pyrepr::str(&name.value);
        let Some(binding) = input.scope.get(&name_text) else { continue };
        from_vars.insert(name.clone(), binding.node().clone());
    }
    let mut parameters = match input.templar.render(&Node::bare(Value::Map(from_vars)), input.scope)
    {
        Ok(rendered) => match rendered.value.value {
            Value::Map(rendered) => rendered,
            _ => Mapping::new(),
        },
        Err(e) => {
            return errored(Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                e.to_diagnostic(),
            ));
        }
    };
    for (k, v) in provided.iter() {
        parameters.insert(k.clone(), v.clone());
    }
    let outcome = match crate::argspec::validate(spec, &parameters) {
        Ok(outcome) => outcome,
        Err(e) => return raised(e.to_string(), input),
    };
    for warning in &outcome.warnings {
        tack_diag::warn(&Diagnostic::new(warning.clone()));
    }
    let mut data = Mapping::new();
    data.insert(s("validate_args_context"), context);
    data.insert(s("changed"), b(false));
    if outcome.errors.is_empty() {
        data.insert(s("msg"), s("The arg spec validation passed"));
        return ActionOutput::new(data);
    }
    let msg = format!("Validation of arguments failed:\n{}", outcome.errors.join("\n"));
    data.insert(s("argument_spec_data"), spec_node.clone());
    data.insert(
        s("argument_errors"),
        Node::bare(Value::Seq(outcome.errors.iter().map(|e| s(e)).collect())),
    );
    let mut out = ActionOutput::action_failed(data, s(&msg), input.task_origin.clone());
    if input.task_origin.is_none() {
        out.error = Some(Diagnostic::about_value(
            format!("Task failed: Action failed: {msg}"),
            generated_task_repr(args),
        ));
    }
    out
}
