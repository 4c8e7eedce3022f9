//! Tags: naming them, and PyYAML's implicit resolver that picks one for an untagged scalar.
//!
//! The resolver is PyYAML's `Resolver` rule for rule: candidate regexes are chosen by the
//! scalar's first character and tried in PyYAML's registration order (bool, float, int, merge,
//! null, timestamp, value). The patterns are PyYAML's own, rewritten without verbose mode.
//! Python's `$` also matches before one final newline; a scalar only ends in a newline when a
//! quoted or block scalar is re-resolved under `!unsafe`/`!vault`, and that case is kept.
//!
//! This module decides types only; building values is the constructor's job.

use std::sync::LazyLock;

use regex::Regex;

pub(crate) const YAML_PREFIX: &str = "tag:yaml.org,2002:";

/// A resolved tag. The ones with a constructor are named; anything else is kept verbatim so the
/// error can quote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Timestamp,
    Binary,
    Merge,
    Seq,
    Map,
    Set,
    Omap,
    Pairs,
    Unsafe,
    Vault,
    VaultEncrypted,
    /// `tag:yaml.org,2002:value` (`=`), `tag:yaml.org,2002:yaml`, `!foo`, ...: no constructor.
    Other(String),
}

impl Tag {
    /// The tag a YAML event carried, already expanded by the parser (`!!int` arrives as
    /// `tag:yaml.org,2002:int`).
    pub(crate) fn from_event(tag: &str) -> Tag {
        if let Some(name) = tag.strip_prefix(YAML_PREFIX) {
            match name {
                "str" | "python/unicode" => return Tag::Str,
                "int" => return Tag::Int,
                "float" => return Tag::Float,
                "bool" => return Tag::Bool,
                "null" => return Tag::Null,
                "timestamp" => return Tag::Timestamp,
                "binary" => return Tag::Binary,
                "merge" => return Tag::Merge,
                "seq" => return Tag::Seq,
                "map" | "python/dict" => return Tag::Map,
                "set" => return Tag::Set,
                "omap" => return Tag::Omap,
                "pairs" => return Tag::Pairs,
                _ => {}
            }
        }
        match tag {
            "!unsafe" => Tag::Unsafe,
            "!vault" => Tag::Vault,
            "!vault-encrypted" => Tag::VaultEncrypted,
            other => Tag::Other(other.to_string()),
        }
    }

    /// The tag's full name, as Python's `repr` of it appears in error messages.
    pub(crate) fn name(&self) -> String {
        let core = |n: &str| format!("{YAML_PREFIX}{n}");
        match self {
            Tag::Str => core("str"),
            Tag::Int => core("int"),
            Tag::Float => core("float"),
            Tag::Bool => core("bool"),
            Tag::Null => core("null"),
            Tag::Timestamp => core("timestamp"),
            Tag::Binary => core("binary"),
            Tag::Merge => core("merge"),
            Tag::Seq => core("seq"),
            Tag::Map => core("map"),
            Tag::Set => core("set"),
            Tag::Omap => core("omap"),
            Tag::Pairs => core("pairs"),
            Tag::Unsafe => "!unsafe".into(),
            Tag::Vault => "!vault".into(),
            Tag::VaultEncrypted => "!vault-encrypted".into(),
            Tag::Other(name) => name.clone(),
        }
    }
}

macro_rules! pattern {
    ($name:ident, $re:literal) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| {
            // The pattern is a literal checked by the tests below.
            Regex::new($re).expect("resolver pattern is valid")
        });
    };
}

pattern!(BOOL, r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$");
pattern!(
    FLOAT,
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
);
pattern!(
    INT,
    r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"
);
pattern!(
    TIMESTAMP,
    r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"
);

fn is_null(v: &str) -> bool {
    matches!(v, "~" | "null" | "Null" | "NULL" | "")
}

/// The tag PyYAML gives a scalar resolved implicitly (plain, or re-resolved under `!unsafe`).
pub(crate) fn resolve_scalar(value: &str) -> Tag {
    // Python's `$` matches before a single trailing newline.
    let v = value.strip_suffix('\n').unwrap_or(value);
    let Some(first) = value.chars().next() else {
        return Tag::Null;
    };
    match first {
        'y' | 'Y' | 'n' | 'N' | 't' | 'T' | 'f' | 'F' | 'o' | 'O' => {
            if BOOL.is_match(v) {
                Tag::Bool
            } else if matches!(first, 'n' | 'N') && is_null(v) {
                Tag::Null
            } else {
                Tag::Str
            }
        }
        '-' | '+' | '.' | '0'..='9' => {
            if FLOAT.is_match(v) {
                Tag::Float
            } else if first != '.' && INT.is_match(v) {
                Tag::Int
            } else if first.is_ascii_digit() && TIMESTAMP.is_match(v) {
                Tag::Timestamp
            } else {
                Tag::Str
            }
        }
        '<' if v == "<<" => Tag::Merge,
        '~' if v == "~" => Tag::Null,
        '=' if v == "=" => Tag::Other(format!("{YAML_PREFIX}value")),
        '!' | '&' | '*' if v.len() == 1 => Tag::Other(format!("{YAML_PREFIX}yaml")),
        _ => Tag::Str,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(v: &str) -> Tag {
        resolve_scalar(v)
    }

    #[test]
    fn patterns_compile() {
        for re in [&BOOL, &FLOAT, &INT, &TIMESTAMP] {
            assert!(!re.as_str().is_empty());
        }
    }

    #[test]
    fn first_character_picks_the_candidates() {
        assert_eq!(tag("yes"), Tag::Bool);
        assert_eq!(tag("yEs"), Tag::Str);
        assert_eq!(tag("y"), Tag::Str);
        assert_eq!(tag("Null"), Tag::Null);
        assert_eq!(tag(""), Tag::Null);
        assert_eq!(tag("1e3"), Tag::Str);
        assert_eq!(tag("1.5e3"), Tag::Str);
        assert_eq!(tag("1.5e+3"), Tag::Float);
        assert_eq!(tag(".5"), Tag::Float);
        assert_eq!(tag("0x_1A"), Tag::Int);
        assert_eq!(tag("190:20:30"), Tag::Int);
        assert_eq!(tag("2001-12-14 21:59:43.10 -5"), Tag::Timestamp);
        assert_eq!(tag("3\n"), Tag::Int);
        assert_eq!(tag("<<"), Tag::Merge);
    }
}
