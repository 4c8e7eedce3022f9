//! Conditionals (`when`, `changed_when`, `failed_when`, `until`, `assert.that`) as ansible
//! 2.21 evaluates them: a boolean is itself; a string is a Jinja2 expression whose result must
//! be a boolean; a string that is entirely one template (`"{{ x }}"`) is rendered first and, if
//! that gives a string, the string is the expression (with ansible's deprecation warning when it
//! gives anything else). Empty and non-string conditionals are errors.
//!
//! `and`/`or` evaluate lazily, and only what is evaluated is read, so a plan sees
//! `false and unavailable_x` as false without reading `unavailable_x`.

use std::sync::Arc;

use minijinja::value::Value as JValue;
use tack_diag::{Diagnostic, Origin};
use tack_yaml::{Node, Value};

use super::errors::to_template_error;
use super::{Engine, undefined};
use crate::error::{TemplateError, TemplateErrorKind};
use crate::python::repr::type_name;
use crate::vars::objects::{Dict, List};
use crate::vars::{ProvenanceSet, Scope};

/// A conditional's result and what it read.
#[derive(Debug, Clone, PartialEq)]
pub struct Conditional {
    pub value: bool,
    pub provenance: ProvenanceSet,
    /// A conditional written as one template (`"{{ flag }}"`, deprecated) that rendered to
    /// something other than a string: that value, which ansible reports as a skip's
    /// `false_condition` where it reports the text of any other.
    pub rendered: Option<Node>,
}

const EMPTY: &str = "Empty conditional expressions are not allowed.";
const NOT_STRING: &str = "Conditional expressions must be strings.";
const AS_TEMPLATE: &str =
    "Conditionals should not be surrounded by templating delimiters such as {{ }} or {% %}.";

fn broken(message: impl Into<String>) -> TemplateError {
    TemplateError::new(TemplateErrorKind::BrokenConditional, message)
}

const ALLOWED_HELP: &str = "Broken conditionals are currently allowed because the \
     `ALLOW_BROKEN_CONDITIONALS` configuration option is enabled.";
const EMPTY_ALLOWED: &str = "Empty conditional expression was evaluated as True.";

/// `ALLOW_BROKEN_CONDITIONALS`: a broken conditional is `verdict` with a deprecation saying
/// `allowed`; without it, the error `refused`.
fn broken_unless_allowed(
    refused: String,
    allowed: String,
    verdict: bool,
    origin: &Option<Origin>,
) -> Result<bool, TemplateError> {
    if !crate::lookups::config::flag("ALLOW_BROKEN_CONDITIONALS") {
        return Err(broken(refused).at(origin.clone()));
    }
    let diag = Diagnostic::at(allowed, origin.clone()).with_help(ALLOWED_HELP);
    tack_diag::deprecate(&diag, "2.23");
    Ok(verdict)
}

/// ansible's message for a result that is not a boolean.
fn derived_message(truthy: bool, type_name: &str, written: Option<&Origin>) -> String {
    format!(
        "Conditional result ({}) was derived from value of type '{type_name}' at {}. \
         Conditionals must have a boolean result.",
        if truthy { "True" } else { "False" },
        // Python's repr of the place: an origin holding a quote is quoted the other way.
        tack_yaml::pyrepr::str_repr(
            &written.map_or_else(|| "<unknown>".to_string(), |o| o.to_string())
        ),
    )
}

fn empty(origin: &Option<Origin>) -> Result<bool, TemplateError> {
    broken_unless_allowed(EMPTY.into(), EMPTY_ALLOWED.into(), true, origin)
}

/// `true` when `s` starts with a Jinja2 start delimiter and ends with an end delimiter.
pub(crate) fn is_possibly_all_template(s: &str) -> bool {
    if s.starts_with("#jinja2:") {
        return true;
    }
    ["{%", "{{", "{#"].iter().any(|m| s.starts_with(m))
        && ["%}", "}}", "#}"].iter().any(|m| s.ends_with(m))
}

/// Evaluates `node` as a conditional in `scope`. A conditional written as one template that
/// renders to something other than a string leaves that value in `rendered` (what ansible
/// reports as a skip's `false_condition`).
pub(super) fn evaluate(
    engine: &Arc<Engine>,
    node: &Node,
    scope: &Scope,
    rendered: &mut Option<Node>,
) -> Result<bool, TemplateError> {
    let origin = node.origin.clone();
    super::active::take_nested_failure();
    let text = match &node.value {
        Value::Bool(b) => return Ok(*b),
        Value::Null => return empty(&origin),
        Value::Str(s) => s.trim(),
        Value::Unsafe(text) => {
            let mut error = TemplateError::new(
                TemplateErrorKind::Untrusted,
                "Encountered untrusted template or expression.",
            )
            .at(origin);
            error.subject = Some(text.clone());
            return Err(error);
        }
        other => {
            let (truthy, kind) = match other {
                Value::Map(m) => (!m.is_empty(), "dict"),
                Value::Seq(items) => (!items.is_empty(), "list"),
                scalar => {
                    let value = crate::vars::data::scalar(scalar);
                    (value.is_true(), type_name(&value))
                }
            };
            let message = derived_message(truthy, kind, origin.as_ref());
            return broken_unless_allowed(NOT_STRING.into(), message, truthy, &origin);
        }
    };
    if text.is_empty() {
        return empty(&origin);
    }
    let rendered_expression;
    let expression = if is_possibly_all_template(text) {
        let value = engine
            .render_nested(text, scope)
            .map_err(|e| in_conditional(&e, &origin, false, false))?;
        // A template that renders to `None` is an empty conditional, as an empty string is;
        // ansible's error then points at the rendered `None`, which has no origin.
        if value.is_none() {
            return empty(&None);
        }
        match value.as_str() {
            Some(s) => {
                // Only a string the user wrote may be evaluated as an expression: the value of
                // a trusted variable named by the template, not something computed.
                if !names_trusted_string(text, scope) {
                    // ansible points at where the untrusted string was made, when it knows.
                    let made = text
                        .strip_prefix("{{")
                        .and_then(|t| t.strip_suffix("}}"))
                        .and_then(|inner| undefined::loaded_node(inner, scope))
                        .and_then(|(node, _)| node.origin.clone());
                    return Err(TemplateError::new(
                        TemplateErrorKind::Untrusted,
                        "Encountered untrusted template or expression.",
                    )
                    .at(made.or(origin)));
                }
                let s = s.trim();
                if s.is_empty() {
                    return empty(&origin);
                }
                rendered_expression = s.to_string();
                rendered_expression.as_str()
            }
            None => {
                let diag = Diagnostic::at(AS_TEMPLATE, origin.clone());
                tack_diag::deprecate(&diag, "2.23");
                *rendered = crate::value::to_node(&value).ok();
                let inner = text.strip_prefix("{{").and_then(|t| t.strip_suffix("}}"));
                return boolean(&value, scope, inner.unwrap_or(text), &origin);
            }
        }
    } else {
        text
    };
    let source = format!("{{{{ {expression} }}}}");
    let has_delimiters =
        ["{{", "}}", "{%", "%}", "{#", "#}"].iter().any(|d| expression.contains(d));
    let value = engine
        .render_expression(&source, scope)
        .map_err(|e| in_conditional(&e, &origin, true, has_delimiters))?;
    boolean(&value, scope, expression, &origin)
}

/// Whether `template` is `{{ name }}` (or `{{ a.b }}`) naming a plain string of a trusted
/// variable, the one indirection ansible allows for a conditional.
fn names_trusted_string(template: &str, scope: &Scope) -> bool {
    let Some(inner) = template.strip_prefix("{{").and_then(|t| t.strip_suffix("}}")) else {
        return false;
    };
    matches!(
        undefined::loaded_node(inner, scope),
        Some((node, true)) if matches!(&node.value, Value::Str(s) if !crate::is_possibly_template(s))
    )
}

/// A failure inside a conditional, as ansible words it: an undefined variable gets a preface,
/// and errors of the expression itself say "expression" where a template's say "template".
fn in_conditional(
    err: &minijinja::Error,
    origin: &Option<Origin>,
    expression: bool,
    has_delimiters: bool,
) -> TemplateError {
    let mut e = to_template_error(err);
    let inner = super::active::inner_failure(&e.message, origin);
    if e.kind == TemplateErrorKind::Undefined {
        e.inner = inner;
        e.message = format!("Error while evaluating conditional: {}", e.message);
    } else if expression {
        if let Some(rest) = e.message.strip_prefix("Error rendering template: ") {
            e.message = format!("Error rendering expression: {rest}");
        }
        // A variable's template that failed (its syntax, say) keeps its words, shown where
        // it was written.
        let nested = inner.is_some();
        e.inner = inner;
        if !nested && let Some(rest) = e.message.strip_prefix("Syntax error in template: ") {
            // The expression was wrapped in `{{ }}` to compile it: its end is the template's.
            let rest = match rest {
                "Expected an expression, got 'end of print statement'" => {
                    "unexpected 'end of template'"
                }
                other => other,
            };
            e.message = if has_delimiters {
                format!(
                    "Syntax error in expression. Template delimiters are not supported in \
                     expressions: {rest}"
                )
            } else {
                format!("Syntax error in expression: {rest}")
            };
        }
    } else {
        e.inner = inner;
    }
    e.at(origin.clone())
}

/// The result must be a boolean; anything else is ansible's broken-conditional error, which
/// names the value's type and where it was written.
fn boolean(
    value: &JValue,
    scope: &Scope,
    expression: &str,
    origin: &Option<Origin>,
) -> Result<bool, TemplateError> {
    if let Some(b) = value.as_bool_exact() {
        return Ok(b);
    }
    if crate::value::is_omit_value(value) {
        return Err(TemplateError::new(TemplateErrorKind::Omitted, crate::error::OMITTED_MESSAGE)
            .at(origin.clone()));
    }
    let truthy = value.is_true();
    let written = where_written(value, scope, expression, origin);
    let message = derived_message(truthy, type_name(value), written.as_ref());
    broken_unless_allowed(message.clone(), message, truthy, origin)
}

/// Where a result value was written, as ansible tracks it: a variable's value where the
/// variable was written, a computed value where the conditional was, `None` nowhere.
fn where_written(
    value: &JValue,
    scope: &Scope,
    expression: &str,
    conditional: &Option<Origin>,
) -> Option<Origin> {
    if value.is_none() {
        return None;
    }
    // A container with no origin of its own (a module's result, one a template built) is
    // the conditional's, as a scalar is.
    if let Some(d) = value.downcast_object_ref::<Dict>() {
        return d.origin().or_else(|| conditional.clone());
    }
    if let Some(l) = value.downcast_object_ref::<List>() {
        return l.origin().or_else(|| conditional.clone());
    }
    match undefined::loaded_node(expression, scope) {
        // A value with no origin of its own (a module's result) is the conditional's.
        Some((node, _)) => node.origin.clone().or_else(|| conditional.clone()),
        None => conditional.clone(),
    }
}

trait ExactBool {
    fn as_bool_exact(&self) -> Option<bool>;
}

impl ExactBool for JValue {
    fn as_bool_exact(&self) -> Option<bool> {
        (self.kind() == minijinja::value::ValueKind::Bool).then(|| self.is_true())
    }
}
