//! The objects templates see variables through: [`List`] and [`Dict`] (a binding's containers
//! seen from one scope, or containers a template built), the render's root context
//! ([`Root`]), `vars` ([`VarsView`]) and `hostvars` ([`HostvarsView`]), and `omit`
//! ([`Omit`]).
//!
//! A container view renders the templates inside it when they are read, in the scope it was
//! read from, as ansible's lazy containers do; it copies nothing until a method changes it
//! (`append`, `update`, ...), and then only itself. Reading a binding records its provenance
//! with the running render. These objects never decide what a template means; rendering is the
//! engine's.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use indexmap::IndexMap;
use minijinja::value::{Enumerator, Object, ObjectRepr, Value as JValue};
use minijinja::{Error, ErrorKind};

use crate::engine::{Engine, active};
use crate::vars::data::{Data, DataMap, DataSeq};
use crate::vars::{Binding, Scope};
use tack_yaml::{Node, Value};

/// Where a view's templates render: the scope it was read from and the engine.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub scope: Scope,
    pub engine: Arc<Engine>,
}

impl fmt::Debug for Ctx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ctx")
    }
}

impl Ctx {
    /// A datum as a template value: templates rendered, vault text decrypted, containers
    /// wrapped. A template whose variables are undefined reads as undefined (so `is defined`
    /// and `default` work on it); any other failure is an invalid value that fails when used.
    pub(crate) fn resolve(&self, data: &Data) -> JValue {
        match self.try_resolve(data) {
            Ok(v) => v,
            Err(e) if e.kind() == ErrorKind::UndefinedError => JValue::UNDEFINED,
            // In a render run again for a plugin that takes failures, a marker (`markers`).
            Err(e) if crate::markers::on() => {
                let class =
                    crate::markers::class_of(&crate::engine::errors_to_template(&e).message);
                crate::markers::captured(e, class)
            }
            Err(e) => JValue::from(e),
        }
    }

    /// As [`Ctx::resolve`], but a failure is returned (used when a whole value is finalized
    /// and when an undefined needs explaining).
    pub(crate) fn try_resolve(&self, data: &Data) -> Result<JValue, Error> {
        match data {
            Data::Plain(v) => Ok(v.clone()),
            Data::Written(v, origin) => {
                if super::str_tags::wanted() {
                    return Ok(super::str_tags::read(v, true, origin.as_ref()));
                }
                Ok(v.clone())
            }
            Data::Unsafe(v, origin) => {
                if let Some(text) = v.as_str() {
                    crate::untrusted_template_skipped(text, origin.as_ref());
                }
                if let (true, Some(origin)) = (super::str_tags::wanted(), origin) {
                    return Ok(super::str_tags::read(v, false, Some(origin)));
                }
                Ok(v.clone())
            }
            Data::Template(source, origin) => {
                let id = Arc::as_ptr(source) as *const u8 as usize;
                let render = || match origin {
                    Some(at) => active::at_origin(Some(at.clone()), || {
                        self.engine.render_nested(source, &self.scope)
                    }),
                    None => self.engine.render_nested(source, &self.scope),
                };
                let result = match active::resolving(id, render) {
                    Ok(result) => result,
                    Err(message) => {
                        Err(crate::engine::final_error(ErrorKind::InvalidOperation, message.into()))
                    }
                };
                if let (Err(e), Some(at)) = (&result, origin) {
                    let message = crate::engine::errors_to_template(e).message;
                    // An `undef()` has no place of its own: ansible points at the template
                    // rendered.
                    if active::undef_message().as_ref() != Some(&message) {
                        active::note_nested_failure(active::NestedFailure {
                            origin: at.clone(),
                            source: source.to_string(),
                            message,
                        });
                    }
                }
                // A string the template made is tagged with where the template was written.
                if super::str_tags::wanted() {
                    return super::str_tags::with_template_origin(result, origin.as_ref());
                }
                result
            }
            Data::Vault(text, origin) => match self.engine.decrypt_read(text, origin.as_ref()) {
                Err(_) if crate::markers::on() => Ok(crate::markers::vault(text)),
                Err(e) => {
                    // ansible's vault error is raised at the value, and shown there under the
                    // template that read it.
                    if let Some(at) = origin {
                        let message = crate::engine::errors_to_template(&e).message;
                        let own =
                            message.strip_prefix(crate::engine::RENDER_FAILED).unwrap_or(&message);
                        active::note_nested_failure(active::NestedFailure {
                            origin: at.clone(),
                            source: String::new(),
                            message: own.to_string(),
                        });
                    }
                    Err(e)
                }
                read => read,
            },
            Data::Seq(seq) => Ok(JValue::from_object(List::over(seq.clone(), self.clone()))),
            Data::Map(map) => Ok(JValue::from_object(Dict::over(map.clone(), self.clone()))),
            Data::Deprecated(..) => self.try_resolve(read_through_tags(data)),
        }
    }

    /// A binding read by name: its provenance is recorded, then its value resolved.
    pub(crate) fn read_binding(&self, binding: &Binding) -> JValue {
        active::record(binding.provenance());
        if binding.holds_secret() {
            active::seal();
        }
        if let Some(deprecation) = binding.deprecation() {
            deprecation.emit();
        }
        self.resolve(binding.data())
    }
}

/// The value inside any `Deprecated` tags of `data`, each tag's deprecation raised as the
/// value is read (ansible's `DeprecatedAccessAuditContext`: once per top-level template),
/// pointing at the template being rendered.
fn read_through_tags(mut data: &Data) -> &Data {
    while let Data::Deprecated(inner, deprecated) = data {
        let text = deprecated.text();
        if active::first_deprecation(&text) {
            tack_diag::deprecate_with(deprecated, active::current_origin());
        }
        data = inner;
    }
    data
}

/// Where a list or dict read from a variable was written (ansible's `Origin` on a loaded
/// container); `None` for any other value.
pub(crate) fn written_origin_of(value: &JValue) -> Option<tack_diag::Origin> {
    if let Some(list) = value.downcast_object_ref::<List>() {
        return list.written_origin().cloned();
    }
    value.downcast_object_ref::<Dict>().and_then(|dict| dict.written_origin().cloned())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a template held the lock leaves plain data behind, still usable.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A Python list: a binding's sequence seen from a scope, or one a template built.
pub(crate) struct List {
    base: Option<(Arc<DataSeq>, Ctx)>,
    /// Once changed (or when built by a template), the items themselves.
    items: Mutex<Option<Vec<JValue>>>,
    /// Why an undefined item inside fails where it is used (`active::LazyFailure`).
    marker: Option<Arc<active::LazyFailure>>,
}

impl List {
    pub(crate) fn over(data: Arc<DataSeq>, ctx: Ctx) -> List {
        List { base: Some((data, ctx)), items: Mutex::new(None), marker: None }
    }

    pub(crate) fn new(items: Vec<JValue>) -> List {
        List { base: None, items: Mutex::new(Some(items)), marker: None }
    }

    /// For each item, the places of the strings inside it that are the user's (see
    /// [`Data::trusted_leaves`]); `None` once the list was changed (its items are values then).
    pub(crate) fn trusted_leaves(&self) -> Option<Vec<Vec<Vec<tack_yaml::tagged::PathStep>>>> {
        if lock(&self.items).is_some() {
            return None;
        }
        let (data, _) = self.base.as_ref()?;
        Some(
            data.items
                .iter()
                .map(|item| {
                    let mut found = Vec::new();
                    item.trusted_leaves(&mut Vec::new(), &mut found);
                    found
                })
                .collect(),
        )
    }

    /// A list a template made that holds an undefined value somewhere inside: usable until
    /// that value is read, which then fails as `marker` says.
    pub(crate) fn marked(items: Vec<JValue>, marker: Arc<active::LazyFailure>) -> List {
        List { base: None, items: Mutex::new(Some(items)), marker: Some(marker) }
    }

    pub(crate) fn marker(&self) -> Option<&active::LazyFailure> {
        self.marker.as_deref()
    }

    /// Where the list was written, when it is one read from a variable (ansible's `Origin`
    /// on a loaded list).
    pub(crate) fn written_origin(&self) -> Option<&tack_diag::Origin> {
        self.base.as_ref().and_then(|(data, _)| data.origin.as_ref())
    }

    pub(crate) fn len(&self) -> usize {
        if let Some(items) = &*lock(&self.items) {
            return items.len();
        }
        self.base.as_ref().map_or(0, |(d, _)| d.items.len())
    }

    pub(crate) fn get(&self, idx: usize) -> Option<JValue> {
        if let Some(items) = &*lock(&self.items) {
            return items.get(idx).cloned();
        }
        let (data, ctx) = self.base.as_ref()?;
        data.items.get(idx).map(|d| ctx.resolve(d))
    }

    /// The item at `idx` with its failure, if rendering it fails.
    pub(crate) fn try_get(&self, idx: usize) -> Option<Result<JValue, Error>> {
        if let Some(items) = &*lock(&self.items) {
            return items.get(idx).cloned().map(Ok);
        }
        let (data, ctx) = self.base.as_ref()?;
        data.items.get(idx).map(|d| ctx.try_resolve(d))
    }

    /// A second view of the same binding, independent of this one, while this one is
    /// unchanged (nothing is rendered to make it); `None` once it changed or when a template
    /// built it.
    pub(crate) fn unchanged_copy(&self) -> Option<List> {
        if lock(&self.items).is_some() {
            return None;
        }
        let (data, ctx) = self.base.as_ref()?;
        Some(List::over(data.clone(), ctx.clone()))
    }

    /// The items a template put here (built or changed), a binding's left unrendered.
    pub(crate) fn own_items(&self) -> Option<Vec<JValue>> {
        lock(&self.items).clone()
    }

    /// Every item, failing on the first that cannot be rendered.
    pub(crate) fn try_items(&self) -> Result<Vec<JValue>, Error> {
        (0..self.len()).filter_map(|i| self.try_get(i)).collect()
    }

    /// Runs `f` on the items, copying them out of the binding first.
    pub(crate) fn mutate<R>(&self, f: impl FnOnce(&mut Vec<JValue>) -> R) -> R {
        let mut guard = lock(&self.items);
        if guard.is_none() {
            let items = match &self.base {
                Some((data, ctx)) => data.items.iter().map(|d| ctx.resolve(d)).collect(),
                None => Vec::new(),
            };
            *guard = Some(items);
        }
        f(guard.get_or_insert_with(Vec::new))
    }

    pub(crate) fn origin(&self) -> Option<tack_diag::Origin> {
        self.base.as_ref().and_then(|(d, _)| d.origin.clone())
    }

    /// The items as written, templates not rendered (ansible's `resolve_to_container`
    /// stops at the container): a trusted template string stays a string with its origin;
    /// a string that is not trusted stays `!unsafe`; nested containers and vault text are
    /// resolved. Items of a list a template built are not trusted.
    pub(crate) fn items_as_written(&self) -> Result<Vec<Node>, Error> {
        let unsafe_node = |v: &JValue, origin: Option<tack_diag::Origin>| -> Result<Node, Error> {
            Ok(match crate::value::to_value(v)? {
                Value::Str(s) => Node::new(Value::Unsafe(s), origin),
                other => Node::new(other, origin),
            })
        };
        if let Some(items) = &*lock(&self.items) {
            return items.iter().map(|v| unsafe_node(v, None)).collect();
        }
        let Some((data, ctx)) = self.base.as_ref() else { return Ok(Vec::new()) };
        data.items
            .iter()
            .map(|d| {
                // A tagged item warns once, here; what is under the tag is read as written.
                let d = read_through_tags(d);
                match d {
                    Data::Template(source, origin) => {
                        Ok(Node::new(Value::Str(source.to_string()), origin.clone()))
                    }
                    Data::Unsafe(v, origin) => unsafe_node(v, origin.clone()),
                    // An expression the user wrote keeps its place, which its errors show.
                    Data::Written(v, origin) => {
                        Ok(Node::new(crate::value::to_value(v)?, origin.clone()))
                    }
                    _ => Ok(Node::bare(crate::value::to_value(&ctx.try_resolve(d)?)?)),
                }
            })
            .collect()
    }
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries((0..self.len()).filter_map(|i| self.get(i))).finish()
    }
}

impl Object for List {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        // An item whose template is undefined is missing, so the engine can say which.
        let found = key.as_usize().and_then(|i| self.get(i)).filter(|v| !v.is_undefined());
        if found.is_none() {
            active::missed("list", key);
        }
        found
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.len())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[JValue],
    ) -> Result<JValue, Error> {
        crate::python::methods::list_method(state, self, method, args)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::python::repr::repr_lossy(&JValue::from_dyn_object(self.clone())))
    }
}

/// A Python dict: a binding's mapping seen from a scope, or one a template built.
pub(crate) struct Dict {
    base: Option<(Arc<DataMap>, Ctx)>,
    entries: Mutex<Option<IndexMap<JValue, JValue>>>,
    /// As [`List`]'s.
    marker: Option<Arc<active::LazyFailure>>,
}

impl Dict {
    pub(crate) fn over(data: Arc<DataMap>, ctx: Ctx) -> Dict {
        Dict { base: Some((data, ctx)), entries: Mutex::new(None), marker: None }
    }

    /// As [`List::written_origin`].
    pub(crate) fn written_origin(&self) -> Option<&tack_diag::Origin> {
        self.base.as_ref().and_then(|(data, _)| data.origin.as_ref())
    }

    pub(crate) fn new(entries: IndexMap<JValue, JValue>) -> Dict {
        Dict { base: None, entries: Mutex::new(Some(entries)), marker: None }
    }

    /// As [`List::marked`].
    pub(crate) fn marked(
        entries: IndexMap<JValue, JValue>,
        marker: Arc<active::LazyFailure>,
    ) -> Dict {
        Dict { base: None, entries: Mutex::new(Some(entries)), marker: Some(marker) }
    }

    pub(crate) fn marker(&self) -> Option<&active::LazyFailure> {
        self.marker.as_deref()
    }

    pub(crate) fn len(&self) -> usize {
        if let Some(entries) = &*lock(&self.entries) {
            return entries.len();
        }
        self.base.as_ref().map_or(0, |(d, _)| d.entries.len())
    }

    pub(crate) fn keys(&self) -> Vec<JValue> {
        if let Some(entries) = &*lock(&self.entries) {
            return entries.keys().cloned().collect();
        }
        self.base.as_ref().map_or_else(Vec::new, |(d, _)| d.entries.keys().cloned().collect())
    }

    pub(crate) fn get(&self, key: &JValue) -> Option<JValue> {
        if let Some(entries) = &*lock(&self.entries) {
            return entries.get(key).cloned();
        }
        let (data, ctx) = self.base.as_ref()?;
        data.entries.get(key).map(|d| ctx.resolve(d))
    }

    /// The value under `key` with its failure, if rendering it fails.
    pub(crate) fn try_get(&self, key: &JValue) -> Option<Result<JValue, Error>> {
        if let Some(entries) = &*lock(&self.entries) {
            return entries.get(key).cloned().map(Ok);
        }
        let (data, ctx) = self.base.as_ref()?;
        data.entries.get(key).map(|d| ctx.try_resolve(d))
    }

    /// As [`List::unchanged_copy`].
    pub(crate) fn unchanged_copy(&self) -> Option<Dict> {
        if lock(&self.entries).is_some() {
            return None;
        }
        let (data, ctx) = self.base.as_ref()?;
        Some(Dict::over(data.clone(), ctx.clone()))
    }

    /// As [`List::own_items`].
    pub(crate) fn own_values(&self) -> Option<Vec<JValue>> {
        lock(&self.entries).as_ref().map(|e| e.values().cloned().collect())
    }

    /// Every entry, failing on the first value that cannot be rendered.
    pub(crate) fn try_entries(&self) -> Result<Vec<(JValue, JValue)>, Error> {
        let keys = self.keys();
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(v) = self.try_get(&k) {
                out.push((k, v?));
            }
        }
        Ok(out)
    }

    pub(crate) fn mutate<R>(&self, f: impl FnOnce(&mut IndexMap<JValue, JValue>) -> R) -> R {
        let mut guard = lock(&self.entries);
        if guard.is_none() {
            let entries = match &self.base {
                Some((data, ctx)) => {
                    data.entries.iter().map(|(k, d)| (k.clone(), ctx.resolve(d))).collect()
                }
                None => IndexMap::new(),
            };
            *guard = Some(entries);
        }
        f(guard.get_or_insert_with(IndexMap::new))
    }

    pub(crate) fn origin(&self) -> Option<tack_diag::Origin> {
        self.base.as_ref().and_then(|(d, _)| d.origin.clone())
    }
}

impl fmt::Debug for Dict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.keys().into_iter().map(|k| (k.clone(), self.get(&k)))).finish()
    }
}

impl Object for Dict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        // A value whose template is undefined is missing, so the engine can say which.
        let found = self.get(key).filter(|v| !v.is_undefined());
        if found.is_none() {
            active::missed("dict", key);
        }
        found
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.keys())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[JValue],
    ) -> Result<JValue, Error> {
        crate::python::methods::dict_method(state, self, method, args)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::python::repr::repr_lossy(&JValue::from_dyn_object(self.clone())))
    }
}

/// A vaulted text a template made (the legacy JSON profiles' `__ansible_vault`) that the
/// run's secrets do not decrypt: stored as vault text (where reading it fails as any
/// undecryptable `!vault` value does), and nothing a template can show or compute with, as
/// ansible's encrypted string fails where it is used.
#[derive(Debug)]
pub(crate) struct EncryptedText(pub String);

crate::markers::opaque_object!(EncryptedText);

/// A Python `date` or `datetime` (a YAML timestamp, a template file's mtime).
#[derive(Debug)]
pub(crate) struct PyDateTime(pub tack_yaml::Timestamp);

impl Object for PyDateTime {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.python_str())
    }

    /// A `datetime`'s attributes are the filters' datetime's (`year`, ..., `microsecond`); a
    /// `date` has no time of day.
    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        if self.0.time.is_none() && !matches!(key.as_str()?, "year" | "month" | "day") {
            return None;
        }
        Arc::new(crate::filters::DateTime(self.0.clone())).get_value(key)
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::NonEnumerable
    }

    /// `strftime()`, `isoformat()`, `weekday()`, `isoweekday()` as the filters' datetime has them.
    fn call_method(
        self: &Arc<Self>,
        state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[JValue],
    ) -> Result<JValue, Error> {
        Arc::new(crate::filters::DateTime(self.0.clone())).call_method(state, method, args)
    }

    fn custom_cmp(
        self: &Arc<Self>,
        other: &minijinja::value::DynObject,
    ) -> Option<std::cmp::Ordering> {
        let other = other.downcast_ref::<PyDateTime>()?;
        let key = |t: &tack_yaml::Timestamp| {
            let time = t
                .time
                .as_ref()
                .map_or((0, 0, 0, 0), |t| (t.hour, t.minute, t.second, t.microsecond));
            (t.year, t.month, t.day, time)
        };
        Some(key(&self.0).cmp(&key(&other.0)))
    }
}

/// ansible's `omit`: a value that removes the key (or item) it ends up in.
#[derive(Debug)]
pub(crate) struct Omit;

impl Object for Omit {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    /// `str(omit)`, as a filter that stringifies it (`join`) shows it; a `{{ }}` block that
    /// yields `omit` writes nothing (the engine's formatter drops it).
    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<<Omit>>")
    }
}

/// `true` for the `omit` value.
pub(crate) fn is_omit(value: &JValue) -> bool {
    value.downcast_object_ref::<Omit>().is_some()
}

/// Whether `value` is one of the views over a run's variables (the root context, `vars`,
/// `hostvars`): reading through them renders variables, and nothing a template makes is
/// stored in them.
pub(crate) fn is_view(value: &JValue) -> bool {
    value.downcast_object_ref::<Root>().is_some()
        || value.downcast_object_ref::<VarsView>().is_some()
        || value.downcast_object_ref::<HostvarsView>().is_some()
}

/// The root of a render's context: variables by name from a scope. Values read are kept for
/// the rest of the render, so that a method changing one (`x.append(1)`) is seen by later
/// expressions of the same template, as in ansible.
pub(crate) struct Root {
    ctx: Ctx,
    read: Mutex<IndexMap<String, JValue>>,
}

impl Root {
    pub(crate) fn new(ctx: Ctx) -> Root {
        Root { ctx, read: Mutex::new(IndexMap::new()) }
    }

    pub(crate) fn ctx(&self) -> &Ctx {
        &self.ctx
    }
}

impl fmt::Debug for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Root")
    }
}

impl Object for Root {
    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, name: &str) -> Option<JValue> {
        // An import without context runs as if there were no variables.
        if crate::engine::active::context_hidden() {
            return None;
        }
        if let Some(v) = lock(&self.read).get(name) {
            return Some(v.clone());
        }
        let value = match (name, self.ctx.scope.get(name)) {
            ("vars", _) => {
                crate::vars::Deprecation::vars_dictionary().emit();
                JValue::from_object(VarsView { ctx: self.ctx.clone(), template_vars: true })
            }
            ("hostvars", _) if self.ctx.scope.hostvars().is_some() => {
                JValue::from_object(HostvarsView { ctx: self.ctx.clone() })
            }
            ("omit", None) => JValue::from_object(Omit),
            (_, Some(binding)) => {
                let value = self.ctx.read_binding(binding);
                if value.is_undefined() {
                    // Missing, so the engine can say which variable and why.
                    return None;
                }
                value
            }
            (_, None) => return None,
        };
        lock(&self.read).insert(name.to_string(), value.clone());
        Some(value)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.ctx.scope.names().into_iter().map(JValue::from).collect())
    }
}

/// Whether `value` is `hostvars`, one host's view of it, or a variable's list or dict:
/// containers that stay lazy when a template gives them whole (ansible's lazy containers:
/// `{{ x }}` of a dict renders none of the templates inside it).
pub(crate) fn is_lazy_view(value: &JValue) -> bool {
    value.downcast_object_ref::<VarsView>().is_some()
        || value.downcast_object_ref::<HostvarsView>().is_some()
        || value.downcast_object_ref::<Dict>().is_some_and(|d| d.base.is_some())
        || value.downcast_object_ref::<List>().is_some_and(|l| l.base.is_some())
}

/// `vars`: every variable of the scope, looked up by name at render time (so
/// `vars[name]` records exactly the binding it reads).
pub(crate) struct VarsView {
    ctx: Ctx,
    /// The template's own `vars` (not one host's under `hostvars`), which also holds
    /// `hostvars`, as ansible's task variables do.
    template_vars: bool,
}

impl fmt::Debug for VarsView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("vars")
    }
}

impl VarsView {
    pub(crate) fn new(ctx: Ctx) -> VarsView {
        VarsView { ctx, template_vars: false }
    }

    fn holds_hostvars(&self) -> bool {
        self.template_vars && self.ctx.scope.hostvars().is_some()
    }
}

impl Object for VarsView {
    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let name = key.as_str()?;
        if let Some(binding) = self.ctx.scope.get(name) {
            return Some(self.ctx.read_binding(binding));
        }
        (name == "hostvars" && self.holds_hostvars())
            .then(|| JValue::from_object(HostvarsView { ctx: self.ctx.clone() }))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        // Whoever sees the whole set of variables (to count, copy or print them) may learn
        // from any of them: every binding counts as read.
        let mut names = self.ctx.scope.names();
        for name in &names {
            if let Some(binding) = self.ctx.scope.get(name) {
                active::record(binding.provenance());
            }
        }
        if self.holds_hostvars() && !names.contains(&"hostvars") {
            names.push("hostvars");
        }
        Enumerator::Values(names.into_iter().map(JValue::from).collect())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[JValue],
    ) -> Result<JValue, Error> {
        crate::python::methods::mapping_view_method(state, self, method, args)
    }
}

/// `hostvars`: each inventory host's variables, computed on demand by the executor.
pub(crate) struct HostvarsView {
    ctx: Ctx,
}

impl fmt::Debug for HostvarsView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("hostvars")
    }
}

impl Object for HostvarsView {
    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let hostvars = self.ctx.scope.hostvars()?;
        let scope = hostvars.host_scope(key.as_str()?)?;
        Some(JValue::from_object(VarsView::new(Ctx { scope, engine: self.ctx.engine.clone() })))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let hosts = self.ctx.scope.hostvars().map(|h| h.hosts()).unwrap_or_default();
        Enumerator::Values(hosts.into_iter().map(JValue::from).collect())
    }

    fn call_method(
        self: &Arc<Self>,
        state: &mut minijinja::State<'_, '_>,
        method: &str,
        args: &[JValue],
    ) -> Result<JValue, Error> {
        crate::python::methods::mapping_view_method(state, self, method, args)
    }
}
