//! The shape of a setting's definition, as ansible's `base.yml` and plugin docs describe it.
//!
//! Owns only the vocabulary; the definitions themselves are generated into `table.rs`, and
//! resolving them is `resolve.rs`'s job.

/// How ansible's `ensure_type` converts a setting's raw value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    Bool,
    Int,
    Float,
    /// Comma-separated, each item stripped and unquoted.
    List,
    /// Only the string `None`, which becomes null.
    NoneType,
    Path,
    /// A directory under which ansible makes a private temporary directory at start-up.
    TmpPath,
    /// Colon-separated paths.
    PathSpec,
    /// Comma-separated paths.
    PathList,
    Dict,
    Str,
    /// No type, or one ansible passes through unconverted (`raw`, `choices`).
    Raw,
}

/// A default value as written in ansible's definitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
    List(&'static [Literal]),
    Dict(&'static [(&'static str, Literal)]),
}

/// A setting's default: a value, or a template over an earlier setting (`ANSIBLE_HOME`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    Literal(Literal),
    /// `{{ SETTING ~ "suffix" }}`: the resolved value of `setting` followed by `suffix`.
    Template {
        setting: &'static str,
        suffix: &'static str,
    },
}

/// Why and until when a setting (or one way of setting it) is deprecated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deprecation {
    pub why: &'static str,
    pub version: &'static str,
    pub alternatives: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvEntry {
    pub name: &'static str,
    pub deprecated: Option<&'static Deprecation>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IniEntry {
    pub section: &'static str,
    pub key: &'static str,
    pub deprecated: Option<&'static Deprecation>,
}

/// One setting as ansible defines it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettingDef {
    pub name: &'static str,
    pub value_type: ValueType,
    /// The type as ansible names it in errors (`'integer'`, `'int'`), lower-cased; empty when none.
    pub type_name: &'static str,
    pub default: DefaultValue,
    /// Environment variables, lowest precedence first: the last one set wins.
    pub env: &'static [EnvEntry],
    /// `ansible.cfg` entries, lowest precedence first: the last one present wins.
    pub ini: &'static [IniEntry],
    /// Host or play variables that override the setting (applied by the engine, not here).
    pub vars: &'static [&'static str],
    pub choices: Option<&'static [&'static str]>,
    pub deprecated: Option<&'static Deprecation>,
}

/// The options of one plugin.
#[derive(Clone, Copy, Debug)]
pub struct PluginDef {
    pub plugin_type: &'static str,
    pub name: &'static str,
    pub options: &'static [SettingDef],
}
