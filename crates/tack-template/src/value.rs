//! Helpers for filters, tests and lookups working on template values (`minijinja::Value`):
//! ansible's undefined rules, conversions to and from loaded data, and the running render's
//! context (templar, variables, loader and vault secrets).
//!
//! The contract for plugin authors:
//! - A value is undefined when [`is_undefined`] says so. A filter that receives one and is not
//!   `default`/`mandatory`-like returns [`undefined_error`] of it, so the message names the
//!   variable as ansible's does (`'x' is undefined`).
//! - Data from the user's variables reaches a filter as tack's own objects (lists and dicts
//!   that render the templates inside them when read); read them through minijinja's generic
//!   API (`try_iter`, `get_item`, `len`), or take a plain copy with [`to_value`].
//! - Return containers with [`new_list`]/[`new_dict`] (or any minijinja value); templates never
//!   see the difference, but only these support Python's in-place methods (`append`, ...).
//! - [`current`] gives the running render's [`RenderEnv`]: a lookup renders a file with
//!   `env.templar().render_str(..)`, reads a variable with `env.scope().get(..)` (the `vars`
//!   lookup; then [`RenderEnv::read`] records its provenance), finds files with
//!   `env.loader()`, decrypts with `env.loader().secrets()`.
//!
//! This module never renders on its own and never prints.

use indexmap::IndexMap;
use minijinja::value::{Value as JValue, ValueKind};
use minijinja::{Error, ErrorKind};
use tack_yaml::{Mapping, Node, Value};

use crate::engine::active;
use crate::vars::data;
use crate::vars::objects::{Dict, List, is_omit};
use crate::vars::{Binding, Scope};
use crate::{Templar, TemplateError};

/// Whether `value` is undefined in ansible's sense (a missing variable, attribute or key).
pub fn is_undefined(value: &JValue) -> bool {
    value.is_undefined()
}

/// The error to return for an undefined value used where a value is needed. The engine turns
/// it into ansible's message (`'x' is undefined`, `object of type 'dict' has no attribute
/// 'y'`) from the expression that produced the value.
pub fn undefined_error(value: &JValue) -> Error {
    // `get_attr` on an undefined fails with minijinja's undefined error carrying where the
    // value came from; that origin is what the engine explains in ansible's words.
    match value.get_attr("__tack_undefined__") {
        Err(e) => e,
        Ok(_) => Error::new(ErrorKind::UndefinedError, "undefined value"),
    }
}

/// Whether `value` is ansible's `omit` placeholder.
pub fn is_omit_value(value: &JValue) -> bool {
    is_omit(value)
}

/// A template value as loaded data, rendering every template inside it (ansible's
/// finalization). `omit` items and values drop out of containers. Fails on an undefined value,
/// a template that fails, or a value with no data form (a function, say).
pub fn to_value(value: &JValue) -> Result<Value, Error> {
    // A container that holds itself (a namespace assigned into itself) would recurse for
    // ever: past Python's depth (ansible fails near it too), this is the template's error.
    thread_local! {
        static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    let depth = DEPTH.with(|d| {
        d.set(d.get() + 1);
        d.get()
    });
    let result = if depth > MAX_VALUE_DEPTH {
        // Worded as the engine's own recursion limit, which ansible's error names.
        Err(Error::new(ErrorKind::InvalidOperation, "recursion limit exceeded"))
    } else {
        to_value_here(value)
    };
    DEPTH.with(|d| d.set(d.get() - 1));
    result
}

/// How deep containers may nest in a value a template makes (loaded YAML stops at 500; a
/// host's thread has the stack for this many).
pub(crate) const MAX_VALUE_DEPTH: usize = 400;

fn to_value_here(value: &JValue) -> Result<Value, Error> {
    if let Some(list) = value.downcast_object_ref::<List>() {
        return list_value(list.try_items()?).map_err(|e| lazy_failure(e, list.marker()));
    }
    if let Some(dict) = value.downcast_object_ref::<Dict>() {
        return dict_value(dict.try_entries()?).map_err(|e| lazy_failure(e, dict.marker()));
    }
    if let Some(date) = value.downcast_object_ref::<crate::vars::objects::PyDateTime>() {
        return Ok(Value::Timestamp(date.0.clone()));
    }
    if let Some(vaulted) = value.downcast_object_ref::<crate::vars::objects::EncryptedText>() {
        return Ok(Value::Vault(vaulted.0.clone()));
    }
    if let Some(bytes) = value.downcast_object_ref::<crate::pybytes::PyBytes>() {
        return Ok(Value::Bytes(bytes.0.clone()));
    }
    if value.downcast_object_ref::<crate::vault_wrapped::VaultWrapped>().is_some() {
        return Err(Error::new(ErrorKind::InvalidOperation, crate::vault_wrapped::REFUSAL));
    }
    Ok(match value.kind() {
        ValueKind::Undefined => return kept_undefined(value),
        ValueKind::None => Value::Null,
        ValueKind::Bool => Value::Bool(value.is_true()),
        ValueKind::Number => number(value),
        ValueKind::String if MARKING_TRUST.get() => marked_string(value),
        ValueKind::String => Value::Str(value.as_str().unwrap_or_default().to_string()),
        ValueKind::Bytes => {
            Value::Str(String::from_utf8_lossy(value.as_bytes().unwrap_or_default()).into_owned())
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Result<Vec<JValue>, Error> = value.try_iter()?.checked().collect();
            return list_value(items?);
        }
        ValueKind::Map => {
            let mut entries = Vec::new();
            for key in value.try_iter()?.checked() {
                let key = key?;
                let v = value.get_item(&key)?;
                entries.push((key, v));
            }
            return dict_value(entries);
        }
        ValueKind::Invalid => return Err(invalid_error(value)),
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "Type '{}' is unsupported for variable storage.",
                    crate::python::repr::type_name(value)
                ),
            ));
        }
    })
}

thread_local! {
    /// Whether [`marking_trust`] runs.
    static MARKING_TRUST: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether strings carry ansible's data tags (a template naming an `ansible._protomatter`
/// plugin was seen): only then can [`marking_trust`] tell a trusted string from another.
pub fn tags_tracked() -> bool {
    crate::vars::str_tags::wanted()
}

/// [`tags_tracked`], after tracking them from now on when a string in `nodes` names an
/// `ansible._protomatter` plugin (a template compiles it only as it renders, and what that
/// render reads first must already be tagged).
pub fn track_tags_for<'n>(nodes: impl IntoIterator<Item = &'n Node>) -> bool {
    fn names_plugin(node: &Node) -> bool {
        match &node.value {
            Value::Str(text) => text.contains("ansible._protomatter."),
            Value::Seq(items) => items.iter().any(names_plugin),
            Value::Map(map) => map.iter().any(|(k, v)| names_plugin(k) || names_plugin(v)),
            _ => false,
        }
    }
    if !tags_tracked() && nodes.into_iter().any(names_plugin) {
        crate::vars::str_tags::want();
    }
    tags_tracked()
}

/// Runs `f`, in which each string [`to_value`] makes says its own trust as its tags do: a
/// string tagged `TrustedAsTemplate` is `Value::Str`, any other `Value::Unsafe`, and one
/// inside a container keeps its `Origin` as the node's. For a value kept whole as ansible
/// keeps its tagged objects (`set_fact`'s, see `Binding::with_trusted_at`); meaningful only
/// while [`tags_tracked`].
pub fn marking_trust<R>(f: impl FnOnce() -> R) -> R {
    let outer = MARKING_TRUST.replace(true);
    let result = f();
    MARKING_TRUST.set(outer);
    result
}

/// Whether [`marking_trust`] runs: each string then says its own trust, which nothing after
/// may change.
pub(crate) fn marking() -> bool {
    MARKING_TRUST.get()
}

/// A string as [`marking_trust`] makes it.
fn marked_string(value: &JValue) -> Value {
    let text = value.as_str().unwrap_or_default().to_string();
    match crate::vars::str_tags::tags_of(value) {
        Some(tags) if tags.trusted => Value::Str(text),
        _ => Value::Unsafe(text),
    }
}

/// An item of a container [`to_value`] makes: under [`marking_trust`], a tagged string's
/// node is placed at its `Origin`.
fn item_node(item: &JValue) -> Result<Node, Error> {
    let origin = match MARKING_TRUST.get() {
        true => crate::vars::str_tags::tags_of(item).and_then(|tags| tags.origin),
        false => None,
    };
    Ok(Node::new(to_value(item)?, origin))
}

thread_local! {
    /// The undefined values [`to_value`] met while [`keeping_undefined`] runs.
    static KEPT: std::cell::RefCell<Option<Vec<JValue>>> = const { std::cell::RefCell::new(None) };
}

/// An undefined value met by [`to_value`]: its error, or while [`keeping_undefined`] runs, a
/// placeholder that stands for it (`python_plugins::undefined_placeholder_key`).
fn kept_undefined(value: &JValue) -> Result<Value, Error> {
    let number = KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let kept = kept.as_mut()?;
        kept.push(value.clone());
        i64::try_from(kept.len() - 1).ok()
    });
    let Some(number) = number else { return Err(undefined_error(value)) };
    let mut map = Mapping::new();
    let key = crate::python_plugins::undefined_placeholder_key().to_string();
    map.insert(Node::bare(Value::Str(key)), Node::bare(Value::Int(number)));
    Ok(Value::Map(map))
}

/// Runs `f`, in which [`to_value`] turns each undefined value into a numbered placeholder
/// instead of failing (a lookup's arguments on their way to a Python plugin, which decides
/// about them as ansible's markers); returns the values the numbers stand for.
pub(crate) fn keeping_undefined<R>(f: impl FnOnce() -> R) -> (R, Vec<JValue>) {
    let outer = KEPT.with(|kept| kept.borrow_mut().replace(Vec::new()));
    let result = f();
    let kept = KEPT.with(|kept| std::mem::replace(&mut *kept.borrow_mut(), outer));
    (result, kept.unwrap_or_default())
}

/// [`from_node`], with each placeholder [`keeping_undefined`] made back as the undefined
/// value it stands for.
pub(crate) fn from_node_restoring(value: &Value, kept: &[JValue]) -> JValue {
    if let Some(number) = crate::python_plugins::undefined_placeholder(value)
        && let Some(undefined) = usize::try_from(number).ok().and_then(|n| kept.get(n))
    {
        return undefined.clone();
    }
    match value {
        Value::Seq(items) => {
            new_list(items.iter().map(|n| from_node_restoring(&n.value, kept)).collect())
        }
        Value::Map(m) => new_dict(
            m.iter()
                .map(|(k, v)| (data::scalar(&k.value), from_node_restoring(&v.value, kept)))
                .collect(),
        ),
        other => data::scalar(other),
    }
}

/// A failure inside a marked container (`List::marked`): an undefined value read there fails
/// with the words the container was marked with.
fn lazy_failure(e: Error, marker: Option<&crate::engine::active::LazyFailure>) -> Error {
    match marker {
        Some(marker) if e.kind() == ErrorKind::UndefinedError => marker.error(),
        _ => e,
    }
}

/// `value` (a list or dict whose text failed on an undefined value inside) kept as one of
/// tack's containers marked with `failure`: usable until the undefined value is read.
pub(crate) fn marked(
    value: &JValue,
    failure: std::sync::Arc<crate::engine::active::LazyFailure>,
) -> Result<JValue, Error> {
    if value.kind() == ValueKind::Map {
        let mut entries = IndexMap::new();
        for key in value.try_iter()? {
            let item = value.get_item(&key)?;
            entries.insert(key, item);
        }
        return Ok(JValue::from_object(Dict::marked(entries, failure)));
    }
    Ok(JValue::from_object(List::marked(value.try_iter()?.collect(), failure)))
}

/// As [`to_value`], as a node without origin.
pub fn to_node(value: &JValue) -> Result<Node, Error> {
    to_value(value).map(Node::bare)
}

fn list_value(items: Vec<JValue>) -> Result<Value, Error> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if is_omit(&item) {
            continue;
        }
        out.push(item_node(&item)?);
    }
    Ok(Value::Seq(out))
}

fn dict_value(entries: Vec<(JValue, JValue)>) -> Result<Value, Error> {
    let mut out = Mapping::new();
    for (k, v) in entries {
        if is_omit(&v) {
            continue;
        }
        out.insert(item_node(&k)?, item_node(&v)?);
    }
    Ok(Value::Map(out))
}

fn number(value: &JValue) -> Value {
    // minijinja converts a whole float to an integer on request; Python keeps `2.0` a float.
    if !value.is_integer() {
        return Value::Float(f64::try_from(value.clone()).unwrap_or(f64::NAN));
    }
    match i64::try_from(value.clone()) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(value.to_string()),
    }
}

pub(crate) use crate::markers::invalid_error;

/// Loaded data as a template value (a plain copy: strings in it are not templates).
pub fn from_node(value: &Value) -> JValue {
    match value {
        Value::Seq(items) => new_list(items.iter().map(|n| from_node(&n.value)).collect()),
        Value::Map(m) => {
            new_dict(m.iter().map(|(k, v)| (data::scalar(&k.value), from_node(&v.value))).collect())
        }
        other => data::scalar(other),
    }
}

/// A Python list that templates may change in place.
pub fn new_list(items: Vec<JValue>) -> JValue {
    JValue::from_object(List::new(items))
}

/// A Python dict that templates may change in place.
pub fn new_dict(entries: IndexMap<JValue, JValue>) -> JValue {
    JValue::from_object(Dict::new(entries))
}

/// An integer too large for `i64`: exact up to 128 bits (as far as minijinja's arithmetic
/// goes); beyond that its digits as a string, so nothing is silently rounded.
pub fn big_int(digits: &str) -> JValue {
    if let Ok(i) = digits.parse::<i128>() {
        return JValue::from(i);
    }
    if let Ok(u) = digits.parse::<u128>() {
        return JValue::from(u);
    }
    JValue::from(digits)
}

/// The value as ansible's `boolean()` tells values apart ([`tack_py::boolean`]).
pub fn boolean_input(value: &JValue) -> tack_py::boolean::Input<'_> {
    use tack_py::boolean::Input;
    match value.kind() {
        ValueKind::Bool => Input::Bool(value.is_true()),
        ValueKind::Number if value.is_integer() => {
            i64::try_from(value.clone()).map_or(Input::Other, Input::Int)
        }
        ValueKind::Number => f64::try_from(value.clone()).map_or(Input::Other, Input::Float),
        ValueKind::String => value.as_str().map_or(Input::Other, Input::Text),
        _ => Input::Other,
    }
}

/// The Python type name ansible reports for a value (`str`, `dict`, `NoneType`, ...).
pub fn python_type(value: &JValue) -> &'static str {
    crate::python::repr::type_name(value)
}

/// The running render as a plugin sees it.
pub struct RenderEnv {
    templar: Templar,
    scope: Scope,
}

impl RenderEnv {
    pub fn templar(&self) -> &Templar {
        &self.templar
    }

    /// The variables of the template being rendered.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    pub fn loader(&self) -> &tack_loader::DataLoader {
        self.templar.loader()
    }

    /// A variable's value, as `{{ name }}` would read it (templates inside rendered lazily),
    /// recording its provenance with the running render. `None` when it is not defined.
    pub fn read(&self, name: &str) -> Option<JValue> {
        let binding: &Binding = self.scope.get(name)?;
        Some(self.ctx().read_binding(binding))
    }

    fn ctx(&self) -> crate::vars::objects::Ctx {
        crate::vars::objects::Ctx { scope: self.scope.clone(), engine: self.templar.engine() }
    }

    /// Renders `source` in this render's scope, as a nested template (what the `template`
    /// lookup does); what it reads is recorded with the running render.
    pub fn render_str(&self, source: &str) -> Result<JValue, Error> {
        self.templar.engine().render_nested(source, &self.scope)
    }
}

/// The render running on this thread, for filters, tests and lookups. `None` outside one.
pub fn current() -> Option<RenderEnv> {
    let ctx = active::current_ctx()?;
    Some(RenderEnv { templar: Templar::from_engine(ctx.engine), scope: ctx.scope })
}

/// A template error as a minijinja error, for plugins that call the templar themselves.
pub fn template_error_to_jinja(err: &TemplateError) -> Error {
    Error::new(ErrorKind::InvalidOperation, err.message.clone())
}

/// A Python plugin's reply as a template value (a plain copy: strings in it are not
/// templates), its deprecations shown where the template was written.
pub(crate) fn plugin_value(reply: crate::python_plugins::PluginReply) -> JValue {
    plugin_value_restoring(reply, &[])
}

/// [`plugin_value`] of a call whose arguments were converted by [`keeping_undefined`]: a
/// placeholder handed back is the undefined value again.
pub(crate) fn plugin_value_restoring(
    reply: crate::python_plugins::PluginReply,
    kept: &[JValue],
) -> JValue {
    for raised in &reply.deprecations {
        match raised.context.as_deref().and_then(context_origin) {
            Some((origin, value)) => {
                let mut diag = tack_diag::Diagnostic::at(raised.message.clone(), Some(origin));
                diag.value_repr = value.map(String::into_boxed_str);
                diag.help = raised.help.clone();
                tack_diag::deprecate(&diag, &raised.removed_in);
            }
            None => crate::Deprecation {
                message: raised.message.clone(),
                removed_in: raised.removed_in.clone(),
                help: raised.help.clone(),
            }
            .emit(),
        }
    }
    from_node_restoring(&reply.value, kept)
}

/// The origin (and, with none, the value shown in its place) of ansible's formatted source
/// context: `Origin: <unknown>` then the value, or `Origin: PATH:LINE:COL` then an excerpt
/// (which tack makes again from the file).
fn context_origin(context: &str) -> Option<(tack_diag::Origin, Option<String>)> {
    let mut parts = context.splitn(2, "\n\n");
    let place = parts.next()?.strip_prefix("Origin: ")?;
    if place == "<unknown>" {
        let value = parts.next().map(str::to_string);
        return Some((tack_diag::Origin::described("<unknown>"), value));
    }
    let mut fields = place.rsplitn(3, ':');
    let column = fields.next()?.parse().ok()?;
    let line = fields.next()?.parse().ok()?;
    let path = fields.next()?;
    Some((
        tack_diag::Origin::new(std::sync::Arc::from(std::path::Path::new(path)), line, column),
        None,
    ))
}

/// The variables of no render (a plugin called outside one).
pub(crate) struct NoVariables;

impl crate::python_plugins::VariableSource for NoVariables {
    fn names(&self) -> Vec<String> {
        Vec::new()
    }

    fn get(&self, _: &str) -> Option<Result<Value, String>> {
        None
    }
}

impl crate::python_plugins::VariableSource for RenderEnv {
    fn names(&self) -> Vec<String> {
        self.scope.names().into_iter().map(str::to_string).collect()
    }

    /// ansible hands a lookup the task's variables as they were loaded: templates inside
    /// are not rendered (`variables['x']` is the text `{{ y }}`); vaulted values are
    /// decrypted, as ansible's encrypted strings are when read.
    fn get(&self, name: &str) -> Option<Result<Value, String>> {
        let binding = self.scope.get(name)?;
        // Reading records the binding's provenance (and any secret) with the running render;
        // its deprecation is the plugin's to raise, where it uses the value.
        active::record(binding.provenance());
        if binding.holds_secret() {
            active::seal();
        }
        Some(self.decrypted(&binding.node().value))
    }

    fn trusted(&self, name: &str) -> bool {
        self.scope.get(name).is_some_and(|b| *b.provenance() == crate::Provenance::Trusted)
    }

    fn deprecation(&self, name: &str) -> Option<(String, String, Option<String>)> {
        let d = self.scope.get(name)?.deprecation()?;
        Some((d.message.clone(), d.removed_in.clone(), d.help.clone()))
    }
}

impl RenderEnv {
    fn decrypted(&self, value: &Value) -> Result<Value, String> {
        decrypted_as_loaded(&self.templar, &self.scope, value)
    }
}

/// A variable's value as ansible hands it to a Python plugin: as loaded (templates inside
/// not rendered), vaulted values decrypted as ansible's encrypted strings are when read.
pub fn decrypted_as_loaded(
    templar: &crate::Templar,
    scope: &crate::Scope,
    value: &Value,
) -> Result<Value, String> {
    let again = |v: &Value| decrypted_as_loaded(templar, scope, v);
    Ok(match value {
        Value::Vault(_) => {
            let rendered = templar.render(&Node::bare(value.clone()), scope);
            rendered.map_err(|e| e.message)?.value.value
        }
        Value::Seq(items) => Value::Seq(
            items
                .iter()
                .map(|n| Ok(Node::bare(again(&n.value)?)))
                .collect::<Result<_, String>>()?,
        ),
        Value::Map(map) => {
            let mut out = Mapping::new();
            for (k, v) in map.iter() {
                out.insert(k.clone(), Node::bare(again(&v.value)?));
            }
            Value::Map(out)
        }
        other => other.clone(),
    })
}
