//! Templating as ansible-core 2.21 does it: Jinja2 expressions and templates rendered by
//! minijinja over tack's loaded data ([`tack_yaml::Node`]), with ansible's native typing,
//! undefined rules, `omit`, `!unsafe`, vault values, conditionals and Python's behaviours on
//! values, and the provenance of everything a render read.
//!
//! ```
//! use tack_template::{Layer, Provenance, Scope, Templar};
//! use tack_yaml::{Node, Value};
//! use std::sync::Arc;
//!
//! let vars = tack_yaml::load_one("port: 8080\nurl: 'http://h:{{ port }}/'\n", None).unwrap();
//! let scope = Scope::new()
//!     .with_layer(Arc::new(Layer::from_mapping(vars.as_map().unwrap(), Provenance::Trusted)));
//! let templar = Templar::new();
//!
//! // A string that is one expression keeps the expression's type.
//! let port = templar.render_str("{{ port + 1 }}", &scope).unwrap();
//! assert_eq!(port.value.value, Value::Int(8081));
//! // Variables that are templates render when read.
//! let url = templar.render_str("{{ url }}x", &scope).unwrap();
//! assert_eq!(url.value.value, Value::Str("http://h:8080/x".into()));
//! // Conditionals must be booleans.
//! let when = Node::bare(Value::Str("port > 80".into()));
//! assert!(templar.evaluate_conditional(&when, &scope).unwrap().value);
//! ```
//!
//! Layout: [`Scope`]/[`Layer`]/[`Binding`] hold variables (`vars`), the engine renders
//! (`engine`), Python's methods and `str()` live in `python`, and [`value`] is the toolbox for
//! filter, test and lookup plugins. Provenance: every binding carries a [`Provenance`]; a
//! render reports the union of those it actually read ([`Rendered::provenance`]), which is
//! exact for dynamic lookups (`vars[name]`, `hostvars[h][k]`) and never misses a read;
//! [`Templar::referenced_names`] gives the conservative static view.
//!
//! The crate is pure: it never reads host state and writes no files; it reads template files
//! only when asked to render one.

mod engine;
mod error;
pub mod filters;
pub mod lookups;
mod loop_source;
mod markers;
mod pybytes;
mod python;
pub mod python_plugins;
pub mod task_context;
pub mod test_plugins;
mod undef_hint;
pub mod value;
mod vars;
mod vault_wrapped;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use tack_loader::DataLoader;
use tack_vault::VaultSecrets;
use tack_yaml::{Node, Value};

use crate::engine::Engine;
use crate::engine::render::{Piece, walk};

pub use engine::template_file::{TemplateFileOptions, TemplateOverrides};
pub use engine::{Conditional, Rendered};
pub use error::{InnerFailure, TemplateError, TemplateErrorKind, UNTRUSTED_HELP};
pub use loop_source::LoopSource;

/// ansible's experimental `_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR` set to `warning`: a value
/// read as a template that is not trusted as one (`!unsafe`, a host's) is used as it is, as
/// always, and now with ansible's warning. (`error` is refused by the binary; `ignore`, the
/// default, says nothing.)
pub fn warn_on_untrusted_templates(on: bool) {
    WARN_UNTRUSTED.store(on, std::sync::atomic::Ordering::Relaxed);
}

static WARN_UNTRUSTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Warns, when asked to, that the untrusted `text` (written at `origin`) was not rendered.
pub(crate) fn untrusted_template_skipped(text: &str, origin: Option<&tack_diag::Origin>) {
    if !WARN_UNTRUSTED.load(std::sync::atomic::Ordering::Relaxed) || !is_possibly_template(text) {
        return;
    }
    let message = "Encountered untrusted template or expression.";
    let diag = match origin {
        Some(at) if at.path.is_some() => tack_diag::Diagnostic::at(message, Some(at.clone())),
        // Written outside any file (`-e`): shown as itself under where it came from.
        Some(at) => {
            let mut d = tack_diag::Diagnostic::at(message, Some(at.clone()));
            d.value_repr = Some(text.into());
            d
        }
        None => tack_diag::Diagnostic::about_value(message, text),
    };
    tack_diag::warn(&diag.with_help(UNTRUSTED_HELP));
}
pub use python_plugins::{PluginKind, PythonPlugins};
pub use vars::{Binding, Deprecation, HostVars, Layer, Provenance, ProvenanceSet, Scope};

/// ansible's `is_possibly_template`: whether `s` contains Jinja2 syntax. One pass over the
/// bytes: every string a binding holds is asked once, as it becomes template data.
pub fn is_possibly_template(s: &str) -> bool {
    let bytes = s.as_bytes();
    s.starts_with("#jinja2:")
        || bytes.windows(2).any(|pair| pair[0] == b'{' && matches!(pair[1], b'{' | b'%' | b'#'))
}

/// Renders templates found in loaded values. Cloning is cheap; clones share the compile cache.
#[derive(Clone)]
pub struct Templar {
    engine: Arc<Engine>,
}

impl Default for Templar {
    fn default() -> Self {
        Templar::new()
    }
}

impl std::fmt::Debug for Templar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Templar")
    }
}

impl Templar {
    /// A templar without vault secrets, resolving relative paths from the current directory.
    pub fn new() -> Templar {
        Templar::with_loader(Arc::new(DataLoader::new(VaultSecrets::default())))
    }

    /// A templar for a run: `loader` gives the run's vault secrets (to decrypt `!vault`
    /// values when they are used), its base directory and file access for lookups.
    pub fn with_loader(loader: Arc<DataLoader>) -> Templar {
        Templar { engine: Arc::new(Engine::new(loader, None)) }
    }

    /// As [`Templar::with_loader`], for a run whose Python filter, test and lookup plugins
    /// `plugins` calls.
    pub fn with_plugins(loader: Arc<DataLoader>, plugins: Arc<dyn PythonPlugins>) -> Templar {
        Templar { engine: Arc::new(Engine::new(loader, Some(plugins))) }
    }

    pub(crate) fn from_engine(engine: Arc<Engine>) -> Templar {
        Templar { engine }
    }

    pub(crate) fn engine(&self) -> Arc<Engine> {
        self.engine.clone()
    }

    pub fn loader(&self) -> &DataLoader {
        self.engine.loader()
    }

    /// Where the value `node` renders to was written, when `node` is one bare variable
    /// (`{{ name }}`): that variable's own origin, as ansible's tagged values carry theirs
    /// through a template that only reads them. `None` for any other template.
    pub fn sole_variable_origin(node: &Node, scope: &Scope) -> Option<tack_diag::Origin> {
        Templar::sole_variable(node, scope).and_then(|node| node.origin)
    }

    /// The value of the variable `node` names when it is one variable alone (`"{{ name }}"`),
    /// as written where it was defined (a `!vault` value still encrypted).
    pub fn sole_variable(node: &Node, scope: &Scope) -> Option<Node> {
        Templar::sole_binding(node, scope).map(|binding| binding.node().clone())
    }

    /// The binding of the variable `node` names when it is one variable alone.
    fn sole_binding<'s>(node: &Node, scope: &'s Scope) -> Option<&'s Arc<Binding>> {
        let Value::Str(text) = &node.value else { return None };
        let inner = text.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
        let mut chars = inner.chars();
        let first = chars.next()?;
        let identifier = (first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            return None;
        }
        scope.get(inner)
    }

    /// Marks the strings of `rendered` that a template in `source` computed as untrusted
    /// (`Value::Unsafe`), as ansible's loop items are: a template's result is never trusted
    /// as a template or expression, so `assert: that: "{{ item }}"` refuses an item that was
    /// rendered. A string the template only read from a trusted variable (`"{{ name }}"`)
    /// keeps its trust, as ansible's tagged value does; strings written without a template
    /// keep theirs too. Where `source` and `rendered` differ in shape (an omitted item) the
    /// walk stops and leaves the rest as it is.
    pub fn untrust_computed_strings(source: &Node, rendered: &mut Node, scope: &Scope) {
        match (&source.value, &mut rendered.value) {
            (Value::Str(text), Value::Str(out)) if is_possibly_template(text) => {
                let passed_through = Templar::sole_trusted_variable(source, scope)
                    .is_some_and(|n| matches!(&n.value, Value::Str(s) if s == out));
                if !passed_through {
                    rendered.value = Value::Unsafe(std::mem::take(out));
                    if rendered.origin.is_none() {
                        rendered.origin = source.origin.clone();
                    }
                }
            }
            (Value::Seq(from), Value::Seq(to)) if from.len() == to.len() => {
                for (s, r) in from.iter().zip(to.iter_mut()) {
                    Templar::untrust_computed_strings(s, r, scope);
                }
            }
            (Value::Map(from), Value::Map(to)) => {
                for (k, s) in from.iter() {
                    if let Some(r) = to.get_value_mut(&k.value) {
                        Templar::untrust_computed_strings(s, r, scope);
                    }
                }
            }
            _ => {}
        }
    }

    /// A task's arguments written as one variable (`assert: "{{ item }}"`) carry that
    /// variable's untrusted strings as ansible's tagged values do: where `var` holds an
    /// untrusted string, the same string in `rendered` becomes untrusted again, with where it
    /// was made.
    pub fn keep_untrusted_of(var: &Node, rendered: &mut Node) {
        match (&var.value, &mut rendered.value) {
            (Value::Unsafe(a), Value::Str(b)) if a == b => {
                rendered.value = Value::Unsafe(std::mem::take(b));
                rendered.origin = var.origin.clone().or(rendered.origin.take());
            }
            (Value::Seq(from), Value::Seq(to)) if from.len() == to.len() => {
                for (v, r) in from.iter().zip(to.iter_mut()) {
                    Templar::keep_untrusted_of(v, r);
                }
            }
            (Value::Map(from), Value::Map(to)) => {
                for (k, v) in from.iter() {
                    if let Some(r) = to.get_value_mut(&k.value) {
                        Templar::keep_untrusted_of(v, r);
                    }
                }
            }
            _ => {}
        }
    }

    /// [`Templar::sole_variable`] when that variable is trusted (written by the user).
    fn sole_trusted_variable(node: &Node, scope: &Scope) -> Option<Node> {
        let binding = Templar::sole_binding(node, scope)?;
        (*binding.provenance() == Provenance::Trusted).then(|| binding.node().clone())
    }

    /// Whether `s` contains Jinja2 syntax (ansible's `is_possibly_template`).
    pub fn is_template(s: &str) -> bool {
        is_possibly_template(s)
    }

    /// Renders every template string inside `node` as ansible renders a task argument: a
    /// string that is one expression keeps the expression's type, others become strings;
    /// `!unsafe` strings stay as they are; `!vault` values are decrypted; keys and items that
    /// render to `omit` disappear. A value that is itself `omit` is an error of kind
    /// [`TemplateErrorKind::Omitted`] (the caller drops that argument).
    pub fn render(&self, node: &Node, scope: &Scope) -> Result<Rendered, TemplateError> {
        let (result, provenance) = engine::active::top_level(|| self.render_node(node, scope));
        match result.map_err(|e| e.having_read(&provenance))? {
            Piece::Value(value) => {
                Ok(Rendered { value: Node::new(value, node.origin.clone()), provenance })
            }
            Piece::Omitted => {
                Err(TemplateError::new(TemplateErrorKind::Omitted, error::OMITTED_MESSAGE)
                    .at(node.origin.clone()))
            }
        }
    }

    /// [`Templar::render`] of a loop's source, with what it keeps of a list a variable holds
    /// (see [`LoopSource`]).
    pub fn render_loop(
        &self,
        node: &Node,
        scope: &Scope,
    ) -> Result<(Rendered, LoopSource), TemplateError> {
        if !matches!(node.value, Value::Str(_)) {
            return Ok((self.render(node, scope)?, LoopSource::none()));
        }
        let (rendered, source) = loop_source::capturing(|| self.render(node, scope));
        Ok((rendered?, source))
    }

    /// [`Templar::render`] without the deprecations reading a deprecated variable prints: what
    /// ansible's strategy renders (an include's name) shows none.
    pub fn render_quietly(&self, node: &Node, scope: &Scope) -> Result<Rendered, TemplateError> {
        engine::active::quietly(|| self.render(node, scope))
    }

    /// Renders one template string (trusted: it is rendered even if it came from a managed
    /// host; use [`Templar::render`] for data whose strings may be `!unsafe`).
    pub fn render_str(&self, source: &str, scope: &Scope) -> Result<Rendered, TemplateError> {
        self.render(&Node::bare(Value::Str(source.to_string())), scope)
    }

    /// Renders loaded variables (a binding's node) with the loader-time convenience of a plain
    /// mapping as the only, trusted, layer.
    pub fn render_with_vars(
        &self,
        node: &Node,
        vars: &tack_yaml::Mapping,
    ) -> Result<Node, TemplateError> {
        self.render(node, &Scope::from_mapping(vars)).map(|r| r.value)
    }

    fn render_node(&self, node: &Node, scope: &Scope) -> Result<Piece, TemplateError> {
        let mut render_str = |source: &str, at: &Node| -> Result<Piece, TemplateError> {
            engine::active::take_nested_failure();
            let value = engine::active::at_origin(at.origin.clone(), || {
                self.engine.render_nested(source, scope)
            })
            .map_err(|e| {
                let mut error = engine::errors_to_template(&e).at(at.origin.clone());
                error.inner = engine::active::inner_failure(&error.message, &at.origin);
                error
            })?;
            if value::is_omit_value(&value) {
                return Ok(Piece::Omitted);
            }
            loop_source::offer(&value);
            if value.is_undefined() {
                return Err(TemplateError::new(
                    TemplateErrorKind::Render,
                    "Error rendering template: Type 'Undefined' is unsupported for variable storage.",
                )
                .at(at.origin.clone()));
            }
            // A template's strings are not trusted as templates, unless they say themselves.
            // Finalizing reads the templates inside a lazy container: one that fails is shown
            // where it was written, as a failure inside the render is.
            engine::active::at_origin(at.origin.clone(), || value::to_value(&value))
                .map(|v| Piece::Value(if value::marking() { v } else { untrusted(v) }))
                .map_err(|e| {
                    let mut error = engine::errors_to_template(&e).at(at.origin.clone());
                    error.inner = engine::active::inner_failure(&error.message, &at.origin);
                    error
                })
        };
        let mut decrypt = |text: &str, at: &Node| -> Result<Value, TemplateError> {
            let v = self
                .engine
                .decrypt(text)
                .map_err(|e| engine::errors_to_template(&e).at(at.origin.clone()))?;
            Ok(Value::Str(v.as_str().unwrap_or_default().to_string()))
        };
        walk(node, &mut render_str, &mut decrypt)
    }

    /// ansible's `resolve_to_container` as `assert` applies it to a `that` written as one
    /// template: the list the template gives, its items as written (not rendered, so each is
    /// evaluated as a conditional of its own); `None` when `node` is not wholly a template,
    /// the template fails, or its value is not a list.
    pub fn resolve_to_list(&self, node: &Node, scope: &Scope) -> Option<Vec<Node>> {
        let Value::Str(text) = &node.value else { return None };
        if !engine::is_possibly_all_template(text) {
            return None;
        }
        let (value, _) = engine::active::top_level(|| {
            engine::active::at_origin(node.origin.clone(), || {
                engine::active::quietly(|| self.engine.render_nested(text, scope))
            })
        });
        let value = value.ok()?;
        if let Some(list) = value.downcast_object_ref::<vars::objects::List>() {
            return list.items_as_written().ok();
        }
        match value::to_value(&value).ok()? {
            Value::Seq(items) => Some(
                items
                    .into_iter()
                    .map(|item| match item.value {
                        Value::Str(s) => Node::bare(Value::Unsafe(s)),
                        _ => item,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Evaluates a conditional (`when`, `changed_when`, `failed_when`, `until`, an
    /// `assert.that` item) as ansible 2.21 does: the result must be a boolean.
    pub fn evaluate_conditional(
        &self,
        node: &Node,
        scope: &Scope,
    ) -> Result<Conditional, TemplateError> {
        let mut rendered = None;
        let (result, provenance) = engine::active::top_level(|| {
            engine::active::at_origin(node.origin.clone(), || {
                engine::evaluate_conditional(&self.engine, node, scope, &mut rendered)
            })
        });
        let value = result.map_err(|e| e.having_read(&provenance))?;
        Ok(Conditional { value, provenance, rendered })
    }

    /// Renders a template file as the `template` module does (`trim_blocks` on,
    /// `lstrip_blocks` off, the trailing newline kept); includes resolve next to the file.
    /// The result is always text.
    pub fn render_file(&self, path: &Path, scope: &Scope) -> Result<Rendered, TemplateError> {
        let options = TemplateFileOptions {
            path_as_given: Some(path.display().to_string()),
            ..TemplateFileOptions::default()
        };
        self.render_file_with(path, scope, &options)
    }

    /// [`Templar::render_file`] with the `template` action's options (`dest`, the managed
    /// string setting, the path as the task wrote it).
    pub fn render_file_with(
        &self,
        path: &Path,
        scope: &Scope,
        options: &TemplateFileOptions,
    ) -> Result<Rendered, TemplateError> {
        let path = tack_py::path::abspath(path);
        let origin = tack_diag::Origin::file(Arc::from(path.as_path()));
        engine::active::compile_failed_at(None);
        // What the file raises (a deprecation) points at the file, as ansible's does.
        let (result, provenance) = engine::active::at_origin(Some(origin.clone()), || {
            engine::active::top_level(|| {
                engine::template_file::render(&self.engine, &path, scope, options)
            })
        });
        let text = result.map_err(|e| {
            // A syntax error in this file is placed at its line, which ansible underlines
            // whole (the parser knows no column).
            let at = match engine::active::take_compile_line() {
                Some(line) if e.kind() == minijinja::ErrorKind::SyntaxError => {
                    let mut at = origin.clone();
                    at.line = u32::try_from(line).unwrap_or(0);
                    at
                }
                _ => origin.clone(),
            };
            engine::errors_to_template(&e).at(Some(at)).having_read(&provenance)
        })?;
        Ok(Rendered { value: Node::new(Value::Str(text), Some(origin)), provenance })
    }

    /// The variable names a template string refers to that it does not set itself: the
    /// conservative, static view of what a render may read.
    pub fn referenced_names(&self, source: &str) -> Result<BTreeSet<String>, TemplateError> {
        self.engine.referenced_names(source).map_err(|e| engine::errors_to_template(&e))
    }

    /// The union of the provenances of every variable any template string in `node` refers
    /// to, found without rendering: conservative (a name in a branch never taken counts).
    /// Reads through `vars[...]`/`hostvars[...]` are only known when rendering.
    pub fn static_provenance(&self, node: &Node, scope: &Scope) -> ProvenanceSet {
        let mut set = ProvenanceSet::new();
        let mut names = BTreeSet::new();
        collect_template_names(self, node, &mut names);
        for name in names {
            if let Some(binding) = scope.get(&name) {
                set.add(binding.provenance());
            }
        }
        set
    }
}

impl LoopSource {
    /// For each item of the list the loop's template gave, the places inside it of the
    /// strings that are the user's, as written; `None` unless the list is a variable's (or
    /// part of one): a list a template builds is made of new values.
    pub fn trusted_leaves(&self) -> Option<Vec<Vec<Vec<tack_yaml::tagged::PathStep>>>> {
        self.0.as_ref()?.downcast_object_ref::<vars::objects::List>()?.trusted_leaves()
    }
}

/// A render's result as data that is never rendered again: a string with template syntax in
/// it can only have been computed (or written `!unsafe`), and ansible never trusts a
/// template's result, so it becomes `Value::Unsafe`. Strings without template syntax stay as
/// they are (rendering them again would change nothing).
fn untrusted(value: Value) -> Value {
    match value {
        Value::Str(s) if is_possibly_template(&s) => Value::Unsafe(s),
        Value::Seq(items) => {
            Value::Seq(items.into_iter().map(|n| Node::new(untrusted(n.value), n.origin)).collect())
        }
        Value::Map(m) => {
            let mut out = tack_yaml::Mapping::new();
            for (k, v) in m.iter() {
                out.insert(k.clone(), Node::new(untrusted(v.value.clone()), v.origin.clone()));
            }
            Value::Map(out)
        }
        other => other,
    }
}

fn collect_template_names(templar: &Templar, node: &Node, names: &mut BTreeSet<String>) {
    match &node.value {
        Value::Str(s) if is_possibly_template(s) => {
            if let Ok(found) = templar.referenced_names(s) {
                names.extend(found);
            }
        }
        Value::Seq(items) => items.iter().for_each(|n| collect_template_names(templar, n, names)),
        Value::Map(m) => {
            for (k, v) in m.iter() {
                collect_template_names(templar, k, names);
                collect_template_names(templar, v, names);
            }
        }
        _ => {}
    }
}
