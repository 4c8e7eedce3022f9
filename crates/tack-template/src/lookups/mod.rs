//! ansible-core 2.21's lookups: the Jinja2 globals `lookup(name, *terms, **kwargs)`,
//! `query(...)` and `q(...)`, and [`run_loop`], what the executor calls for a task's
//! `with_<name>:` loop.
//!
//! Every lookup is registered once here ([`families`]) and called through [`invoke`], which does
//! what ansible's `_invoke_lookup` does: an undefined top-level argument is the result (unless
//! the lookup accepts undefined values), `wantlist` and `errors` are taken out of the keyword
//! arguments, a failure reads `The lookup plugin 'NAME' failed: ...` (or is a warning or
//! nothing with `errors=warn|ignore`), and without `wantlist` a one-item result is that item
//! and a result of strings only is joined with commas.
//!
//! Lookups that read the controller (files, the environment, commands) return trusted values:
//! whatever their terms read is already recorded by the render that computed the terms. The
//! `vars` lookup reads variables through [`RenderEnv::read`], so the binding read is recorded.
//! Terms a managed host chose (`engine::chosen` answers) meet each lookup's [`Reach`]: file
//! lookups find files only inside the role's and the playbook's directories, and lookups no
//! directory confines (commands, the environment, password files) are refused before they
//! act, whatever `errors=` says (seed 002).
//!
//! This module owns the lookups only; it prints nothing except ansible's `errors=warn`
//! warning, and never writes files other than the `password` lookup's.

pub mod config;
mod files;
mod lists;
mod options;
mod password;
mod process;
mod sequence;
mod tables;
mod template;
mod vars;

use std::sync::Arc;

use minijinja::value::{Rest, Value as JValue, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind};
use tack_yaml::{Node, Value};

use crate::engine::final_error;
use crate::value::{RenderEnv, current, new_list};
use crate::{Layer, Provenance, ProvenanceSet, Scope, Templar, TemplateError, TemplateErrorKind};

pub use config::set_config;

/// One call of a lookup's `run(terms, variables, **kwargs)`.
pub(crate) struct Call<'a> {
    pub env: &'a RenderEnv,
    pub terms: Vec<JValue>,
    pub kwargs: Vec<(String, JValue)>,
    /// Run for a `with_<name>:` loop (first_found then drops undefined terms).
    pub as_with: bool,
    /// The task's action, for a `with_` loop (first_found searches `templates/` for a
    /// template task, `vars/` for an include_vars one).
    pub action: Option<&'a str>,
    /// A managed host chose the terms (`engine::chosen`): a file lookup finds files only
    /// inside the role's and the playbook's directories.
    pub host_named: bool,
    /// The lookup's name as called, for refusals.
    pub name: &'a str,
}

impl Call<'_> {
    /// The keyword argument `name`, if given.
    pub(crate) fn kwarg(&self, name: &str) -> Option<&JValue> {
        self.kwargs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// Why a lookup gave no result.
pub(crate) enum LookupError {
    /// The plugin raised: ansible reports `The lookup plugin 'NAME' failed: {0}`.
    Failed(String),
    /// An error that passes through unchanged (an undefined value used by the lookup).
    Template(Error),
    /// A name a managed host chose leaves the confinement (seed 002): the render fails,
    /// whatever `errors=` says.
    Refused(String),
    /// The lookup used an undefined term: that value is the call's result, as ansible's
    /// `MarkerError` makes it (`lookup('env', missing) | default(x)` gives `x`).
    Undefined(JValue),
}

impl LookupError {
    pub(crate) fn failed(message: impl Into<String>) -> LookupError {
        LookupError::Failed(message.into())
    }
}

impl From<Error> for LookupError {
    fn from(err: Error) -> LookupError {
        LookupError::Template(err)
    }
}

pub(crate) type Run = fn(&Call) -> Result<Vec<JValue>, LookupError>;

/// What a lookup reaches on the controller with its terms, and so what happens when a
/// managed host chose them.
#[derive(Clone, Copy)]
pub(crate) enum Reach {
    /// Nothing outside the render (lists, sequences, variables, settings): runs as asked.
    Nothing,
    /// Files it finds on the search path: found only inside the role's and the playbook's
    /// directories (`files::find_file`).
    Files,
    /// Something no directory confines: refused before it acts, as `the terms of the 'NAME'
    /// lookup were named by a managed host, and a controller <what> a host chose is never
    /// <verb>`.
    Refused { what: &'static str, verb: &'static str },
}

/// One lookup plugin.
pub(crate) struct Entry {
    pub name: &'static str,
    /// Called even when a top-level argument is undefined (ansible's `accept_args_markers`).
    pub accepts_undefined: bool,
    /// Its terms are read lazily: an undefined value inside a container is a value it sees,
    /// not the render's error (ansible's `accept_lazy_markers`).
    pub lazy_terms: bool,
    pub reach: Reach,
    pub run: Run,
}

impl Entry {
    pub(crate) const fn new(name: &'static str, run: Run) -> Entry {
        Entry { name, accepts_undefined: false, lazy_terms: false, reach: Reach::Nothing, run }
    }

    pub(crate) const fn lazy(mut self) -> Entry {
        self.lazy_terms = true;
        self
    }

    pub(crate) const fn accepting_undefined(mut self) -> Entry {
        self.accepts_undefined = true;
        self
    }

    pub(crate) const fn reading_files(mut self) -> Entry {
        self.reach = Reach::Files;
        self
    }

    pub(crate) const fn refused_when_chosen(
        mut self,
        what: &'static str,
        verb: &'static str,
    ) -> Entry {
        self.reach = Reach::Refused { what, verb };
        self
    }
}

/// Builtin lookups tack does not provide, refused by name (they are not unknown to ansible).
const REFUSED: &[(&str, &str)] = &[(
    "url",
    "tack does not implement the 'url' lookup (it fetches URLs from the controller); \
         use the uri module or the get_url module instead",
)];

fn families() -> impl Iterator<Item = &'static Entry> {
    [
        lists::LOOKUPS,
        sequence::LOOKUPS,
        files::LOOKUPS,
        template::LOOKUPS,
        process::LOOKUPS,
        vars::LOOKUPS,
        config::LOOKUPS,
        tables::LOOKUPS,
        password::LOOKUPS,
    ]
    .into_iter()
    .flatten()
}

/// The names of every lookup tack provides (short names; each also answers to
/// `ansible.builtin.NAME`).
pub fn names() -> Vec<&'static str> {
    families().map(|e| e.name).collect()
}

fn find(name: &str) -> Option<&'static Entry> {
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    families().find(|e| e.name == short)
}

/// ansible's message for a lookup no plugin provides.
pub fn unknown_lookup_message(name: &str) -> String {
    format!("The lookup plugin {} was not found.", tack_yaml::pyrepr::str_repr(name))
}

/// ansible's message for a lookup that raised.
pub fn failed_lookup_message(name: &str, message: &str) -> String {
    format!("The lookup plugin {} failed: {message}", tack_yaml::pyrepr::str_repr(name))
}

/// Registers `lookup`, `query`, `q` and the executor's `with_` entry point.
pub fn register(env: &mut Environment<'static>) {
    env.add_function("lookup", |args: Rest<ValueOrKwargs>| captured(global(args, false)));
    env.add_function("query", |args: Rest<ValueOrKwargs>| captured(global(args, true)));
    env.add_function("q", |args: Rest<ValueOrKwargs>| captured(global(args, true)));
    env.add_function(WITH_FUNCTION, |name: String, terms: JValue, action: Option<String>| {
        // Lazy terms come here as written: a template's value that is not a list is one term.
        let terms: Vec<JValue> = match terms.kind() {
            minijinja::value::ValueKind::Seq => terms.try_iter()?.collect(),
            _ => vec![terms],
        };
        // This render reads only the loop's terms (with the provenance of their render) and
        // two names the executor set.
        let host_named = crate::engine::chosen::read_host_so_far();
        invoke(&name, terms, Vec::new(), true, action.as_deref().or(Some("")), host_named)
    });
}

/// A lookup's failure, kept as a marker in a render run again for a plugin that takes it.
fn captured(result: Result<JValue, Error>) -> Result<JValue, Error> {
    crate::markers::keep(result, Some(crate::markers::PLUGIN_FAILED))
}

const WITH_FUNCTION: &str = "__tack_with_lookup";
const WITH_NAME: &str = "__tack_with_name";
const WITH_TERMS: &str = "__tack_with_terms";
const WITH_ACTION: &str = "__tack_with_action";

fn global(args: Rest<ValueOrKwargs>, query: bool) -> Result<JValue, Error> {
    let (mut positional, mut kwargs) = crate::filters::args::split(args);
    let host_named = crate::engine::chosen::call_read_host(&mut positional, &kwargs);
    if positional.is_empty() {
        return Err(missing_name(query));
    }
    let name = positional.remove(0);
    let name = crate::python::repr::str_of(&name)?;
    let mut wantlist = query;
    if let Some(i) = kwargs.iter().position(|(k, _)| k == "wantlist") {
        let (_, v) = kwargs.remove(i);
        wantlist = query || v.is_true();
    }
    invoke(&name, positional, kwargs, wantlist, None, host_named)
}

fn missing_name(query: bool) -> Error {
    let func = if query { "_query" } else { "_lookup" };
    final_error(
        ErrorKind::InvalidOperation,
        format!(
            "Error rendering template: {func}() missing 1 required positional argument: \
             'plugin_name'"
        ),
    )
}

/// ansible's `_invoke_lookup`, for terms a managed host chose when `host_named`.
fn invoke(
    name: &str,
    terms: Vec<JValue>,
    mut kwargs: Vec<(String, JValue)>,
    wantlist: bool,
    with_action: Option<&str>,
    host_named: bool,
) -> Result<JValue, Error> {
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| find_refused(name) == Some(*n)) {
        return Err(final_error(ErrorKind::InvalidOperation, failed_lookup_message(name, why)));
    }
    if let Some(env) = current()
        && let Some(plugins) = env.templar().engine().plugins().cloned()
        && (python_lookup_name(name).is_some_and(|short| plugins.has_lookup(short))
            || crate::python_plugins::is_collection_name(name))
    {
        return invoke_python(&plugins, &env, name, terms, kwargs, wantlist, host_named);
    }
    // `config` asked about a plugin written in Python (a lookup beside the playbook or in a
    // role, any collection's): ansible's own `config` lookup, in the plugin worker, loads
    // that plugin and resolves its option from its documentation.
    let entry = find(name);
    if entry.is_some_and(|e| e.name == "config")
        && let Some(env) = current()
        && let Some(plugins) = env.templar().engine().plugins().cloned()
        && python_config_target(&*plugins, &kwargs)
    {
        return invoke_python(&plugins, &env, name, terms, kwargs, wantlist, host_named);
    }
    let Some(entry) = entry else {
        // ansible-core's own routing sends some names to collections (`hashi_vault`):
        // ansible's loader, in the plugin worker, follows it.
        if let Some(env) = current()
            && let Some(plugins) = env.templar().engine().plugins().cloned()
        {
            return invoke_python(&plugins, &env, name, terms, kwargs, wantlist, host_named);
        }
        return Err(final_error(ErrorKind::InvalidOperation, unknown_lookup_message(name)));
    };
    if !entry.accepts_undefined
        && let Some(undefined) =
            terms.iter().chain(kwargs.iter().map(|(_, v)| v)).find(|v| v.is_undefined())
    {
        return Ok(undefined.clone());
    }
    let errors = match kwargs.iter().position(|(k, _)| k == "errors") {
        Some(i) => crate::python::repr::str_of(&kwargs.remove(i).1)?,
        None => "strict".to_string(),
    };
    let Some(env) = current() else {
        return Err(Error::new(ErrorKind::InvalidOperation, "a lookup ran outside a render"));
    };
    if let (true, Reach::Refused { what, verb }) = (host_named, entry.reach) {
        return Err(final_error(
            ErrorKind::InvalidOperation,
            format!(
                "the terms of the {} lookup were named by a managed host, and a controller \
                 {what} a host chose is never {verb}",
                tack_yaml::pyrepr::str_repr(entry.name)
            ),
        ));
    }
    let action = with_action.filter(|a| !a.is_empty());
    let as_with = with_action.is_some();
    let call = Call { env: &env, terms, kwargs, as_with, action, host_named, name: entry.name };
    let result = match (entry.run)(&call) {
        Ok(items) => items,
        Err(LookupError::Template(err)) => return Err(err),
        Err(LookupError::Undefined(undefined)) => return Ok(undefined),
        Err(LookupError::Refused(message)) => {
            return Err(final_error(ErrorKind::InvalidOperation, message));
        }
        Err(LookupError::Failed(message)) => return failed(name, &message, &errors, wantlist),
    };
    shape(result, wantlist)
}

/// A lookup that raised, as its `errors=` says: a warning, nothing, or the failure.
fn failed(name: &str, message: &str, errors: &str, wantlist: bool) -> Result<JValue, Error> {
    match errors {
        "warn" => {
            tack_diag::warn(&tack_diag::Diagnostic::new(format!(
                "An error occurred while running the lookup plugin {}: {}",
                tack_yaml::pyrepr::str_repr(name),
                message.trim_end()
            )));
            Ok(if wantlist { new_list(Vec::new()) } else { JValue::from(()) })
        }
        "ignore" => Ok(if wantlist { new_list(Vec::new()) } else { JValue::from(()) }),
        _ => Err(final_error(
            ErrorKind::InvalidOperation,
            failed_lookup_message(name, message.trim_end()),
        )),
    }
}

/// A lookup's items as the call gives them: the list with `wantlist`, else one item alone,
/// strings joined with commas, or the list.
fn shape(result: Vec<JValue>, wantlist: bool) -> Result<JValue, Error> {
    if wantlist || result.is_empty() {
        return Ok(new_list(result));
    }
    if result.len() == 1 {
        return Ok(result.into_iter().next().unwrap_or_default());
    }
    if result.iter().all(|v| v.as_str().is_some()) {
        let texts: Vec<&str> = result.iter().filter_map(JValue::as_str).collect();
        return Ok(JValue::from(texts.join(",")));
    }
    Ok(new_list(result))
}

/// Whether a `config` lookup's `plugin_type`/`plugin_name` name a plugin the Python plugins
/// provide: a lookup on the plugin paths, or a collection's plugin of any type.
fn python_config_target(
    plugins: &dyn crate::python_plugins::PythonPlugins,
    kwargs: &[(String, JValue)],
) -> bool {
    let text = |key: &str| {
        kwargs.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.as_str().map(str::to_string))
    };
    let (Some(kind), Some(name)) = (text("plugin_type"), text("plugin_name")) else {
        return false;
    };
    if crate::python_plugins::is_collection_name(&name) {
        return true;
    }
    kind == "lookup" && python_lookup_name(&name).is_some_and(|short| plugins.has_lookup(short))
}

/// The short name a Python lookup plugin would answer to for `name`: plain names and
/// `ansible.legacy.` ones (a lookup on the plugin paths is never `ansible.builtin.`).
fn python_lookup_name(name: &str) -> Option<&str> {
    use tack_py::ansible::{CoreCollections, short_name, strip_core_collection};
    if strip_core_collection(name, CoreCollections::Builtin).is_some() {
        return None;
    }
    let short = short_name(name, CoreCollections::BuiltinOrLegacy);
    (!short.contains('.')).then_some(short)
}

/// `_invoke_lookup` for a lookup plugin written in Python (see `crate::python_plugins`).
fn invoke_python(
    plugins: &Arc<dyn crate::PythonPlugins>,
    env: &RenderEnv,
    name: &str,
    terms: Vec<JValue>,
    mut kwargs: Vec<(String, JValue)>,
    wantlist: bool,
    host_named: bool,
) -> Result<JValue, Error> {
    if host_named {
        // What a Python lookup reads with its terms is its own code's business: a managed
        // host's value never chooses them (seed 002).
        return Err(final_error(
            ErrorKind::InvalidOperation,
            format!(
                "the terms of the {} lookup were named by a managed host, and a Python lookup \
                 plugin given terms a host chose is never run",
                tack_yaml::pyrepr::str_repr(name)
            ),
        ));
    }
    let errors = match kwargs.iter().position(|(k, _)| k == "errors") {
        Some(i) => crate::python::repr::str_of(&kwargs.remove(i).1)?,
        None => "strict".to_string(),
    };
    use crate::python_plugins::{PluginCall, PluginFailure, PluginKind};
    // Undefined arguments cross as placeholders: whether the plugin sees them is its
    // class's choice (`accept_args_markers`), made in the worker.
    let (converted, kept) = crate::value::keeping_undefined(|| {
        let args = terms.iter().map(crate::value::to_value).collect::<Result<Vec<_>, _>>()?;
        let mut keywords = Vec::with_capacity(kwargs.len());
        for (key, value) in &kwargs {
            keywords.push((key.clone(), crate::value::to_value(value)?));
        }
        Ok::<_, Error>((args, keywords))
    });
    let (args, keywords) = converted?;
    let call = PluginCall { kind: PluginKind::Lookup, name, args, kwargs: keywords };
    match plugins.call(call, env) {
        Ok(reply) => {
            let items = crate::value::plugin_value_restoring(reply, &kept);
            let items = match items.kind() {
                minijinja::value::ValueKind::Seq => items.try_iter()?.collect(),
                _ => vec![items],
            };
            shape(items, wantlist)
        }
        Err(PluginFailure::Final(message)) => {
            Err(final_error(ErrorKind::InvalidOperation, message))
        }
        Err(PluginFailure::Raised(message)) => failed(name, &message, &errors, wantlist),
        Err(PluginFailure::Missing) => {
            Err(final_error(ErrorKind::InvalidOperation, unknown_lookup_message(name)))
        }
        Err(PluginFailure::UsedUndefined(number)) => {
            match usize::try_from(number).ok().and_then(|n| kept.get(n)) {
                Some(undefined) => Ok(undefined.clone()),
                None => Err(final_error(
                    ErrorKind::InvalidOperation,
                    format!(
                        "the Python plugin worker named an undefined argument {number} it was not given"
                    ),
                )),
            }
        }
    }
}

fn find_refused(name: &str) -> Option<&str> {
    let short = tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::Builtin);
    REFUSED.iter().map(|(n, _)| *n).find(|n| *n == short)
}

/// What ansible's `TaskExecutor` does for a task's `with_<name>: terms`: a string is stripped
/// and rendered, a value that is not a list becomes a one-item list, every term is rendered,
/// and the lookup runs with `wantlist=True` (as a `with_` loop: `first_found` then drops
/// undefined terms). Returns the loop's items and the provenance of everything read.
pub fn run_loop(
    templar: &Templar,
    name: &str,
    terms: &Node,
    scope: &Scope,
) -> Result<(Vec<Node>, ProvenanceSet), TemplateError> {
    run_task_loop(templar, name, terms, scope, None)
}

/// [`run_loop`] for a task whose action is `action` (its name as the task wrote it):
/// `with_first_found` searches `templates/` when it names `template`, `vars/` when it names
/// `var`, else `files/`, as ansible's does.
pub fn run_task_loop(
    templar: &Templar,
    name: &str,
    terms: &Node,
    scope: &Scope,
    action: Option<&str>,
) -> Result<(Vec<Node>, ProvenanceSet), TemplateError> {
    let node = match &terms.value {
        Value::Str(s) => {
            Node::new(Value::Str(tack_py::text::strip(s).to_string()), terms.origin.clone())
        }
        _ => terms.clone(),
    };
    // A lookup that reads its terms lazily is handed them unrendered, so each is rendered
    // when it reads it and an undefined one is a value it sees (as ansible's executor hands
    // `with_` terms through its lazy containers).
    let lazy = find(name).is_some_and(|e| e.lazy_terms);
    let rendered = if lazy {
        crate::Rendered { value: node, provenance: ProvenanceSet::default() }
    } else {
        templar.render(&node, scope)?
    };
    let list = match rendered.value.value {
        Value::Seq(_) => rendered.value,
        other => Node::new(
            Value::Seq(vec![Node::new(other, rendered.value.origin)]),
            terms.origin.clone(),
        ),
    };
    let mut layer = Layer::new();
    layer.insert(WITH_NAME, Node::bare(Value::Unsafe(name.to_string())), Provenance::Trusted);
    layer.insert(WITH_TERMS, list, rendered.provenance.derived());
    let action = Node::bare(Value::Unsafe(action.unwrap_or_default().to_string()));
    layer.insert(WITH_ACTION, action, Provenance::Trusted);
    let inner = scope.with_layer(Arc::new(layer));
    let source = format!("{{{{ {WITH_FUNCTION}({WITH_NAME}, {WITH_TERMS}, {WITH_ACTION}) }}}}");
    let out = if lazy {
        crate::engine::active::accepting_lazy(|| templar.render_str(&source, &inner))?
    } else {
        templar.render_str(&source, &inner)?
    };
    let mut provenance = rendered.provenance;
    provenance.extend(&out.provenance);
    match out.value.value {
        Value::Seq(items) => Ok((items, provenance)),
        other => Err(TemplateError::new(
            TemplateErrorKind::Render,
            format!(
                "The lookup plugin {} returned {} instead of a list.",
                tack_yaml::pyrepr::str_repr(name),
                Node::bare(other).python_type()
            ),
        )
        .at(terms.origin.clone())),
    }
}
