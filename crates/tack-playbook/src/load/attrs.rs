//! Keyword handling shared by every playbook object: rejecting keys the object does not accept
//! (`'x' is not a valid attribute for a Play`), collecting the accepted ones into [`Attrs`],
//! and the keyword loaders ansible runs at load time (`vars`, `tags`, string-typed fields).

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::{general_error, parser_error};
use crate::ast::Attrs;
use crate::tables::{Isa, Keyword, ObjectKind};

/// Checks every key of `ds` is a keyword of `kind`, in document order.
pub(crate) fn validate_keys(ds: &Mapping, kind: ObjectKind) -> Result<(), Diagnostic> {
    for key in ds.keys() {
        let known = key.as_str().is_some_and(|k| kind.attribute(k).is_some());
        if !known {
            let name = key_text(key);
            return Err(parser_error(
                format!("'{name}' is not a valid attribute for a {}", kind.class_name()),
                Some(key),
            ));
        }
    }
    Ok(())
}

/// A mapping key as Python's `%s` shows it.
pub(crate) fn key_text(key: &Node) -> String {
    tack_yaml::pyrepr::str(&key.value)
}

/// Collects the keywords of `ds` into [`Attrs`], skipping `skip` (the structural keywords the
/// caller loads itself). Keys must have been validated.
pub(crate) fn collect(ds: &Mapping, skip: &[Keyword]) -> Attrs {
    let mut attrs = Attrs::default();
    for (key, value) in ds.iter() {
        if let Some(kw) = key.as_str().and_then(Keyword::parse)
            && !skip.contains(&kw)
        {
            attrs.set(kw, key.clone(), value.clone());
        }
    }
    attrs
}

/// `Base._load_vars`: a mapping of valid variable names (or null). `class` names the object in
/// the message.
pub(crate) fn load_vars(value: &Node, class: &str) -> Result<Mapping, Diagnostic> {
    match &value.value {
        Value::Null => Ok(Mapping::new()),
        Value::Map(m) => {
            for key in m.keys() {
                validate_variable_name(key)?;
            }
            Ok(m.clone())
        }
        _ => Err(parser_error(
            format!("Vars in a {class} must be specified as a dictionary."),
            Some(value),
        )),
    }
}

/// ansible's `validate_variable_name`: an ASCII Python identifier that is not a Jinja2 keyword.
/// The one home of the rule (play and task `vars`, `set_fact`'s names).
pub fn validate_variable_name(key: &Node) -> Result<(), Diagnostic> {
    if let Some(name) = key.as_str()
        && is_valid_variable_name(name)
    {
        return Ok(());
    }
    let mut description = match &key.value {
        Value::Seq(_) | Value::Map(_) => "name".to_string(),
        other => format!("name {}", tack_yaml::pyrepr::str_repr(&tack_yaml::pyrepr::str(other))),
    };
    if key.as_str().is_none() {
        description.push_str(&format!(" of type '{}'", key.python_type()));
    }
    Err(general_error(format!("Invalid variable {description}."), Some(key)).with_help(
        "Variable names must be strings starting with a letter or underscore character, and contain only letters, numbers and underscores.",
    ))
}

const JINJA_KEYWORDS: &[&str] = &[
    "true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if", "else",
];

pub(crate) fn is_valid_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    (first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !JINJA_KEYWORDS.contains(&name)
        && !is_python_keyword(name)
}

fn is_python_keyword(name: &str) -> bool {
    // str.isidentifier() accepts keywords; ansible rejects only Jinja2's. Keep Python's
    // keywords accepted to match: nothing to do here beyond documenting the choice.
    let _ = name;
    false
}

/// `Taggable._load_tags`: a list, or a comma-separated string split and stripped.
pub(crate) fn load_tags(value: &Node) -> Result<Node, Diagnostic> {
    let tags = match &value.value {
        Value::Seq(_) => value.clone(),
        Value::Str(s) => Node::new(
            Value::Seq(
                s.split(',')
                    .map(|t| Node::new(Value::Str(t.trim().to_string()), value.origin.clone()))
                    .collect(),
            ),
            value.origin.clone(),
        ),
        _ => return Err(general_error("tags must be specified as a list", Some(value))),
    };
    if let Some(items) = tags.as_seq() {
        let reserved: Vec<&str> = items
            .iter()
            .filter_map(|t| t.as_str())
            .filter(|t| matches!(*t, "tagged" | "all" | "untagged"))
            .collect();
        if !reserved.is_empty() {
            let mut unique: Vec<&str> = Vec::new();
            for r in reserved {
                if !unique.contains(&r) {
                    unique.push(r);
                }
            }
            let list = unique.iter().map(|r| format!("'{r}'")).collect::<Vec<_>>().join(", ");
            tack_diag::warn(&Diagnostic::at(
                format!(
                    "Found reserved tagnames in tags: [{list}], we do not recommend doing this as it might give unexpected results"
                ),
                value.origin.clone(),
            ));
        }
    }
    Ok(tags)
}

/// `Base.validate`: a string-typed keyword given a list or mapping is an error at load time.
pub(crate) fn validate_string_fields(attrs: &Attrs, kind: ObjectKind) -> Result<(), Diagnostic> {
    for (kw, value) in attrs.iter() {
        let Some(attr) = kind.attribute(kw.as_str()) else { continue };
        if attr.isa == Isa::Str && matches!(value.value, Value::Seq(_) | Value::Map(_)) {
            return Err(parser_error(
                format!(
                    "The field '{}' is supposed to be a string type, however the incoming data structure is a {}",
                    kw.as_str(),
                    value.value.loaded_type_repr()
                ),
                Some(value),
            ));
        }
    }
    Ok(())
}
