//! ansible-core 2.21's filters: every `ansible.builtin` filter plugin (`core.py`,
//! `mathstuff.py`, `urls.py`, `urlsplit.py`, `encryption.py`) and the Jinja2 3.1.6 builtins
//! whose minijinja version behaves differently, as plain minijinja functions.
//!
//! Every filter is registered through one wrapper that does what ansible's plugin intercept
//! does: an undefined argument is returned as the result instead of calling the filter (unless
//! the filter accepts undefined values, as `default` and `mandatory` do), the call is bound to
//! the Python function's signature (so a bad call fails with Python's `TypeError` text), and a
//! failure reads `The filter plugin 'ansible.builtin.NAME' failed: ...`. Each filter is also
//! reachable by its fully qualified name (`ansible.builtin.NAME`).
//!
//! Jinja2 builtins that minijinja already renders as Jinja2 does are left to minijinja; each is
//! named at [`KEPT_FROM_MINIJINJA`] with the recorded case that shows it.
//!
//! This module owns the filters only: tests, lookups, variables and the engine live elsewhere,
//! and nothing here reads variables other than through its arguments.

pub(crate) mod args;
mod collections;
mod core;
mod datetime;
mod encoding;
pub(crate) mod hashing;
mod json_yaml;
mod lists;
mod math;
mod paths;
mod printf;
mod pyset;
mod pysort;
pub(crate) mod pyval;
pub(crate) mod random;
pub(crate) mod regex;
mod sets;
mod strings;
mod textwrap;
mod urlize;
pub(crate) mod urls;

use minijinja::value::{Rest, ValueOrKwargs};
use minijinja::{Environment, ErrorKind, State, Value};

use args::{Bound, Sig};

/// Jinja2 builtin filters left to minijinja because its version matches Jinja2's output.
///
/// None is: checked one by one against cases recorded from ansible-core 2.21.5, every minijinja
/// builtin differs from Jinja2 3.1.6 under ansible in at least one of case folding (`sort`,
/// `unique`, `min`, `max`, `groupby`, `dictsort` fold case by default in Jinja2), Python's
/// number and `str()` rules (`int`, `float`, `round`, `string`, `join`, `sum`), Python's
/// whitespace and line-break definitions (`trim`, `indent`, `title`, `wordcount`), its error
/// texts (every filter), or the undefined-value rules (`default`, `first`, `last`, `map`,
/// `select`). Each is replaced here; `tests/filters/*.json` holds the evidence.
pub const KEPT_FROM_MINIJINJA: &[&str] = &[];

/// minijinja builtins that neither Jinja2 nor ansible has: removed, so using one is the same
/// unknown-filter error ansible raises.
const NOT_IN_ANSIBLE: &[&str] = &["lines", "chain"];

/// A filter that did not produce a value.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// The plugin raised: ansible reports `The filter plugin '...' failed: {0}`.
    #[error("{0}")]
    Failed(String),
    /// An error that passes through unchanged (an undefined value used inside the filter).
    #[error(transparent)]
    Template(#[from] minijinja::Error),
}

impl FilterError {
    pub(crate) fn failed(message: impl Into<String>) -> FilterError {
        FilterError::Failed(message.into())
    }

    /// An error raised `from` another: ansible shows both messages, the first without its
    /// trailing punctuation (`log() can only be used on numbers: must be real number, not str`).
    pub(crate) fn caused(message: &str, cause: &str) -> FilterError {
        FilterError::Failed(concat_message(message, cause))
    }

    fn into_jinja(self, name: &str) -> minijinja::Error {
        match self {
            FilterError::Failed(message) => {
                let message =
                    format!("The filter plugin 'ansible.builtin.{name}' failed: {message}");
                minijinja::Error::new(ErrorKind::InvalidOperation, message.clone())
                    .with_source(FilterMessage(message))
            }
            FilterError::Template(err) => err,
        }
    }
}

/// The source attached to every error a filter raises with its own text: the complete message
/// as ansible words it, to be shown unchanged (the engine must not reword or prefix it).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct FilterMessage(pub String);

impl FilterMessage {
    /// The filter's own message, when `err` came from a filter.
    pub fn of(err: &minijinja::Error) -> Option<&str> {
        let source = std::error::Error::source(err)?;
        source.downcast_ref::<FilterMessage>().map(|m| m.0.as_str())
    }
}

/// ansible's `concat_message`.
pub(crate) fn concat_message(left: &str, right: &str) -> String {
    format!("{}: {right}", left.trim_end_matches(['.', ' ']))
}

/// One filter: its name, its Python signature and what it does.
pub(crate) struct Entry {
    pub name: &'static str,
    pub sig: Sig,
    /// Called even when an argument is undefined (ansible's `accept_args_markers`).
    pub accepts_undefined: bool,
    pub run: fn(&mut State, &Bound) -> Result<Value, FilterError>,
}

impl Entry {
    pub(crate) const fn new(
        name: &'static str,
        sig: Sig,
        run: fn(&mut State, &Bound) -> Result<Value, FilterError>,
    ) -> Entry {
        Entry { name, sig, accepts_undefined: false, run }
    }

    pub(crate) const fn accepting_undefined(mut self) -> Entry {
        self.accepts_undefined = true;
        self
    }
}

fn families() -> impl Iterator<Item = &'static Entry> {
    [
        core::FILTERS,
        collections::FILTERS,
        lists::FILTERS,
        sets::FILTERS,
        json_yaml::FILTERS,
        encoding::FILTERS,
        hashing::FILTERS,
        regex::FILTERS,
        paths::FILTERS,
        urls::FILTERS,
        math::FILTERS,
        datetime::FILTERS,
        random::FILTERS,
        strings::FILTERS,
    ]
    .into_iter()
    .flatten()
}

/// The names of every filter this module registers (short names only).
pub fn names() -> Vec<&'static str> {
    families().map(|e| e.name).collect()
}

/// How a vaulted text a filter decodes (`from_json`'s legacy profiles) becomes a template
/// value: the engine's, which holds the run's secrets, installed with [`install_vaulted`]
/// (filters know nothing of secrets or renders).
static VAULTED: std::sync::OnceLock<fn(&str) -> Value> = std::sync::OnceLock::new();

/// Installs how vaulted text becomes a value (the engine does, as it registers the filters).
pub(crate) fn install_vaulted(make: fn(&str) -> Value) {
    let _ = VAULTED.set(make);
}

/// A vaulted text as a template value (see [`install_vaulted`]).
pub(crate) fn vaulted(text: &str) -> Value {
    match VAULTED.get() {
        Some(make) => make(text),
        None => Value::from(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            "Attempt to use undecryptable variable: no vault secrets",
        )),
    }
}

/// Registers every filter, under its short name and as `ansible.builtin.NAME`.
pub fn register(env: &mut Environment<'static>) {
    for name in NOT_IN_ANSIBLE {
        env.remove_filter(name);
    }
    for entry in families() {
        env.add_filter(entry.name, wrap(entry));
        env.add_filter(format!("ansible.builtin.{}", entry.name), wrap(entry));
    }
}

/// Python's type name of a value as `type_debug` reports it.
pub fn python_type_name(value: &Value) -> &'static str {
    pyval::type_name(value)
}

/// Python's `str()` of a value.
pub fn python_str(value: &Value) -> String {
    pyval::str_of(value)
}

/// Python's `repr()` of a value.
pub fn python_repr(value: &Value) -> String {
    pyval::repr_of(value)
}

pub use datetime::DateTime;
pub(crate) use datetime::strftime_of;
pub(crate) use pyval::exception_class;

/// ansible's message for a filter name no plugin provides (a syntax error in Jinja2, raised when
/// the template is compiled).
pub fn unknown_filter_message(name: &str) -> String {
    format!("Syntax error in template: No filter named '{name}'.")
}

/// Whether a value is ansible's undefined marker (until the engine's own helper lands, the
/// minijinja undefined value).
pub(crate) fn is_undefined(value: &Value) -> bool {
    value.is_undefined()
}

/// The error for using an undefined value (the engine words it from the value's origin).
pub(crate) fn undefined_error(_value: &Value) -> FilterError {
    FilterError::Template(minijinja::Error::new(ErrorKind::UndefinedError, "undefined value"))
}

/// Fails with the undefined error when an item a filter is about to use is undefined, as
/// ansible's lazy containers raise when such an item is read.
pub(crate) fn require_defined<'a>(
    items: impl IntoIterator<Item = &'a Value>,
) -> Result<(), FilterError> {
    match items.into_iter().find(|v| is_undefined(v)) {
        Some(undefined) => Err(undefined_error(undefined)),
        None => Ok(()),
    }
}

fn wrap(
    entry: &'static Entry,
) -> impl Fn(&mut State, Rest<ValueOrKwargs>) -> Result<Value, minijinja::Error> + Send + Sync + 'static
{
    move |state: &mut State, raw: Rest<ValueOrKwargs>| {
        crate::markers::keep(run(entry, state, raw), Some(crate::markers::PLUGIN_FAILED))
    }
}

fn run(
    entry: &'static Entry,
    state: &mut State,
    raw: Rest<ValueOrKwargs>,
) -> Result<Value, minijinja::Error> {
    {
        let (positional, keywords) = args::split(raw);
        if !entry.accepts_undefined {
            let first_undefined =
                positional.iter().chain(keywords.iter().map(|(_, v)| v)).find(|v| is_undefined(v));
            if let Some(undefined) = first_undefined {
                return Ok(undefined.clone());
            }
        }
        let bound =
            args::bind(&entry.sig, positional, keywords).map_err(|e| e.into_jinja(entry.name))?;
        // A filter that ran out of memory raised Python's MemoryError, which says nothing:
        // ansible shows the plugin's failure alone (`The filter plugin '...' failed.`).
        let ran =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (entry.run)(state, &bound)));
        let ran = match ran {
            Ok(ran) => ran,
            Err(payload) if payload.is::<crate::python::memory::MemoryError>() => {
                let message = format!("The filter plugin 'ansible.builtin.{}' failed.", entry.name);
                return Err(minijinja::Error::new(ErrorKind::InvalidOperation, message.clone())
                    .with_source(FilterMessage(message)));
            }
            Err(payload) => std::panic::resume_unwind(payload),
        };
        ran.map_err(|e| e.into_jinja(entry.name))
    }
}
