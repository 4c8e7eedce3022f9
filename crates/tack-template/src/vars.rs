//! The variables a render sees: a mapping whose values may themselves be templates, rendered
//! when read (as ansible does), with a depth limit so a variable that refers to itself is an
//! error rather than a hang.

use std::cell::Cell;
use std::sync::Arc;

use minijinja::Environment;
use minijinja::value::{Enumerator, Object, Value as JValue};
use tack_yaml::{Mapping, Node, Value};

use crate::Templar;
use crate::convert::{from_jinja, to_jinja};

const MAX_DEPTH: u32 = 64;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// One render's variables and the environment that renders them.
#[derive(Clone)]
pub(crate) struct Scope {
    env: Arc<Environment<'static>>,
    vars: Arc<LazyVars>,
}

#[derive(Debug)]
struct LazyVars {
    vars: Mapping,
    env: Arc<Environment<'static>>,
}

/// A rendered template: its value, with native typing for single-expression templates.
pub(crate) struct Rendered {
    pub value: Value,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scope")
    }
}

impl Scope {
    pub fn new(env: Arc<Environment<'static>>, vars: Mapping) -> Scope {
        let vars = Arc::new(LazyVars { vars, env: env.clone() });
        Scope { env, vars }
    }

    pub fn render_str(&self, source: &str) -> Result<Rendered, String> {
        render_with(&self.env, &self.vars, source)
    }
}

/// The expression inside `{{ ... }}` when `source` is exactly one expression and nothing else.
fn single_expression(source: &str) -> Option<&str> {
    let inner = source.strip_prefix("{{")?.strip_suffix("}}")?;
    if inner.contains("{{") || inner.contains("}}") || inner.contains("{%") || inner.contains("{#")
    {
        return None;
    }
    Some(inner.trim())
}

fn render_with(
    env: &Environment<'static>,
    vars: &Arc<LazyVars>,
    source: &str,
) -> Result<Rendered, String> {
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(format!("Recursive loop detected in template: {source}"));
    }
    DEPTH.with(|d| d.set(depth + 1));
    let ctx = JValue::from_dyn_object(vars.clone());
    let result = match single_expression(source) {
        Some(expr) => env
            .compile_expression(expr)
            .and_then(|e| e.eval(ctx))
            .map(|v| Rendered { value: from_jinja(&v) }),
        None => env.render_str(source, ctx).map(|s| Rendered { value: Value::Str(s) }),
    };
    DEPTH.with(|d| d.set(depth));
    result.map_err(|e| describe(&e))
}

fn describe(err: &minijinja::Error) -> String {
    let detail = err.detail().map(str::to_string).unwrap_or_else(|| err.to_string());
    match err.kind() {
        // minijinja quotes names with backticks; ansible's message is `'x' is undefined`.
        minijinja::ErrorKind::UndefinedError => {
            match detail.strip_prefix('`').and_then(|d| d.split_once('`')) {
                Some((name, rest)) => format!("'{name}'{rest}"),
                None => detail,
            }
        }
        _ => detail,
    }
}

impl Object for LazyVars {
    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let node = self.vars.get(key.as_str()?)?;
        Some(self.resolve(node))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys: Vec<JValue> =
            self.vars.keys().filter_map(|k| k.as_str().map(JValue::from)).collect();
        Enumerator::Values(keys)
    }
}

impl LazyVars {
    /// A variable's value, with template strings inside it rendered against the same scope.
    fn resolve(self: &Arc<Self>, node: &Node) -> JValue {
        match &node.value {
            Value::Str(s) if Templar::is_template(s) => match render_with(&self.env, self, s) {
                Ok(r) => to_jinja(&r.value),
                Err(e) => {
                    JValue::from(minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e))
                }
            },
            Value::Seq(items) => items.iter().map(|n| self.resolve(n)).collect(),
            Value::Map(m) => {
                JValue::from_iter(m.iter().map(|(k, v)| (to_jinja(&k.value), self.resolve(v))))
            }
            other => to_jinja(other),
        }
    }
}
