//! Templating as ansible-core does it: Jinja2 expressions and templates, rendered by minijinja
//! over tack's loaded data ([`tack_yaml::Node`]).
//!
//! The loader needs only a little of it (role names, static import paths, play keywords); the
//! full ansible semantics (its filters, tests, lookups, undefined rules and provenance) are
//! built on this crate's [`Templar`]. It never reads host state and never writes files.

mod convert;
pub mod filters;
mod vars;

use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};
use tack_diag::{Diagnostic, Origin};
use tack_yaml::{Mapping, Node, Value};

pub use convert::{from_jinja, to_jinja};

/// A template that could not be rendered, in ansible's words where they are known.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct TemplateError {
    pub message: String,
    pub origin: Option<Origin>,
}

impl TemplateError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::at(self.message.clone(), self.origin.clone())
    }
}

/// Renders templates found in loaded values against a set of variables.
#[derive(Clone)]
pub struct Templar {
    env: Arc<Environment<'static>>,
}

impl Default for Templar {
    fn default() -> Self {
        Templar::new()
    }
}

impl Templar {
    pub fn new() -> Templar {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        filters::register(&mut env);
        Templar { env: Arc::new(env) }
    }

    /// Whether `s` contains Jinja2 syntax (ansible's `is_possibly_template`).
    pub fn is_template(s: &str) -> bool {
        s.contains("{{") || s.contains("{%") || s.contains("{#")
    }

    /// Renders every template string inside `node`. A string that is exactly one `{{ expr }}`
    /// keeps the expression's own type; others render to strings. `!unsafe` strings are left
    /// as they are.
    pub fn render(&self, node: &Node, vars: &Mapping) -> Result<Node, TemplateError> {
        let scope = vars::Scope::new(self.env.clone(), vars.clone());
        self.render_in(node, &scope)
    }

    fn render_in(&self, node: &Node, scope: &vars::Scope) -> Result<Node, TemplateError> {
        let value = match &node.value {
            Value::Str(s) if Templar::is_template(s) => {
                let rendered = scope
                    .render_str(s)
                    .map_err(|e| TemplateError { message: e, origin: node.origin.clone() })?;
                return Ok(Node::new(rendered.value, node.origin.clone()));
            }
            Value::Seq(items) => Value::Seq(
                items.iter().map(|item| self.render_in(item, scope)).collect::<Result<_, _>>()?,
            ),
            Value::Map(m) => {
                let mut out = Mapping::new();
                for (k, v) in m.iter() {
                    out.insert(self.render_in(k, scope)?, self.render_in(v, scope)?);
                }
                Value::Map(out)
            }
            other => other.clone(),
        };
        Ok(Node::new(value, node.origin.clone()))
    }
}
