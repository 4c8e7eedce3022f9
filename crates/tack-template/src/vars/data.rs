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
    /// A trusted string that is not a template, and where it was written (`None`: a string
    /// trusted inside a value that is not, which says so itself: see `trust_at`).
    Written(JValue, Option<Origin>),
    /// A string that is never a template (`!unsafe`, or data from a host): kept apart from
    /// [`Data::Plain`] so an item read as written still says it is not to be evaluated.
    Unsafe(JValue, Option<Origin>),
    /// A trusted string with Jinja2 syntax in it, rendered each time it is read, and where
    /// it was written (what its render's deprecations point at, as ansible's do).
    Template(Arc<str>, Option<Origin>),
    /// `!vault` ciphertext, decrypted each time it is read (never stored decrypted), and
    /// where it was written (the plaintext's `Origin`, as ansible tags it).
    Vault(Arc<str>, Option<Origin>),
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
        let trust = if trusted { Trust::Binding } else { Trust::None };
        Data::made(node, trust)
    }

    /// [`Data::from_node`] of a trusted value inside one that is not: a string without a
    /// place of its own is still the user's (`Written`), where a binding's own trusted strings
    /// without a place are plain data.
    fn from_trusted_part(node: &Node) -> Data {
        Data::made(node, Trust::Part)
    }

    fn made(node: &Node, trust: Trust) -> Data {
        let trusted = trust != Trust::None;
        match &node.value {
            Value::Str(s) if trusted && crate::is_possibly_template(s) => {
                Data::Template(Arc::from(s.as_str()), node.origin.clone())
            }
            Value::Vault(text) => Data::Vault(Arc::from(text.as_str()), node.origin.clone()),
            Value::Unsafe(_) => Data::Unsafe(scalar(&node.value), node.origin.clone()),
            Value::Str(_) if !trusted => Data::Unsafe(scalar(&node.value), node.origin.clone()),
            // A string the user wrote in a file keeps where (ansible's tags, see `str_tags`).
            Value::Str(_) => match &node.origin {
                Some(origin) => Data::Written(scalar(&node.value), Some(origin.clone())),
                None if trust == Trust::Part => Data::Written(scalar(&node.value), None),
                None => Data::Plain(scalar(&node.value)),
            },
            Value::Seq(items) => Data::Seq(Arc::new(DataSeq {
                items: items.iter().map(|n| Data::made(n, trust)).collect(),
                origin: node.origin.clone(),
            })),
            Value::Map(m) => {
                let mut entries = IndexMap::with_capacity(m.len());
                for (k, v) in m.iter() {
                    entries.insert(scalar(&k.value), Data::made(v, trust));
                }
                Data::Map(Arc::new(DataMap { entries, origin: node.origin.clone() }))
            }
            other => Data::Plain(scalar(other)),
        }
    }
}

/// Whose strings a value's are, as [`Data`] is made from it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// A host's (or `!unsafe`): never templates.
    None,
    /// The user's, as the whole binding is.
    Binding,
    /// The user's, inside a binding that is not (`Binding::with_trusted_at`).
    Part,
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

    /// The value at `path` (inside `node`, which this was made from) made again as trusted:
    /// its strings may be templates, but not those written `!unsafe`. Called right after
    /// [`Data::from_node`], while every container is this value's alone; a path that leads
    /// nowhere trusts nothing.
    pub(crate) fn trust_at(&mut self, path: &[tack_yaml::tagged::PathStep], node: &Node) {
        use tack_yaml::tagged::PathStep;
        let Some((step, rest)) = path.split_first() else {
            *self = Data::from_trusted_part(node);
            return;
        };
        let inner = match (self, step, &node.value) {
            (Data::Map(map), PathStep::Key(key), Value::Map(nodes)) => {
                let data =
                    Arc::get_mut(map).and_then(|m| m.entries.get_mut(&JValue::from(key.as_str())));
                data.zip(nodes.get(key.as_str()))
            }
            (Data::Seq(seq), PathStep::Index(i), Value::Seq(nodes)) => {
                Arc::get_mut(seq).and_then(|s| s.items.get_mut(*i)).zip(nodes.get(*i))
            }
            _ => None,
        };
        if let Some((inner, node)) = inner {
            inner.trust_at(rest, node);
        }
    }
}

impl Data {
    /// The places of the strings in this value that are the user's, written as they are
    /// (not templates, which a read renders into new, untrusted strings), each pushed to
    /// `found` from `at` (the place of this value).
    pub(crate) fn trusted_leaves(
        &self,
        at: &mut Vec<tack_yaml::tagged::PathStep>,
        found: &mut Vec<Vec<tack_yaml::tagged::PathStep>>,
    ) {
        use tack_yaml::tagged::PathStep;
        match self {
            Data::Written(..) => found.push(at.clone()),
            Data::Plain(v) if v.as_str().is_some() => found.push(at.clone()),
            Data::Seq(seq) => {
                for (i, item) in seq.items.iter().enumerate() {
                    at.push(PathStep::Index(i));
                    item.trusted_leaves(at, found);
                    at.pop();
                }
            }
            Data::Map(map) => {
                for (key, value) in &map.entries {
                    let Some(key) = key.as_str() else { continue };
                    at.push(PathStep::Key(key.to_string()));
                    value.trusted_leaves(at, found);
                    at.pop();
                }
            }
            Data::Deprecated(inner, _) => inner.trusted_leaves(at, found),
            _ => {}
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
