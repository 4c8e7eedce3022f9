//! A resolved setting's value and where it came from.
//!
//! Values keep ansible's (Python's) types, because a setting without a declared type keeps
//! whatever its source gave it: `vault_id_match = False` in `ansible.cfg` is the *string*
//! `"False"`, which ansible then treats as true. Owns no resolution logic.

use std::fmt;
use std::path::PathBuf;

use crate::def::Literal;

/// A setting's value, typed as ansible types it.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<SettingValue>),
    /// Keys in definition order.
    Dict(Vec<(String, SettingValue)>),
}

impl SettingValue {
    /// A default from ansible's table, as a value.
    pub fn from_literal(lit: &Literal) -> SettingValue {
        match *lit {
            Literal::Null => SettingValue::Null,
            Literal::Bool(b) => SettingValue::Bool(b),
            Literal::Int(n) => SettingValue::Int(n),
            Literal::Float(f) => SettingValue::Float(f),
            Literal::Str(s) => SettingValue::Str(s.to_string()),
            Literal::List(items) => {
                SettingValue::List(items.iter().map(SettingValue::from_literal).collect())
            }
            Literal::Dict(items) => SettingValue::Dict(
                items.iter().map(|(k, v)| (k.to_string(), SettingValue::from_literal(v))).collect(),
            ),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            SettingValue::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            SettingValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            SettingValue::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The items of a list whose items are all strings.
    pub fn as_str_list(&self) -> Option<Vec<&str>> {
        match self {
            SettingValue::List(items) => items.iter().map(SettingValue::as_str).collect(),
            _ => None,
        }
    }

    /// Python's truthiness, which is how ansible tests untyped settings (`if C.X:`).
    pub fn is_truthy(&self) -> bool {
        match self {
            SettingValue::Null => false,
            SettingValue::Bool(b) => *b,
            SettingValue::Int(n) => *n != 0,
            SettingValue::Float(f) => *f != 0.0,
            SettingValue::Str(s) => !s.is_empty(),
            SettingValue::List(items) => !items.is_empty(),
            SettingValue::Dict(items) => !items.is_empty(),
        }
    }
}

impl fmt::Display for SettingValue {
    /// Python's `repr()` of the value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::pyrepr::value_repr(self))
    }
}

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingOrigin {
    /// ansible's default (possibly rendered from `ANSIBLE_HOME`).
    Default,
    /// An environment variable, by name.
    Env(String),
    /// An `ansible.cfg` entry.
    Ini { path: PathBuf, section: String, key: String },
    /// A command-line option, applied by the binary (`--forks`).
    Cli(String),
    /// A host or play variable one of the setting's `vars:` entries names, read where the
    /// variables are (`Config::resolve_with_vars`).
    Var(String),
}

impl SettingOrigin {
    /// The origin as ansible reports it (`ansible-config dump`, error messages): `default`,
    /// `env: ANSIBLE_FORKS`, the configuration file's path, or `cli: forks`.
    pub fn label(&self) -> String {
        match self {
            SettingOrigin::Default => "default".into(),
            SettingOrigin::Env(name) => format!("env: {name}"),
            SettingOrigin::Ini { path, .. } => path.display().to_string(),
            SettingOrigin::Cli(option) => format!("cli: {option}"),
            SettingOrigin::Var(name) => format!("var: {name}"),
        }
    }

    /// Whether the user chose this value (environment, file or command line).
    pub fn is_user_set(&self) -> bool {
        !matches!(self, SettingOrigin::Default)
    }
}

/// A setting's value with its origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub value: SettingValue,
    pub origin: SettingOrigin,
}
