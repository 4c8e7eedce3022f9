//! [`Mapping`]: a YAML mapping as a Python dict holds it, in document order.
//!
//! Keys are compared as Python compares dict keys (see `key`). Small mappings (most of a
//! playbook's) are searched by a scan; once a mapping is large, the first lookup builds a hash
//! index that later inserts keep up to date, so building or querying a mapping of n keys is
//! O(n) overall whatever its size.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::key::PyKey;
use crate::value::{Node, Value};

/// Mappings up to this many entries are scanned instead of indexed.
const SCAN_LIMIT: usize = 16;

type FastMap<K> = HashMap<K, usize, foldhash::fast::RandomState>;

/// A mapping in document order. Keys are nodes because YAML allows non-string keys
/// (`1: a`, `true: b`); a duplicate key keeps its first position and its last value, as a
/// Python dict does: `1`, `1.0` and `true` are one key, and so are a string and the same text
/// under `!unsafe`. Lists and dicts as keys (unhashable in Python) compare structurally.
#[derive(Clone, Default)]
pub struct Mapping {
    entries: Vec<(Node, Node)>,
    /// Boxed so that every value (of which a mapping is one kind) stays small.
    index: OnceLock<Box<Index>>,
}

#[derive(Clone, Default)]
struct Index {
    /// String keys apart, so `get(&str)` needs no allocation.
    strs: FastMap<Box<str>>,
    others: FastMap<PyKey>,
}

impl Index {
    fn add(&mut self, key: &Value, pos: usize) {
        match key {
            Value::Str(s) | Value::Unsafe(s) => {
                self.strs.entry(s.as_str().into()).or_insert(pos);
            }
            other => {
                if let Some(k) = PyKey::of(other) {
                    self.others.entry(k).or_insert(pos);
                }
            }
        }
    }
}

/// Python's `==` between two keys.
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Str(x) | Value::Unsafe(x), Value::Str(y) | Value::Unsafe(y)) => x == y,
        (Value::Str(_) | Value::Unsafe(_), _) | (_, Value::Str(_) | Value::Unsafe(_)) => false,
        _ => match (PyKey::of(a), PyKey::of(b)) {
            (Some(x), Some(y)) => x == y,
            (None, None) => a == b,
            _ => false,
        },
    }
}

impl Mapping {
    pub fn new() -> Mapping {
        Mapping::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn index(&self) -> Option<&Index> {
        if self.entries.len() <= SCAN_LIMIT {
            return self.index.get().map(|b| &**b);
        }
        Some(
            self.index
                .get_or_init(|| {
                    let mut index = Box::<Index>::default();
                    for (pos, (k, _)) in self.entries.iter().enumerate() {
                        index.add(&k.value, pos);
                    }
                    index
                })
                .as_ref(),
        )
    }

    /// Where an equal key sits, if any.
    fn position(&self, key: &Value) -> Option<usize> {
        let Some(index) = self.index() else {
            return self.entries.iter().position(|(k, _)| py_eq(&k.value, key));
        };
        match key {
            Value::Str(s) | Value::Unsafe(s) => index.strs.get(s.as_str()).copied(),
            other => match PyKey::of(other) {
                Some(k) => index.others.get(&k).copied(),
                None => self.entries.iter().position(|(k, _)| k.value == *other),
            },
        }
    }

    /// Inserts or replaces. A replaced key keeps its original place and its original key
    /// node; the value is the new one. Returns the previous value.
    pub fn insert(&mut self, key: Node, value: Node) -> Option<Node> {
        if let Some(pos) = self.position(&key.value) {
            return Some(std::mem::replace(&mut self.entries[pos].1, value));
        }
        self.push_new(key, value);
        None
    }

    /// Appends a key known to be absent (the loader has already merged duplicates).
    pub(crate) fn push_new(&mut self, key: Node, value: Node) {
        if let Some(index) = self.index.get_mut() {
            index.add(&key.value, self.entries.len());
        }
        self.entries.push((key, value));
    }

    /// The value under any key, compared as a Python dict compares keys.
    pub fn get_value(&self, key: &Value) -> Option<&Node> {
        self.position(key).map(|pos| &self.entries[pos].1)
    }

    /// The value under any key, to change in place (its key and place stay).
    pub fn get_value_mut(&mut self, key: &Value) -> Option<&mut Node> {
        self.position(key).map(|pos| &mut self.entries[pos].1)
    }

    /// The value under a string key.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key node and value under a string key (the key node carries the key's origin).
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        let pos = match self.index() {
            Some(index) => *index.strs.get(key)?,
            None => self.entries.iter().position(|(k, _)| k.as_str() == Some(key))?,
        };
        let (k, v) = &self.entries[pos];
        Some((k, v))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Node, &Node)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Each entry, its value to change in place (keys stay as they are, so does the index).
    pub fn iter_values_mut(&mut self) -> impl ExactSizeIterator<Item = (&Node, &mut Node)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Node> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn remove(&mut self, key: &str) -> Option<(Node, Node)> {
        let pos = self.entries.iter().position(|(k, _)| k.as_str() == Some(key))?;
        // Every later position shifts; the index is rebuilt on the next lookup.
        self.index = OnceLock::new();
        Some(self.entries.remove(pos))
    }
}

impl PartialEq for Mapping {
    /// Equal when the entries are equal in order; the index follows from the entries.
    fn eq(&self, other: &Mapping) -> bool {
        self.entries == other.entries
    }
}

impl IntoIterator for Mapping {
    type Item = (Node, Node);
    type IntoIter = std::vec::IntoIter<(Node, Node)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(Node, Node)> for Mapping {
    fn from_iter<I: IntoIterator<Item = (Node, Node)>>(iter: I) -> Mapping {
        let mut m = Mapping::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl fmt::Debug for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(k, v)| (k, v))).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.into()))
    }

    #[test]
    fn python_key_equality_small_and_large() {
        for size in [3, 100] {
            let mut m = Mapping::new();
            for i in 0..size {
                m.insert(s(&format!("k{i}")), Node::bare(Value::Int(i)));
            }
            m.insert(Node::bare(Value::Int(1)), s("int"));
            assert_eq!(m.insert(Node::bare(Value::Bool(true)), s("bool")), Some(s("int")));
            assert_eq!(m.get_value(&Value::Float(1.0)), Some(&s("bool")));
            m.insert(Node::bare(Value::Unsafe("k0".into())), s("unsafe"));
            assert_eq!(m.get("k0"), Some(&s("unsafe")));
            assert_eq!(m.len(), size as usize + 1);
            assert_eq!(m.remove("k0").map(|(k, _)| k), Some(s("k0")));
            assert_eq!(
                m.get("k2").and_then(|n| match n.value {
                    Value::Int(i) => Some(i),
                    _ => None,
                }),
                Some(2)
            );
            assert_eq!(m.get("k0"), None);
        }
    }
}
