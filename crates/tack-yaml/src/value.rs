//! The loaded data model: a tree of [`Node`]s, each a [`Value`] and where it was written.
//!
//! This is what every YAML file becomes (playbooks, vars files, inventories) and also the
//! form variables keep until they are templated, so a later error can still point at the line
//! a value came from. Values made at run time (module results, `-e k=v`) have no origin.

use std::fmt;

use tack_diag::Origin;

pub use crate::mapping::Mapping;

/// One value and where it was written.
#[derive(Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub origin: Option<Origin>,
}

/// A YAML value typed as PyYAML's SafeLoader types it under ansible's constructor.
#[derive(Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside `i64` (PyYAML's ints are unbounded), as its decimal digits with an
    /// optional leading `-`.
    BigInt(String),
    Float(f64),
    Str(String),
    /// A `YYYY-MM-DD` or full timestamp plain scalar: PyYAML builds a `date` or `datetime`.
    Timestamp(Timestamp),
    /// `!!binary` data (base64 as written, decoded): Python's `bytes`.
    Bytes(Vec<u8>),
    Seq(Vec<Node>),
    Map(Mapping),
    /// `!vault` ciphertext (the whole `$ANSIBLE_VAULT;...` text), decrypted only when used.
    Vault(String),
    /// A string that must never be templated: written under `!unsafe` (which marks every
    /// string inside the tagged node, keys included).
    Unsafe(String),
}

/// A YAML 1.1 timestamp, as written and as parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Timestamp {
    pub year: i32,
    pub month: u8,
    pub day: u8,
    /// `None` for a bare date (Python `date`); otherwise the time part (Python `datetime`).
    pub time: Option<TimeOfDay>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
    /// Offset from UTC in minutes, when the timestamp gave one (`Z` is 0).
    pub utc_offset_minutes: Option<i32>,
}

impl Timestamp {
    /// Python's `str()` of the `date`/`datetime` (what templating prints).
    pub fn python_str(&self) -> String {
        crate::pyrepr::timestamp_str(self)
    }

    /// Python's `repr()` of the `date`/`datetime`.
    pub fn python_repr(&self) -> String {
        crate::pyrepr::timestamp_repr(self)
    }
}

impl Node {
    pub fn new(value: Value, origin: Option<Origin>) -> Node {
        Node { value, origin }
    }

    /// A node with no source position (built at run time).
    pub fn bare(value: Value) -> Node {
        Node { value, origin: None }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) | Value::Unsafe(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Mapping> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The Python type name ansible would report for this value (`str`, `int`, `dict`, ...),
    /// as used in its error messages.
    pub fn python_type(&self) -> &'static str {
        self.value.python_type()
    }
}

impl Value {
    /// `type(value).__name__` of the plain Python object (`str`, `int`, `dict`, ...).
    pub fn python_type(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) | Value::Unsafe(_) => "str",
            Value::Timestamp(t) if t.time.is_none() => "date",
            Value::Timestamp(_) => "datetime",
            Value::Seq(_) => "list",
            Value::Map(_) => "dict",
            Value::Vault(_) => "EncryptedString",
            Value::Bytes(_) => "bytes",
        }
    }

    /// `type(value).__name__` of the value as ansible-core 2.21 loads it from a file: scalars
    /// and containers become "tagged" subclasses (they carry their origin), `None` and
    /// booleans cannot be subclassed and stay as they are.
    pub fn loaded_type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "_AnsibleTaggedInt",
            Value::Float(_) => "_AnsibleTaggedFloat",
            Value::Str(_) | Value::Unsafe(_) => "_AnsibleTaggedStr",
            Value::Timestamp(t) if t.time.is_none() => "_AnsibleTaggedDate",
            Value::Timestamp(_) => "_AnsibleTaggedDateTime",
            Value::Seq(_) => "_AnsibleTaggedList",
            Value::Map(_) => "_AnsibleTaggedDict",
            Value::Vault(_) => "EncryptedString",
            Value::Bytes(_) => "_AnsibleTaggedBytes",
        }
    }

    /// `str(type(value))` of the loaded value, as ansible's "got a <class '...'> instead"
    /// messages print it.
    pub fn loaded_type_repr(&self) -> String {
        let module = match self {
            Value::Null | Value::Bool(_) => None,
            Value::Vault(_) => Some("ansible.parsing.vault"),
            _ => Some("ansible.module_utils._internal._datatag"),
        };
        match module {
            Some(module) => format!("<class '{module}.{}'>", self.loaded_type_name()),
            None => format!("<class '{}'>", self.loaded_type_name()),
        }
    }

    /// Python truthiness (`bool(value)`). A vault value counts as true: its ciphertext is never
    /// empty (`!vault ''` is refused when loading), and tack does not decrypt to decide, where
    /// ansible would decrypt and test the plaintext.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::BigInt(_) | Value::Timestamp(_) | Value::Vault(_) => true,
            Value::Float(x) => *x != 0.0,
            Value::Str(s) | Value::Unsafe(s) => !s.is_empty(),
            Value::Seq(items) => !items.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
        }
    }

    /// The value as ansible's `boolean()` tells values apart ([`tack_py::boolean`]). A vault
    /// value is not a string to it until decrypted, which tack does not do here.
    pub fn boolean_input(&self) -> tack_py::boolean::Input<'_> {
        use tack_py::boolean::Input;
        match self {
            Value::Bool(b) => Input::Bool(*b),
            Value::Int(i) => Input::Int(*i),
            Value::Float(f) => Input::Float(*f),
            Value::Str(s) | Value::Unsafe(s) => Input::Text(s),
            // ansible's `boolean()` reads bytes as their text.
            Value::Bytes(b) => std::str::from_utf8(b).map_or(Input::Other, Input::Text),
            Value::Null
            | Value::BigInt(_)
            | Value::Timestamp(_)
            | Value::Seq(_)
            | Value::Map(_)
            | Value::Vault(_) => Input::Other,
        }
    }

    /// ansible's `boolean(value, strict=True)`, with its `TypeError` text where it refuses.
    pub fn boolean_strict(&self) -> Result<bool, String> {
        tack_py::boolean::strict(self.boolean_input())
            .ok_or_else(|| tack_py::boolean::invalid_message(&crate::pyrepr::str(self)))
    }

    /// ansible's `boolean(value, strict=False)`: true only for its true words, `1` and `1.0`.
    pub fn boolean_loose(&self) -> bool {
        tack_py::boolean::loose(self.boolean_input())
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::BigInt(s) => f.write_str(s),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Timestamp(t) => write!(f, "{t:?}"),
            Value::Seq(items) => f.debug_list().entries(items).finish(),
            Value::Map(m) => fmt::Debug::fmt(m, f),
            Value::Vault(_) => f.write_str("!vault <ciphertext>"),
            Value::Unsafe(s) => write!(f, "!unsafe {s:?}"),
            Value::Bytes(b) => f.write_str(&crate::pyrepr::bytes_repr(b)),
        }
    }
}
