//! ansible-core 2.21's test plugins (what `x is NAME(...)` calls): `ansible.builtin`'s
//! `core.py`, `files.py`, `mathstuff.py` and `uri.py`, and Jinja2 3.1.6's builtin tests as
//! ansible's environment exposes them.
//!
//! Every test is registered through one wrapper that does what ansible's test intercept does:
//! an undefined argument is not passed to the test (unless the test takes undefined values, as
//! `defined` and `undefined` do) but used, so the render fails with the undefined value's own
//! message; the call is bound to the Python function's signature (a bad call fails with
//! Python's `TypeError` text); and a failure reads `The test plugin 'ansible.builtin.NAME'
//! failed: ...`. Each test is also reachable as `ansible.builtin.NAME`. minijinja's tests that
//! neither Jinja2 nor ansible has are removed, so using one is ansible's unknown-test error.
//!
//! This module owns the tests only; it reads variables only through its arguments, and the
//! files it reads are the ones a path test names.

mod core;
mod files;
mod jinja;
mod math;
mod uri;
pub mod version;

use minijinja::value::{Rest, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, Value};

use crate::filters::args::{self, Bound, Sig};

/// minijinja builtin tests that neither Jinja2 nor ansible has.
const NOT_IN_ANSIBLE: &[&str] = &["safe", "int", "startingwith", "endingwith"];

/// A test that did not give an answer.
#[derive(Debug)]
pub(crate) enum TestError {
    /// The plugin raised: ansible reports `The test plugin '...' failed: {0}`.
    Failed(String),
    /// An error that passes through unchanged (an undefined value the test had to use).
    Template(Error),
}

impl From<Error> for TestError {
    fn from(err: Error) -> TestError {
        TestError::Template(err)
    }
}

impl From<crate::filters::FilterError> for TestError {
    fn from(err: crate::filters::FilterError) -> TestError {
        match err {
            crate::filters::FilterError::Failed(message) => TestError::Failed(message),
            crate::filters::FilterError::Template(err) => TestError::Template(err),
        }
    }
}

impl TestError {
    pub(crate) fn failed(message: impl Into<String>) -> TestError {
        TestError::Failed(message.into())
    }

    fn into_jinja(self, name: &str) -> Error {
        match self {
            TestError::Failed(message) => crate::engine::final_error(
                ErrorKind::InvalidOperation,
                format!("The test plugin 'ansible.builtin.{name}' failed: {message}"),
            ),
            TestError::Template(err) => err,
        }
    }
}

pub(crate) type TestResult = Result<bool, TestError>;

/// How a call's arguments are bound, as the Python callable behind the test binds them.
pub(crate) enum Binding {
    /// A Python function with this signature.
    Python(Sig),
    /// A function of the `operator` module (`operator.eq`): two positional arguments.
    Operator(&'static str),
}

/// One test: its name, how its arguments bind and what it does.
pub(crate) struct Entry {
    pub name: &'static str,
    pub binding: Binding,
    /// Called even when an argument is undefined (ansible's `accept_args_markers`).
    pub accepts_undefined: bool,
    pub run: fn(&State, &Bound) -> TestResult,
}

impl Entry {
    pub(crate) const fn new(
        name: &'static str,
        sig: Sig,
        run: fn(&State, &Bound) -> TestResult,
    ) -> Entry {
        Entry { name, binding: Binding::Python(sig), accepts_undefined: false, run }
    }

    pub(crate) const fn operator(
        name: &'static str,
        func: &'static str,
        run: fn(&State, &Bound) -> TestResult,
    ) -> Entry {
        Entry { name, binding: Binding::Operator(func), accepts_undefined: false, run }
    }

    pub(crate) const fn accepting_undefined(mut self) -> Entry {
        self.accepts_undefined = true;
        self
    }
}

fn families() -> impl Iterator<Item = &'static Entry> {
    [jinja::TESTS, core::TESTS, files::TESTS, math::TESTS, uri::TESTS].into_iter().flatten()
}

/// The names of every test this module registers (short names only).
pub fn names() -> Vec<&'static str> {
    families().map(|e| e.name).collect()
}

/// Registers every test, under its short name and as `ansible.builtin.NAME`, replacing
/// minijinja's builtins.
pub fn register(env: &mut Environment<'static>) {
    for name in NOT_IN_ANSIBLE {
        env.remove_test(name);
    }
    for entry in families() {
        env.add_test(entry.name, wrap(entry));
        // Plugin names are identifiers: the operator spellings (`==`, `<`) have no FQCN.
        if entry.name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            env.add_test(format!("ansible.builtin.{}", entry.name), wrap(entry));
        }
    }
}

/// ansible's message for a test name no plugin provides (a syntax error, as Jinja2 raises it
/// when the template is compiled).
pub fn unknown_test_message(name: &str) -> String {
    format!("Syntax error in template: No test named '{name}'.")
}

fn bind(
    entry: &Entry,
    positional: Vec<Value>,
    keywords: Vec<(String, Value)>,
) -> Result<Bound, TestError> {
    match &entry.binding {
        Binding::Python(sig) => Ok(args::bind(sig, positional, keywords)?),
        Binding::Operator(func) => {
            if !keywords.is_empty() {
                return Err(TestError::failed(format!(
                    "_operator.{func}() takes no keyword arguments"
                )));
            }
            if positional.len() != 2 {
                return Err(TestError::failed(format!(
                    "{func} expected 2 arguments, got {}",
                    positional.len()
                )));
            }
            const PAIR: Sig = Sig::new("operator", &["a", "b"], 2);
            Ok(args::bind(&PAIR, positional, keywords)?)
        }
    }
}

fn wrap(
    entry: &'static Entry,
) -> impl Fn(&State, Rest<ValueOrKwargs>) -> Result<bool, Error> + Send + Sync + 'static {
    move |state: &State, raw: Rest<ValueOrKwargs>| {
        let (positional, keywords) = args::split(raw);
        if !entry.accepts_undefined {
            let first_undefined = positional
                .iter()
                .chain(keywords.iter().map(|(_, v)| v))
                .find(|v| crate::value::is_undefined(v));
            if let Some(undefined) = first_undefined {
                // ansible hands the undefined value back as the test's result, and using that
                // result fails with the value's own message.
                return Err(crate::value::undefined_error(undefined));
            }
        }
        let bound = bind(entry, positional, keywords).map_err(|e| e.into_jinja(entry.name))?;
        (entry.run)(state, &bound).map_err(|e| e.into_jinja(entry.name))
    }
}

/// Python's `bool(value)` of an argument that must be defined to be tested for truth.
pub(crate) fn truth(value: &Value) -> Result<bool, TestError> {
    if crate::value::is_undefined(value) {
        return Err(TestError::Template(crate::value::undefined_error(value)));
    }
    Ok(crate::filters::pyval::truthy(value))
}
