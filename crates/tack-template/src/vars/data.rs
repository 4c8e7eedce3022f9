//! A binding's value as template data: scalars already converted to minijinja values,
//! containers behind `Arc`s so that every render can hand out views of them without copying,
//! and the strings that are templates (or `!vault` ciphertext) kept apart to be rendered (or
//! decrypted) when read.
//!
//! Made once per binding and never changed; it knows nothing of scopes. The views that give it
//! a scope to render in are in `objects`.

use std::sync::Arc;

use indexmap::IndexMap;
use minijinja::Value as JValue;
use tack_diag::Origin;
use tack_yaml::{Node, Value};

/// One value of a binding, as converted on first read.
#[derive(Debug, Clone)]
pub(crate) enum Data {
    /// Ready to use: scalars, and trusted strings that are not templates.
    Plain(JValue),
    /// A trusted string that is not a template, and where it was written.
    Written(JValue, Origin),
    /// A string that is never a template (`!unsafe`, or data from a host): kept apart from
    /// [`Data::Plain`] so an item read as written still says it is not to be evaluated.
    Unsafe(JValue, Option<Origin>),
    /// A trusted string with Jinja2 syntax in it, rendered each time it is read, and where
    /// it was written (what its render's deprecations point at, as ansible's do).
    Template(Arc<str>, Option<Origin>),
    /// `!vault` ciphertext, decrypted each time it is read (never stored decrypted).
    Vault(Arc<str>),
    Seq(Arc<DataSeq>),
    Map(Arc<DataMap>),
    /// A value a module tagged `Deprecated`: reading it warns, then reads the value.
    Deprecated(Box<Data>, Arc<tack_diag::Deprecated>),
}

#[derive(Debug)]
pub(crate) struct DataSeq {
    pub items: Vec<Data>,
    pub origin: Option<Origin>,
}

#[derive(Debug)]
pub(crate) struct DataMap {
    pub entries: IndexMap<JValue, Data>,
    pub origin: Option<Origin>,
}

impl Data {
    /// Converts a loaded value. `trusted` says whether its strings may be templates.
    pub(crate) fn from_node(node: &Node, trusted: bool) -> Data {
        match &node.value {
            Value::Str(s) if trusted && crate::is_possibly_template(s) => {
                Data::Template(Arc::from(s.as_str()), node.origin.clone())
            }
            Value::Vault(text) => Data::Vault(Arc::from(text.as_str())),
            Value::Unsafe(_) => Data::Unsafe(scalar(&node.value), node.origin.clone()),
            Value::Str(_) if !trusted => Data::Unsafe(scalar(&node.value), node.origin.clone()),
            // A string the user wrote in a file keeps where (ansible's tags, see `str_tags`).
            Value::Str(_) => match &node.origin {
                Some(origin) => Data::Written(scalar(&node.value), origin.clone()),
                None => Data::Plain(scalar(&node.value)),
            },
            Value::Seq(items) => Data::Seq(Arc::new(DataSeq {
                items: items.iter().map(|n| Data::from_node(n, trusted)).collect(),
                origin: node.origin.clone(),
            })),
            Value::Map(m) => {
                let mut entries = IndexMap::with_capacity(m.len());
                for (k, v) in m.iter() {
                    entries.insert(scalar(&k.value), Data::from_node(v, trusted));
                }
                Data::Map(Arc::new(DataMap { entries, origin: node.origin.clone() }))
            }
            other => Data::Plain(scalar(other)),
        }
    }
}

impl Data {
    /// Tags the value at `path` inside this one `Deprecated`. Done right after
    /// [`Data::from_node`], while every container is this value's alone; a path that leads
    /// nowhere tags nothing.
    pub(crate) fn tag_deprecated(
        &mut self,
        path: &[tack_yaml::tagged::PathStep],
        deprecated: &Arc<tack_diag::Deprecated>,
    ) {
        use tack_yaml::tagged::PathStep;
        let Some((step, rest)) = path.split_first() else {
            let value = std::mem::replace(self, Data::Plain(JValue::UNDEFINED));
            *self = Data::Deprecated(Box::new(value), deprecated.clone());
            return;
        };
        let inner = match (self, step) {
            (Data::Deprecated(inner, _), _) => return inner.tag_deprecated(path, deprecated),
            (Data::Map(map), PathStep::Key(key)) => {
                Arc::get_mut(map).and_then(|m| m.entries.get_mut(&JValue::from(key.as_str())))
            }
            (Data::Seq(seq), PathStep::Index(i)) => {
                Arc::get_mut(seq).and_then(|s| s.items.get_mut(*i))
            }
            _ => None,
        };
        if let Some(inner) = inner {
            inner.tag_deprecated(rest, deprecated);
        }
    }
}

/// A scalar as a minijinja value (containers go through [`Data::from_node`]; here they are
/// converted eagerly, which only happens for mapping keys).
pub(crate) fn scalar(value: &Value) -> JValue {
    match value {
        Value::Null => JValue::from(()),
        Value::Bool(b) => JValue::from(*b),
        Value::Int(i) => JValue::from(*i),
        Value::BigInt(digits) => crate::value::big_int(digits),
        Value::Float(f) => JValue::from(*f),
        Value::Str(s) | Value::Unsafe(s) => JValue::from(s.as_str()),
        Value::Timestamp(t) => JValue::from_object(super::objects::PyDateTime(t.clone())),
        Value::Bytes(data) => JValue::from_object(crate::pybytes::PyBytes(data.clone())),
        Value::Vault(text) => JValue::from(text.as_str()),
        Value::Seq(items) => items.iter().map(|n| scalar(&n.value)).collect(),
        Value::Map(m) => {
            JValue::from_iter(m.iter().map(|(k, v)| (scalar(&k.value), scalar(&v.value))))
        }
    }
}
