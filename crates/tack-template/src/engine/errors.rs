//! minijinja's errors in ansible-core's words.
//!
//! ansible prints a template failure as one of: the undefined message itself (`'x' is
//! undefined`), `Syntax error in template: ...`, or `Error rendering template: ...`, with a few
//! messages of its own (recursion, omit, conditionals). Once a message is in ansible's words it
//! is marked final, so that an error passing through an outer template (a variable whose value
//! is a template) keeps the inner template's message.

use std::sync::Arc;

use minijinja::{Error, ErrorKind};

use super::undefined;
use crate::error::{TemplateError, TemplateErrorKind};
use crate::vars::objects::Root;

/// Marks a detail that is already ansible's message.
const FINAL: char = '\u{2}';

/// How a failure inside a render is worded where it is raised (`Error rendering template:
/// <what failed>`).
pub(crate) const RENDER_FAILED: &str = "Error rendering template: ";

/// An error whose detail is ansible's message as it should be printed.
pub(crate) fn final_error(kind: ErrorKind, message: String) -> Error {
    Error::new(kind, format!("{FINAL}{message}"))
}

/// The final message of an error, if it has one.
fn final_message(err: &Error) -> Option<&str> {
    err.detail()?.strip_prefix(FINAL)
}

/// An error's words as ansible prints them (its final message, else its detail).
pub(crate) fn message(err: &Error) -> String {
    final_message(err).or(err.detail()).unwrap_or_default().to_string()
}

/// The expression minijinja says produced an undefined value (`` `a.b` is undefined ``).
fn undefined_expr(err: &Error) -> Option<&str> {
    let detail = err.detail()?;
    let start = detail.find('`')?;
    let rest = &detail[start + 1..];
    let end = rest.find("` is undefined")?;
    Some(&rest[..end])
}

/// Rewrites a render failure in ansible's words; `root` (the failed render's variables) lets
/// an undefined value be explained exactly.
pub(crate) fn ansible_error(err: &Error, root: Option<&Arc<Root>>) -> Error {
    // ansible reports a failure inside an included template as the failure itself; minijinja
    // wraps it in a `BadInclude` naming the file.
    if err.kind() == ErrorKind::BadInclude
        && let Some(inner) = std::error::Error::source(err).and_then(|e| e.downcast_ref::<Error>())
    {
        return ansible_error(inner, root);
    }
    if let Some(message) = final_message(err) {
        return final_error(err.kind(), message.to_string());
    }
    // A filter's failure is already worded as ansible words it.
    if let Some(message) = crate::filters::FilterMessage::of(err) {
        return final_error(err.kind(), message.to_string());
    }
    if let Some(expr) = undefined_expr(err) {
        if expr.starts_with(super::tags::NO_LOOP) {
            return final_error(ErrorKind::UndefinedError, "'loop' is undefined".to_string());
        }
        let message = match root {
            Some(root) => undefined::explain(expr, root),
            None => format!("'{expr}' is undefined"),
        };
        return final_error(ErrorKind::UndefinedError, message);
    }
    if let Some(message) = missing_argument(err) {
        return final_error(ErrorKind::UndefinedError, message);
    }
    let detail = err.detail().unwrap_or_default();
    if err.kind() == ErrorKind::InvalidOperation && detail == crate::python::memory::DETAIL {
        return final_error(err.kind(), "Error rendering template.".to_string());
    }
    if err.kind() == ErrorKind::InvalidOperation && detail == "recursion limit exceeded" {
        return final_error(err.kind(), super::active::RECURSION_MESSAGE.to_string());
    }
    let message = match err.kind() {
        // An undefined minijinja cannot name: if `undef()` made one, its words.
        ErrorKind::UndefinedError => {
            super::active::undef_message().unwrap_or_else(|| "'undefined' is undefined".to_string())
        }
        ErrorKind::SyntaxError => format!("Syntax error in template: {}", syntax_detail(detail)),
        ErrorKind::UnknownFilter => format!(
            "Syntax error in template: No filter named '{}'.",
            name_between(detail, "filter ", " is unknown")
        ),
        ErrorKind::UnknownTest => format!(
            "Syntax error in template: No test named '{}'.",
            name_between(detail, "test ", " is unknown")
        ),
        ErrorKind::UnknownMethod => {
            let (kind, method) = detail.split_once(" has no method named ").unwrap_or(("", detail));
            return final_error(
                ErrorKind::UnknownMethod,
                format!(
                    "object of type '{}' has no attribute {}",
                    py_kind(kind),
                    tack_yaml::pyrepr::str_repr(method)
                ),
            );
        }
        ErrorKind::UnknownFunction => {
            let name = detail.strip_suffix(" is unknown").unwrap_or(detail);
            return final_error(ErrorKind::UndefinedError, format!("'{name}' is undefined"));
        }
        _ if detail.is_empty() => format!("Error rendering template: {}", err.kind()),
        _ => format!("Error rendering template: {}", python_message(detail, err, root)),
    };
    final_error(err.kind(), message)
}

/// Jinja2's message for a macro parameter the call did not pass (`parameter 'name' was not
/// provided`): minijinja passes it as an undefined value with no origin, so it is recognised
/// as a use of a bare name, at the error's span, that is a parameter of the macro enclosing
/// it (read from the failing template's source, which the environment's debug mode keeps).
fn missing_argument(err: &Error) -> Option<String> {
    use minijinja::machinery::{Token, tokenize};
    if err.kind() != ErrorKind::UndefinedError || err.detail().is_some() {
        return None;
    }
    let source = err.template_source()?;
    let range = err.range()?;
    let name = source.get(range.clone())?.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    // The parameter lists of the macros open at each point, innermost last.
    let mut macros: Vec<Vec<&str>> = Vec::new();
    let (mut prev, mut prev2): (Option<Token>, Option<Token>) = (None, None);
    let mut in_params = None::<usize>;
    for item in tokenize(source, false, minijinja::syntax::SyntaxConfig::default()) {
        let Ok((token, span)) = item else { break };
        if span.start_offset as usize >= range.start {
            break;
        }
        match (&prev2, &prev, &token) {
            (Some(Token::BlockStart), Some(Token::Ident("macro")), Token::Ident(_)) => {
                macros.push(Vec::new());
            }
            (_, Some(Token::BlockStart), Token::Ident("endmacro")) => {
                macros.pop();
            }
            _ => {}
        }
        match &token {
            Token::ParenOpen
                if matches!(prev2, Some(Token::Ident("macro"))) && in_params.is_none() =>
            {
                in_params = Some(0);
            }
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => {
                in_params = in_params.map(|d| d + 1);
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                in_params = match in_params {
                    Some(0) | None => None,
                    Some(d) => Some(d - 1),
                };
            }
            Token::Ident(param)
                if in_params == Some(0)
                    && matches!(prev, Some(Token::ParenOpen | Token::Comma)) =>
            {
                if let Some(params) = macros.last_mut() {
                    params.push(param);
                }
            }
            Token::BlockEnd => in_params = None,
            _ => {}
        }
        prev2 = prev.replace(token);
    }
    let params = macros.last()?;
    params.contains(&name).then(|| format!("parameter '{name}' was not provided"))
}

fn name_between<'a>(detail: &'a str, prefix: &str, suffix: &str) -> &'a str {
    let d = detail.strip_prefix(prefix).unwrap_or(detail);
    d.strip_suffix(suffix).unwrap_or(d)
}

/// minijinja's parser messages where they differ from Jinja2's for the same mistake.
fn syntax_detail(detail: &str) -> String {
    match detail {
        "unexpected end of input, expected end of variable block" => {
            "unexpected end of template, expected 'end of print statement'.".to_string()
        }
        "unexpected end of variable block" => {
            "Expected an expression, got 'end of print statement'".to_string()
        }
        "unexpected end of comment" => "Missing end of comment tag".to_string(),
        other => {
            if let Some(tag) = other.strip_prefix("unknown statement ") {
                let tag = if tag == super::prepass::UNKNOWN_DO { "do" } else { tag };
                return format!("Encountered unknown tag '{tag}'.");
            }
            // Jinja2 names the unexpected token alone where minijinja adds what it wanted
            // after a complete expression.
            let other = other.strip_suffix(", expected end of variable block").unwrap_or(other);
            // Jinja2 quotes tokens with single quotes where minijinja uses backticks.
            let other = other.replace('`', "'");
            // A token where another was required: Jinja2 says it the other way round.
            if let Some(rest) = other.strip_prefix("unexpected '")
                && let Some((got, wanted)) = rest.split_once("', expected '")
                && let Some(wanted) = wanted.strip_suffix('\'')
            {
                return format!("expected token '{wanted}', got '{got}'");
            }
            other
        }
    }
}

/// The Python type a minijinja value kind (as its messages name it) stands for.
fn py_kind(kind: &str) -> &str {
    match kind {
        "string" => "str",
        "number" => "int",
        "sequence" => "list",
        "map" => "dict",
        "none" => "NoneType",
        "undefined" => "AnsibleUndefined",
        "bytes" => "bytes",
        other => other,
    }
}

/// minijinja's runtime messages as Python words the same failure; an operand read from
/// variables is named by ansible's tagged class (see `tagged`).
fn python_message(detail: &str, err: &Error, root: Option<&Arc<Root>>) -> String {
    let operands = |op: Option<&str>| match root {
        Some(root) => super::tagged::operand_names(err, root, op),
        None => (None, None),
    };
    if let Some(rest) = detail.strip_prefix("tried to use ")
        && let Some((op, types)) = rest.split_once(" operator on unsupported types ")
        && let Some((a, b)) = types.split_once(" and ")
    {
        let (a, b) = (py_kind(a), py_kind(b));
        let (tagged_a, tagged_b) = operands(Some(op));
        let b_name = tagged_b.unwrap_or(b);
        return match (op, a) {
            // Python names the left operand's base class here, whatever its subclass.
            ("+", "str" | "list") => {
                format!("can only concatenate {a} (not \"{b_name}\") to {a}")
            }
            _ => format!(
                "unsupported operand type(s) for {op}: '{}' and '{b_name}'",
                tagged_a.unwrap_or(a)
            ),
        };
    }
    if let Some(rest) = detail.strip_prefix("unable to calculate ") {
        let float = rest.contains('.');
        let message = if rest.contains(" // ") {
            if float {
                "float floor division by zero"
            } else {
                "integer division or modulo by zero"
            }
        } else if rest.contains(" % ") {
            if float { "float modulo by zero" } else { "integer modulo by zero" }
        } else if rest.contains(" / ") {
            if float { "float division by zero" } else { "division by zero" }
        } else {
            return detail.to_string();
        };
        return message.to_string();
    }
    if let Some(kind) = detail.strip_suffix(" is not iterable") {
        let name = operands(None).0.unwrap_or(py_kind(kind));
        return format!("'{name}' object is not iterable");
    }
    if let Some(kind) =
        detail.strip_prefix("value of type ").and_then(|d| d.strip_suffix(" is not callable"))
    {
        let name = operands(None).0.unwrap_or(py_kind(kind));
        return format!("'{name}' object is not callable");
    }
    detail.to_string()
}

/// The public error for a failed render. `err` must have gone through [`ansible_error`].
pub(crate) fn to_template_error(err: &Error) -> TemplateError {
    let message = match final_message(err) {
        Some(m) => m.to_string(),
        None => final_message(&ansible_error(err, None)).unwrap_or_default().to_string(),
    };
    let kind = match err.kind() {
        ErrorKind::UndefinedError | ErrorKind::UnknownMethod => TemplateErrorKind::Undefined,
        ErrorKind::SyntaxError | ErrorKind::UnknownFilter | ErrorKind::UnknownTest => {
            TemplateErrorKind::Syntax
        }
        _ => TemplateErrorKind::Render,
    };
    TemplateError::new(kind, message)
}

/// The tags ansible's Jinja2 knows (no loop controls, no `do`).
const KNOWN_TAGS: &[&str] = &[
    "if",
    "elif",
    "else",
    "for",
    "macro",
    "call",
    "filter",
    "with",
    "block",
    "autoescape",
    "raw",
    "set",
    "include",
    "import",
    "from",
    "extends",
];

/// Jinja2's wording for a syntax error minijinja words from a token class, read from the
/// compiled source at the error's span: what follows a complete expression inside `{{ }}`
/// (`expected token 'end of print statement', got 'next'`), and a `}}` after an operator
/// (`unexpected 'end of print statement'`) as opposed to an empty `{{ }}`.
fn token_syntax_detail(err: &Error) -> Option<String> {
    let detail = err.detail()?;
    let source = err.template_source()?;
    let range = err.range()?;
    let at = source.get(range.clone())?;
    // Jinja2's lexer names the character and its position in the source.
    if detail == "unexpected character" {
        let ch = source.get(range.start..)?.chars().next()?;
        let position = source.get(..range.start)?.chars().count();
        let shown = tack_py::repr::str_repr(ch.encode_utf8(&mut [0; 4]));
        return Some(format!("unexpected char {shown} at {position}"));
    }
    if detail == "unexpected end of variable block" {
        let before = source.get(..range.start)?.trim_end();
        let empty = ["{{", "{{-", "{{+"].iter().any(|d| before.ends_with(d));
        return (!empty).then(|| "unexpected 'end of print statement'".to_string());
    }
    let what =
        detail.strip_prefix("unexpected ")?.strip_suffix(", expected end of variable block")?;
    let shown = match what {
        "identifier" => at,
        "integer" | "float" | "string" => what,
        // Jinja2's lexer fails on an unbalanced bracket before the parser sees it.
        "`)`" | "`]`" | "`}`" => return Some(format!("unexpected '{}'", what.trim_matches('`'))),
        other if other.starts_with('`') => other.trim_matches('`'),
        _ => return None,
    };
    Some(format!("expected token 'end of print statement', got '{shown}'"))
}

/// What Jinja2 says it was looking for when a block is left open: the innermost block open
/// where `failing` (a tag it did not expect) appears in `source`, or at the end of `source`
/// when `failing` is `None`.
fn looking_for(source: &str, failing: Option<&str>) -> Option<String> {
    use minijinja::machinery::{Token, tokenize};
    let mut open: Vec<&str> = Vec::new();
    let mut after_block_start = false;
    for item in tokenize(source, false, minijinja::syntax::SyntaxConfig::default()) {
        let Ok((token, _)) = item else { break };
        match token {
            Token::BlockStart => after_block_start = true,
            Token::Ident(tag) if after_block_start => {
                after_block_start = false;
                let closes = tag.strip_prefix("end");
                let accepted = match closes {
                    Some(block) => open.last() == Some(&block),
                    None => KNOWN_TAGS.contains(&tag),
                };
                if failing == Some(tag) && !accepted {
                    break;
                }
                match tag {
                    "if" | "for" | "macro" | "call" | "filter" | "with" | "block"
                    | "autoescape" | "raw" => open.push(tag),
                    _ if closes.is_some() => {
                        open.pop();
                    }
                    _ => {}
                }
            }
            _ => after_block_start = false,
        }
    }
    let innermost = *open.last()?;
    let wanted = match innermost {
        "if" => "'elif' or 'else' or 'endif'".to_string(),
        "for" => "'endfor' or 'else'".to_string(),
        other => format!("'end{other}'"),
    };
    Some(format!(
        "Jinja was looking for the following tags: {wanted}. The innermost block that needs to be \
         closed is '{innermost}'."
    ))
}

/// A compile error of `source` in ansible's words, with Jinja2's note on open blocks.
pub(crate) fn compile_error(err: &Error, source: &str) -> Error {
    // minijinja's parser stops at deep nesting where Python's recursion stops ansible's.
    if err.kind() == ErrorKind::SyntaxError
        && err.detail().is_some_and(|d| d.contains("exceeds maximum recursion limits"))
    {
        let message = super::active::RECURSION_MESSAGE.to_string();
        return final_error(ErrorKind::InvalidOperation, message);
    }
    if err.kind() == ErrorKind::SyntaxError
        && let Some(detail) = token_syntax_detail(err)
    {
        return final_error(err.kind(), format!("Syntax error in template: {detail}"));
    }
    let err = ansible_error(err, None);
    let Some(message) = final_message(&err) else { return err };
    if let Some(rest) = message.strip_prefix("Syntax error in template: Encountered unknown tag '")
        && let Some((tag, _)) = rest.split_once('\'')
    {
        if let Some(note) = looking_for(source, Some(tag)) {
            return final_error(err.kind(), format!("{message} {note}"));
        }
        return err;
    }
    if message.starts_with("Syntax error in template: unexpected end of input")
        && let Some(note) = looking_for(source, None)
    {
        return final_error(
            err.kind(),
            format!("Syntax error in template: Unexpected end of template. {note}"),
        );
    }
    err
}
