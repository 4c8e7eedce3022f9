//! `debug`: shows `msg` (ansible's "Hello world!" by default) or the value of the expression
//! `var`, when the run's verbosity reaches `verbosity`.

use tack_template::TemplateErrorKind;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let mut data = Mapping::new();
    let verbosity = input
        .args
        .get("verbosity")
        .and_then(|v| match &v.value {
            Value::Int(i) => Some(*i),
            Value::Str(t) => t.trim().parse().ok(),
            _ => None,
        })
        .unwrap_or(0);
    if input.args.get("msg").is_some() && input.args.get("var").is_some() {
        data.insert(s("changed"), b(false));
        return ActionOutput::action_failed(
            data,
            s("parameters are mutually exclusive: msg|var"),
            input.task_origin.clone(),
        );
    }
    // ansible's argument spec takes `var` as a string only (`_check_type_str_no_conversion`),
    // checked before anything is shown; the action raises.
    if let Some(var) = input.args.get("var")
        && !matches!(var.value, Value::Str(_) | Value::Unsafe(_))
    {
        let text = tack_yaml::pyrepr::str(&var.value);
        let msg = format!(
            "argument 'var' is of type {} and we were unable to convert to \
             _check_type_str_no_conversion: '{text}' is not a string and conversion is not allowed",
            var.value.python_type()
        );
        let mut out = crate::output::errored(tack_diag::Diagnostic::at(
            format!("Task failed: {msg}"),
            input.task_origin.clone(),
        ));
        out.data.insert(s("msg"), s(&msg));
        return out;
    }
    let mut out_verbose = false;
    let mut warnings = Vec::new();
    if verbosity <= input.verbosity {
        if let Some(var) = input.args.get("var") {
            // An `!unsafe` expression is never evaluated: ansible refuses untrusted templates.
            if matches!(var.value, Value::Unsafe(_)) {
                return untrusted_var(input, var);
            }
            // Rendered like any argument first (`var: "{{ item }}"` names the variable the
            // item holds), then evaluated as an expression.
            let expr = tack_yaml::pyrepr::str(&var.value);
            let value = match evaluate_var(input, &expr, var, &mut warnings) {
                Ok(value) => value,
                Err(failed) => return failed,
            };
            data.insert(s(&expr), value);
        } else {
            let msg = input.args.get("msg").cloned().unwrap_or_else(|| s("Hello world!"));
            data.insert(s("msg"), msg);
        }
        out_verbose = true;
    } else {
        data.insert(s("skipped_reason"), s("Verbosity threshold not met."));
        data.insert(s("skipped"), b(true));
    }
    data.insert(s("failed"), b(false));
    data.insert(s("changed"), b(false));
    if !warnings.is_empty() {
        let texts = warnings.iter().map(|w| s(&w.message)).collect();
        data.insert(s("warnings"), Node::bare(Value::Seq(texts)));
    }
    let mut out = ActionOutput::new(data);
    out.verbose_always = out_verbose;
    if !warnings.is_empty() {
        out.notes_mut().warning_blocks = warnings;
    }
    out
}

/// ansible's failure for a `var` written `!unsafe`: its trust rules refuse to evaluate it.
fn untrusted_var(input: &ActionInput<'_>, var: &Node) -> ActionOutput {
    let cause = tack_diag::Diagnostic::at(
        "Encountered untrusted template or expression.",
        var.origin.clone(),
    )
    .with_help(tack_template::UNTRUSTED_HELP);
    let middle = tack_diag::Diagnostic::caused_by(
        "Error while resolving `var` expression.",
        var.origin.clone(),
        cause,
    );
    crate::output::errored(tack_diag::Diagnostic::caused_by(
        "Task failed.",
        input.task_origin.clone(),
        middle,
    ))
}

/// `var=` is an expression; an undefined value shows ansible's placeholder and warns, as
/// its replacing marker behaviour does; any other error fails the task.
fn evaluate_var(
    input: &ActionInput<'_>,
    expr: &str,
    at: &Node,
    warnings: &mut Vec<tack_diag::Diagnostic>,
) -> Result<Node, ActionOutput> {
    let template = Node::new(Value::Str(format!("{{{{ {expr} }}}}")), at.origin.clone());
    Ok(match input.templar.render(&template, input.scope) {
        Ok(rendered) => rendered.value,
        Err(e) if e.kind == TemplateErrorKind::Undefined => {
            let text = format!("error 1 - {}", e.message);
            // At the variable's template that failed, when it was not the expression.
            let (origin, shown) = match &e.inner {
                Some(inner) => (Some(inner.origin.clone()), inner.source.as_str()),
                None => (at.origin.clone(), expr),
            };
            let mut diag = tack_diag::Diagnostic::at(
                format!("Encountered 1 template error.\n{text}"),
                origin.clone(),
            );
            // Written outside any file (the ad-hoc command's `-a`): shown as itself.
            if origin.as_ref().is_some_and(|o| o.path.is_none()) {
                diag.value_repr = Some(shown.into());
            }
            // The result's warning, shown (with its origin) before the result's line.
            warnings.push(diag);
            s(&format!("<< {text} >>"))
        }
        Err(e) if e.kind == TemplateErrorKind::Omitted => {
            warnings.push(tack_diag::Diagnostic::at(
                "The result of the `var` expression could not be omitted; a placeholder was \
                 used instead.",
                at.origin.clone(),
            ));
            s("<<Omit>>")
        }
        Err(e) => {
            // What went wrong is the expression's, not a template's; a recursion error keeps
            // Python's own words as its cause.
            let recursion = e.message.strip_prefix("Recursive loop detected in template: ");
            let message = match e.message.strip_prefix("Error rendering template:") {
                Some(rest) => format!("Error rendering expression:{rest}"),
                None if recursion.is_some() => "Recursive loop detected in expression.".into(),
                None => e.message.clone(),
            };
            let mut cause = tack_diag::Diagnostic::at(
                format!("Error while resolving `var` expression: {message}"),
                at.origin.clone(),
            );
            // A failure raised where a value was written (a `!vault` value's) is shown there,
            // under the expression's own words.
            if let Some(inner) = &e.inner
                && let Some(preface) = message.strip_suffix(inner.message.as_str())
            {
                cause = tack_diag::Diagnostic::caused_by(
                    format!(
                        "Error while resolving `var` expression: {}.",
                        preface.trim_end_matches([':', ' ', '.'])
                    ),
                    at.origin.clone(),
                    tack_diag::Diagnostic::at(inner.message.clone(), Some(inner.origin.clone())),
                );
            }
            if let Some(python) = recursion {
                cause = tack_diag::Diagnostic::caused_by(
                    cause.message.clone(),
                    at.origin.clone(),
                    tack_diag::Diagnostic::new(python).while_handling(),
                );
            }
            return Err(crate::output::errored(tack_diag::Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                cause,
            )));
        }
    })
}
