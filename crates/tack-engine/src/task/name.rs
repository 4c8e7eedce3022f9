//! A task's name in its banner. ansible's strategy post-validates the `name` attribute with the
//! first host's variables just before the banner (`TASK [install nginx]` for
//! `name: install {{ pkg }}`); an expression that fails shows as ansible's
//! `<< error N - message >>` marker in its place, and one warning lists them.
//!
//! Owns only that rendering. A name whose failure ansible reports in ways tack does not
//! reproduce (statements, syntax errors) keeps its text as written.

use tack_diag::Diagnostic;
use tack_template::{Scope, Templar, TemplateErrorKind};
use tack_yaml::{Node, Value};

/// The name `raw` (the task's `name`, with its origin) as the banner shows it, and the warning
/// ansible gives when some of it could not be rendered.
pub(crate) fn render(templar: &Templar, raw: &Node, scope: &Scope) -> (String, Option<Diagnostic>) {
    let text = tack_yaml::pyrepr::str(&raw.value);
    if !Templar::is_template(&text) {
        return (text, None);
    }
    // Statements and comments are rendered whole; only a name that renders is changed.
    if text.contains("{%") || text.contains("{#") {
        return match templar.render(raw, scope) {
            Ok(r) => (tack_yaml::pyrepr::str(&r.value.value), None),
            Err(_) => (text, None),
        };
    }
    let Some(pieces) = split(&text) else { return (text, None) };
    let mut out = String::new();
    let mut errors: Vec<String> = Vec::new();
    // The warning points where the first failure was written: a variable's template the
    // name read, or the name.
    let mut origin = None;
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Expr(e) => {
                let node = Node::new(Value::Str(e.to_string()), raw.origin.clone());
                match templar.render(&node, scope) {
                    Ok(r) => out.push_str(&tack_yaml::pyrepr::str(&r.value.value)),
                    Err(err) if matches!(err.kind, TemplateErrorKind::Undefined) => {
                        if errors.is_empty() {
                            origin = err.inner.as_ref().map(|i| i.origin.clone());
                        }
                        errors.push(err.message.clone());
                        out.push_str(&format!("<< error {} - {} >>", errors.len(), err.message));
                    }
                    // ansible words other failures its own way; the name stays as written.
                    Err(_) => return (text, None),
                }
            }
        }
    }
    if errors.is_empty() {
        return (out, None);
    }
    let plural = if errors.len() == 1 { "" } else { "s" };
    let mut msg = format!("Encountered {} template error{plural}.", errors.len());
    for (i, e) in errors.iter().enumerate() {
        msg.push_str(&format!("\nerror {} - {e}", i + 1));
    }
    (out, Some(Diagnostic::at(msg, origin.or_else(|| raw.origin.clone()))))
}

enum Piece<'a> {
    Text(&'a str),
    /// A whole `{{ ... }}`, braces included.
    Expr(&'a str),
}

/// The name cut into text and `{{ ... }}` expressions; `None` when an expression is not
/// closed, or holds `}}` inside a string (left whole, as written).
fn split(text: &str) -> Option<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            out.push(Piece::Text(&rest[..start]));
        }
        let end = rest[start..].find("}}")? + start + 2;
        let expr = &rest[start..end];
        // An odd count of a quote means the `}}` found is inside a string.
        let inner = &expr[2..expr.len() - 2];
        if inner.matches('\'').count() % 2 == 1 || inner.matches('"').count() % 2 == 1 {
            return None;
        }
        out.push(Piece::Expr(expr));
        rest = &rest[end..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{Piece, split};

    fn shape(text: &str) -> Vec<String> {
        split(text)
            .unwrap_or_default()
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) => format!("T:{t}"),
                Piece::Expr(e) => format!("E:{e}"),
            })
            .collect()
    }

    #[test]
    fn names_split_into_text_and_expressions() {
        assert_eq!(shape("install {{ pkg }} now"), ["T:install ", "E:{{ pkg }}", "T: now"]);
        assert_eq!(shape("{{ a }}{{ b }}"), ["E:{{ a }}", "E:{{ b }}"]);
        assert!(split("open {{ x").is_none());
    }
}
