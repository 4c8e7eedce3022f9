//! The engine: one minijinja environment set up as ansible's Jinja2 environment is, the
//! compile cache, and rendering a template string to a value with ansible 2.21's native typing.
//!
//! - Compile cache: templates are loaded through minijinja's loader under a name that is their
//!   own source, so each distinct string is parsed once per engine and shared by every render.
//! - Native typing (ansible's `concat`): a render's output nodes are its literal text and its
//!   `{{ }}` results, with `None` results dropped; no node gives `None`, one node gives that
//!   node's own value, more give their `str()`s joined.
//! - Undefined values chain (`a.b.c is defined` is false); using one is an error that names it
//!   as ansible does (see `undefined`).
//!
//! What this module must not do: walk task data (that is `render`), know filters' semantics
//! (each plugin family registers itself), or print anything.

pub(crate) mod active;
pub(crate) mod chosen;
mod conditional;
pub(crate) use conditional::is_possibly_all_template;
mod context;
mod depth;
mod env;
mod errors;
mod kwargs;
pub(crate) mod prepass;
mod protomatter;
pub(crate) mod render;
mod root_names;
mod tagged;
mod tags;
pub(crate) mod template_file;
mod undefined;

use std::collections::BTreeSet;
use std::sync::Arc;

use minijinja::value::Value as JValue;
use minijinja::{Environment, Error, ErrorKind};

pub(crate) use errors::{RENDER_FAILED, final_error};
pub(crate) use prepass::{QUALIFIED_FILTER, QUALIFIED_TEST};
use tack_loader::DataLoader;
use tack_vault::VaultSecrets;

use crate::markers;
use crate::vars::Scope;
use crate::vars::objects::{Ctx, Omit, Root};

pub use conditional::Conditional;
pub use render::Rendered;

/// A compiled template's top-level names, by its source's address and length.
type RootNames = std::collections::HashMap<(usize, usize), Arc<[String]>>;

/// The shared state behind a [`crate::Templar`].
pub(crate) struct Engine {
    env: Environment<'static>,
    loader: Arc<DataLoader>,
    plugins: Option<Arc<dyn crate::PythonPlugins>>,
    /// Each compiled template's top-level names (`root_names`), by where its source lives in
    /// the compiled-template cache (which keeps every template for the engine's life).
    root_names: std::sync::RwLock<RootNames>,
}

/// Prefix of the loader names under which template strings are cached; any other name is a
/// template file's path.
const INLINE: char = '\u{1}';
/// As [`INLINE`], for templates whose string literals process backslash escapes (the
/// expressions of conditionals; see `prepass`).
const EXPRESSION: char = '\u{3}';

impl Engine {
    pub(crate) fn new(
        loader: Arc<DataLoader>,
        plugins: Option<Arc<dyn crate::PythonPlugins>>,
    ) -> Engine {
        Engine {
            env: env::build(plugins.as_ref()),
            loader,
            plugins,
            root_names: std::sync::RwLock::default(),
        }
    }

    /// The run's Python template plugins, if it has any.
    pub(crate) fn plugins(&self) -> Option<&Arc<dyn crate::PythonPlugins>> {
        self.plugins.as_ref()
    }

    pub(crate) fn loader(&self) -> &DataLoader {
        &self.loader
    }

    /// The compiled template for `source`, compiled on first use.
    fn template(&self, source: &str) -> Result<minijinja::Template<'_, '_>, Error> {
        self.cached(INLINE, source)
    }

    fn cached(&self, prefix: char, source: &str) -> Result<minijinja::Template<'_, '_>, Error> {
        let mut name = String::with_capacity(source.len() + 1);
        name.push(prefix);
        name.push_str(source);
        self.env.get_template(&name)
    }

    /// Evaluates a conditional's expression (given as `{{ expr }}`): like
    /// [`Engine::render_nested`], but string literals process backslash escapes, as ansible's
    /// expressions do.
    pub(crate) fn render_expression(
        self: &Arc<Self>,
        source: &str,
        scope: &Scope,
    ) -> Result<JValue, Error> {
        let template =
            self.cached(EXPRESSION, source).map_err(|e| errors::compile_error(&e, source))?;
        self.render_template(&template, scope)
    }

    /// Renders a template string in `scope` to its native value: what reading a variable whose
    /// value is that string gives. Errors are already in ansible's words.
    pub(crate) fn render_nested(
        self: &Arc<Self>,
        source: &str,
        scope: &Scope,
    ) -> Result<JValue, Error> {
        let template = self.template(source).map_err(|e| errors::compile_error(&e, source))?;
        let value = self.render_template(&template, scope)?;
        Ok(keep_trailing_newlines(source, value))
    }

    /// The names a template refers to without setting them.
    pub(crate) fn referenced_names(&self, source: &str) -> Result<BTreeSet<String>, Error> {
        let template = self.template(source).map_err(|e| errors::ansible_error(&e, None))?;
        let names = template.undeclared_variables(false).into_iter();
        Ok(names.filter(|n| !n.starts_with("__tack_")).collect())
    }

    /// Renders a compiled template (a string's or a file's) to its native value.
    fn render_template(
        self: &Arc<Self>,
        template: &minijinja::Template<'_, '_>,
        scope: &Scope,
    ) -> Result<JValue, Error> {
        let ctx = Ctx { scope: scope.clone(), engine: self.clone() };
        let root = Arc::new(Root::new(ctx.clone()));
        self.read_root_names(template, scope);
        let attempt = |root: &Arc<Root>| {
            // The text of a lazy container the render gave is made in its context too.
            active::with_ctx(ctx.clone(), template.name(), || {
                let (result, emits) = active::collecting(|| {
                    let render = || template.render(JValue::from_dyn_object(root.clone()));
                    quiet_panics();
                    RENDERING.with(|r| r.set(r.get() + 1));
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(render));
                    RENDERING.with(|r| r.set(r.get().saturating_sub(1)));
                    result.unwrap_or_else(|payload| Err(panicked(payload.as_ref())))
                });
                result.and_then(|out| render::native(out, emits))
            })
        };
        let explain = |e: &Error| errors::message(&errors::ansible_error(e, Some(&root)));
        // The compiled name is the source after its one-character kind.
        let source = template.name().get(1..).unwrap_or_default();
        match active::lazy_render(|| attempt(&root), explain, source) {
            Ok(value) => Ok(value),
            // An undecryptable value or a failure may have gone only where a plugin takes it
            // as ansible's marker: the render runs again, its variables read afresh, with
            // markers made.
            Err(e) if markers::retried(source, is_undecryptable(&e)) => {
                let again = Arc::new(Root::new(ctx.clone()));
                match markers::with_markers(|| attempt(&again)) {
                    Some(Ok(value)) => Ok(value),
                    _ => Err(errors::ansible_error(&e, Some(&root))),
                }
            }
            Err(e) => Err(errors::ansible_error(&e, Some(&root))),
        }
    }

    /// What Jinja2's generated code does first: read every variable the template's top level
    /// names (`root_names`). Only what that reading shows is done here: a deprecated
    /// variable's deprecation (a fact read as a top-level variable, `vars`), which ansible
    /// raises even for a name in a branch that never runs; the values are read when used.
    fn read_root_names(&self, template: &minijinja::Template<'_, '_>, scope: &Scope) {
        let source = template.source();
        // Only a deprecated variable, or `vars`, has anything to say when read.
        if active::context_hidden() || !scope.has_deprecated() && !source.contains("vars") {
            return;
        }
        let key = (source.as_ptr() as usize, source.len());
        let known = self
            .root_names
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .cloned();
        let names = match known {
            Some(names) => names,
            None => {
                let found = root_names::root_names(source, env::syntax());
                let names: Arc<[String]> = found.unwrap_or_default().into();
                self.root_names
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(key, names.clone());
                names
            }
        };
        for name in names.iter() {
            match scope.get(name) {
                Some(binding) => {
                    if let Some(deprecation) = binding.deprecation() {
                        deprecation.emit();
                    }
                }
                None if name == "vars" => crate::vars::Deprecation::vars_dictionary().emit(),
                None => {}
            }
        }
    }

    /// `!vault` ciphertext decrypted with the run's secrets, as a string.
    pub(crate) fn decrypt(&self, ciphertext: &str) -> Result<JValue, Error> {
        decrypt_with(self.loader.secrets(), ciphertext, None)
    }

    /// A variable's `!vault` value read: [`Engine::decrypt`], the plaintext tagged with where
    /// the value was written when tags are wanted (ansible's `Origin` on it; its
    /// `VaultedValue` is the `active::decrypted` mark).
    pub(crate) fn decrypt_read(
        &self,
        ciphertext: &str,
        origin: Option<&tack_diag::Origin>,
    ) -> Result<JValue, Error> {
        let origin = origin.filter(|_| crate::vars::str_tags::wanted());
        decrypt_with(self.loader.secrets(), ciphertext, origin)
    }
}

thread_local! {
    /// How deep this thread is in rendering templates: a panic there becomes the template's
    /// error ([`panicked`]), so the panic hook stays quiet about it.
    static RENDERING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Installs, once, a panic hook that says nothing of a panic caught as a template's error and
/// leaves every other panic to the hook before it.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if RENDERING.with(std::cell::Cell::get) == 0 {
                before(info);
            }
        }));
    });
}

/// A panic inside the template engine as the template's error, so one template never takes
/// the run down. The one known (minijinja's `loop.cycle()` with nothing to cycle divides by
/// zero) gets Jinja's own message.
fn panicked(payload: &(dyn std::any::Any + Send)) -> minijinja::Error {
    // Python's MemoryError says nothing: ansible shows the template's error alone.
    if payload.is::<crate::python::memory::MemoryError>() {
        let detail = crate::python::memory::DETAIL;
        return minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, detail);
    }
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    let shown = if message == "attempt to calculate the remainder with a divisor of zero" {
        "no items for cycling given".to_string()
    } else {
        format!("tack's template engine failed: {message}")
    };
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, shown)
}

/// A vaulted text a template made (`from_json`'s legacy profiles): its plaintext, decrypted
/// with the running render's secrets (the render's result is then sealed), or, when they
/// cannot decrypt it, a value kept vaulted that fails only where it is used, as ansible's
/// encrypted string does.
pub(crate) fn vaulted_value(ciphertext: &str) -> JValue {
    let decrypted = active::current_ctx().and_then(|ctx| ctx.engine.decrypt(ciphertext).ok());
    match decrypted {
        Some(plain) => {
            active::seal();
            plain
        }
        None => JValue::from_object(crate::vars::objects::EncryptedText(ciphertext.to_string())),
    }
}

/// What reading an undecryptable `!vault` value fails with, after [`RENDER_FAILED`].
const UNDECRYPTABLE: &str = "Attempt to use undecryptable variable: ";

fn is_undecryptable(e: &Error) -> bool {
    errors::message(e).contains(UNDECRYPTABLE)
}

fn decrypt_with(
    secrets: &VaultSecrets,
    ciphertext: &str,
    origin: Option<&tack_diag::Origin>,
) -> Result<JValue, Error> {
    match secrets.decrypt(ciphertext.as_bytes()) {
        Ok(plain) => match String::from_utf8(plain) {
            Ok(text) => {
                // Its own allocation (minijinja keeps short strings inline), so that the
                // `vault_encrypted` test can recognise this very string later in the render.
                let text = std::sync::Arc::<str>::from(text);
                let value = match origin {
                    Some(origin) => crate::vars::str_tags::tagged_shared(
                        text,
                        crate::vars::str_tags::StrTags {
                            trusted: false,
                            origin: Some(origin.clone()),
                        },
                    ),
                    None => JValue::from(text),
                };
                active::decrypted(&value);
                Ok(value)
            }
            Err(_) => Err(errors::final_error(
                ErrorKind::InvalidOperation,
                format!("{RENDER_FAILED}{UNDECRYPTABLE}the decrypted value is not UTF-8 text."),
            )),
        },
        Err(e) => Err(errors::final_error(
            ErrorKind::InvalidOperation,
            format!("{RENDER_FAILED}{UNDECRYPTABLE}{e}"),
        )),
    }
}

/// ansible keeps a string result's trailing newlines (Jinja2 drops the last one).
fn keep_trailing_newlines(source: &str, value: JValue) -> JValue {
    let Some(text) = value.as_str() else { return value };
    let want = source.len() - source.trim_end_matches('\n').len();
    let have = text.len() - text.trim_end_matches('\n').len();
    if want <= have {
        return value;
    }
    JValue::from(format!("{text}{}", "\n".repeat(want - have)))
}

/// A failure in ansible's words, as the public error.
pub(crate) fn errors_to_template(err: &Error) -> crate::TemplateError {
    errors::to_template_error(err)
}

/// Evaluates a conditional (see `conditional`).
pub(crate) fn evaluate_conditional(
    engine: &Arc<Engine>,
    node: &tack_yaml::Node,
    scope: &Scope,
    rendered: &mut Option<tack_yaml::Node>,
) -> Result<bool, crate::TemplateError> {
    conditional::evaluate(engine, node, scope, rendered)
}

/// The `omit` value.
pub(crate) fn omit() -> JValue {
    JValue::from_object(Omit)
}

/// ansible's error for a missing method of a value that exists. Its kind tells minijinja to
/// try an attribute of that name next (a macro of an imported template, say).
pub(crate) fn no_attribute_error(type_name: &str, attribute: &str) -> Error {
    errors::final_error(
        ErrorKind::UnknownMethod,
        format!(
            "object of type '{type_name}' has no attribute {}",
            tack_yaml::pyrepr::str_repr(attribute)
        ),
    )
}
