//! Template plugins written in Python: the filter, test and lookup plugins a run finds beside
//! its playbooks, in its roles or on the configured plugin paths. The templar does not run
//! Python; the run hands it a [`PythonPlugins`] that does (the controller's plugin worker),
//! and the templar registers the names it provides and carries each call across as data.
//!
//! The rules are ansible's `JinjaPluginIntercept` and `_invoke_lookup`: an undefined
//! argument of a filter or test is the call's result without calling the plugin (a lookup's
//! `errors=` and `wantlist` are the lookups module's), a plugin found on these paths shadows
//! a builtin of the same short name (ansible searches the added directories before its own),
//! and every value crosses fully rendered, as the plain data a Python function receives.
//! A lookup's undefined arguments cross as placeholders ([`undefined_placeholder_key`]):
//! the worker hands the plugin ansible's marker for each, and the plugin's class decides
//! (`accept_args_markers`) whether it sees them or the first one is the result.
//!
//! This file holds the contract only; the filters and tests register in `engine::env`, a
//! lookup is called from `lookups`, and a render's variables are read through `value`. It
//! never starts a process.

use tack_yaml::Value;

/// Which family a plugin belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    Filter,
    Test,
    Lookup,
}

impl PluginKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Filter => "filter",
            PluginKind::Test => "test",
            PluginKind::Lookup => "lookup",
        }
    }
}

/// One call of a Python plugin, its arguments rendered.
#[derive(Debug)]
pub struct PluginCall<'a> {
    pub kind: PluginKind,
    /// The name as the template wrote it (`my_filter`, `ansible.legacy.my_filter`).
    pub name: &'a str,
    pub args: Vec<Value>,
    pub kwargs: Vec<(String, Value)>,
}

/// What a plugin returned.
#[derive(Debug)]
pub struct PluginReply {
    pub value: Value,
    /// ansible-core's deprecations the call raised (a test returning a non-boolean, a
    /// deprecated variable a lookup's own templating used).
    pub deprecations: Vec<RaisedDeprecation>,
}

/// A deprecation a plugin call raised. (The fields of `vars::Deprecation`, repeated: this
/// module is the plugins' interface and stays out of the engine's own modules.)
#[derive(Debug, Clone, PartialEq)]
pub struct RaisedDeprecation {
    /// The message, without the sentence on when the feature goes.
    pub message: String,
    /// The ansible-core version that removes it.
    pub removed_in: String,
    pub help: Option<String>,
    /// Where ansible's event said it came from (`Origin: ...`, then the value it was about
    /// when that has no position); without it, the template that called the plugin.
    pub context: Option<String>,
}

/// Why a plugin gave no value.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginFailure {
    /// The complete message, as ansible words it (a plugin that failed to load, a filter or
    /// test that raised): shown unchanged.
    #[error("{0}")]
    Final(String),
    /// A lookup raised: the message of its exception chain, which the lookup's `errors=`
    /// decides about (`The lookup plugin 'NAME' failed: ...` when strict).
    #[error("{0}")]
    Raised(String),
    /// No plugin of that name (a collection's name the collection does not provide).
    #[error("no such plugin")]
    Missing,
    /// The call's result is one of its undefined arguments (the placeholder's number): the
    /// lookup takes no undefined arguments, or it used one (ansible's `MarkerError`).
    #[error("an undefined argument was used")]
    UsedUndefined(i64),
}

/// The key of the one-entry map that stands for an undefined argument of a lookup while it
/// crosses to the worker (its value is the argument's number). Made once per process from
/// random bits, so that no user's data can take this shape.
pub fn undefined_placeholder_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let bits = std::collections::hash_map::RandomState::new().build_hasher().finish();
        format!("__tack_undefined_{bits:016x}__")
    })
}

/// The placeholder's number, when `value` is a placeholder.
pub fn undefined_placeholder(value: &Value) -> Option<i64> {
    let Value::Map(map) = value else { return None };
    if map.len() != 1 {
        return None;
    }
    let (key, number) = map.iter().next()?;
    match (&key.value, &number.value) {
        (Value::Str(k), Value::Int(n)) if k == undefined_placeholder_key() => Some(*n),
        _ => None,
    }
}

/// The variables of the running template, as a lookup's `variables` reads them.
pub trait VariableSource {
    /// Every visible name.
    fn names(&self) -> Vec<String>;
    /// A variable's value, its templates rendered; `None` when it is not defined, the
    /// render's error message when it cannot be rendered.
    fn get(&self, name: &str) -> Option<Result<Value, String>>;
    /// ansible-core's deprecation of a variable (`play_hosts`, a fact injected at the top
    /// level), as its message, the version that removes it and its help: handed over with
    /// its value, so that only a plugin that uses it raises it, as ansible's tagged value
    /// does.
    fn deprecation(&self, _name: &str) -> Option<(String, String, Option<String>)> {
        None
    }
    /// Whether the variable was written by the user (its strings that are templates are
    /// then trusted as templates, as ansible's loaded values are, and render when a
    /// plugin's templar reads them).
    fn trusted(&self, _name: &str) -> bool {
        false
    }
}

/// The run's Python template plugins.
pub trait PythonPlugins: Send + Sync {
    /// The filter or test names the plugins provide (short and `ansible.legacy.` spellings).
    fn jinja_names(&self, kind: PluginKind) -> Vec<String>;
    /// Whether a lookup plugin of this short name is on the plugin paths (a collection's
    /// lookup, by its fully qualified name, is asked for by [`PythonPlugins::call`]).
    fn has_lookup(&self, short_name: &str) -> bool;
    /// Calls a plugin; a lookup reads its variables from `vars` while it runs.
    fn call(
        &self,
        call: PluginCall<'_>,
        vars: &dyn VariableSource,
    ) -> Result<PluginReply, PluginFailure>;
}

/// Whether `name` is a collection's fully qualified plugin name (`ns.col.name`; not one of
/// ansible-core's own `ansible.builtin`/`ansible.legacy`).
pub fn is_collection_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 3
        && !(parts[0] == "ansible" && matches!(parts[1], "builtin" | "legacy"))
        && parts.iter().all(|p| {
            p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
