//! `post_validate` for a play: every keyword ansible always post-validates is templated with
//! the play's variables and converted to its declared type, with ansible's messages when it
//! cannot be (`The value 'maybe' could not be converted to 'bool'.`). ansible does this even
//! for `--syntax-check` and the listings, so those report the same errors.

use tack_diag::Diagnostic;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value, pyrepr};

use crate::ast::Play;
use crate::tables::{Attribute, Isa, Keyword, ObjectKind};

/// A play's keywords after post-validation.
#[derive(Debug, Clone)]
pub struct PlayKeywords {
    /// The play's name as shown in banners and listings.
    pub name: String,
    /// `hosts` as a list of patterns.
    pub hosts: Vec<String>,
    /// Every post-validated keyword's value, by keyword.
    pub values: Vec<(Keyword, Node)>,
    /// The argument spec `validate_argspec` names, when the play validates its variables.
    pub argspec: Option<crate::play_argspec::PlayArgspec>,
}

impl PlayKeywords {
    pub fn get(&self, kw: Keyword) -> Option<&Node> {
        self.values.iter().find(|(k, _)| *k == kw).map(|(_, v)| v)
    }
}

fn could_not_convert(value: &Node, isa: &str) -> Diagnostic {
    Diagnostic::at(
        format!(
            "The value {} could not be converted to {}.",
            pyrepr::repr(&value.value),
            pyrepr::str_repr(isa)
        ),
        value.origin.clone(),
    )
    .while_handling()
}

/// `Base.get_validated_value`: converts a rendered value to the keyword's declared type.
pub fn validated_value(
    name: &str,
    isa: Isa,
    listof: &[&str],
    required: bool,
    value: Node,
) -> Result<Node, Diagnostic> {
    let origin = value.origin.clone();
    let converted = match isa {
        Isa::Str => Value::Str(pyrepr::str(&value.value)),
        Isa::Int => match &value.value {
            Value::Int(_) | Value::Bool(_) | Value::BigInt(_) => value.value.clone(),
            Value::Float(f) if f.fract() == 0.0 && f.is_finite() => Value::Int(*f as i64),
            Value::Str(s) => match s.trim().parse::<i64>() {
                Ok(i) => Value::Int(i),
                Err(_) => match s.trim().parse::<f64>() {
                    Ok(f) if f.fract() == 0.0 && f.is_finite() => Value::Int(f as i64),
                    _ => return Err(could_not_convert(&value, "int")),
                },
            },
            _ => return Err(could_not_convert(&value, "int")),
        },
        Isa::Float => match &value.value {
            Value::Float(_) => value.value.clone(),
            Value::Int(i) => Value::Float(*i as f64),
            Value::Bool(b) => Value::Float(f64::from(u8::from(*b))),
            Value::Str(s) => match s.trim().parse::<f64>() {
                Ok(f) => Value::Float(f),
                Err(_) => return Err(could_not_convert(&value, "float")),
            },
            _ => return Err(could_not_convert(&value, "float")),
        },
        Isa::Bool => match value.value.boolean_strict().ok() {
            Some(b) => Value::Bool(b),
            None => return Err(could_not_convert(&value, "bool")),
        },
        Isa::Percent => {
            let text = match &value.value {
                Value::Str(s) => s.replace('%', ""),
                other => pyrepr::str(other),
            };
            match text.trim().parse::<f64>() {
                Ok(f) => Value::Float(f),
                Err(_) => return Err(could_not_convert(&value, "percent")),
            }
        }
        Isa::List => {
            let items = match value.value.clone() {
                Value::Null => Vec::new(),
                Value::Seq(items) => items,
                _ => vec![value.clone()],
            };
            for item in &items {
                if !listof.is_empty() && !listof.contains(&item.python_type()) {
                    let names =
                        listof.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(" or ");
                    return Err(Diagnostic::at(
                        format!(
                            "Keyword '{name}' items must be of type {names}, not '{}'.",
                            item.python_type()
                        ),
                        item.origin.clone().or(origin.clone()),
                    )
                    .parser());
                }
                if required
                    && listof == ["str"]
                    && item.as_str().is_some_and(|s| s.trim().is_empty())
                {
                    return Err(Diagnostic::at(
                        format!("Keyword '{name}' is required, and cannot have empty values."),
                        item.origin.clone().or(origin.clone()),
                    )
                    .parser());
                }
            }
            Value::Seq(items)
        }
        Isa::Dict => match &value.value {
            Value::Null => Value::Map(Mapping::new()),
            Value::Map(_) => value.value.clone(),
            other => {
                return Err(Diagnostic::at(
                    format!("{} is not a dictionary", pyrepr::repr(other)),
                    origin,
                ));
            }
        },
        Isa::Class | Isa::Any => value.value.clone(),
    };
    Ok(Node::new(converted, origin))
}

/// One keyword post-validated while the playbook loads: `raw` templated with `vars`, then
/// converted to the attribute's type, each failure under ansible's `Error processing keyword
/// 'NAME'.` (a parser error). `None` when it renders to null or is omitted (ansible then keeps
/// the default).
pub fn load_time_keyword(
    templar: &Templar,
    attr: &Attribute,
    raw: &Node,
    vars: &Mapping,
) -> Result<Option<Node>, Diagnostic> {
    let wrap = |cause: Diagnostic| {
        let message = format!("Error processing keyword '{}'.", attr.name);
        Diagnostic::caused_by(message, raw.origin.clone(), cause).parser()
    };
    let rendered = match templar.render_with_vars(raw, vars) {
        Ok(rendered) => rendered,
        // An omitted value leaves the keyword at its default (`set_to_context`).
        Err(e) if e.kind == tack_template::TemplateErrorKind::Omitted => return Ok(None),
        Err(e) => return Err(wrap(e.to_diagnostic())),
    };
    if rendered.is_null() {
        return Ok(None);
    }
    validated_value(attr.name, attr.isa, attr.listof, attr.required, rendered)
        .map(Some)
        .map_err(wrap)
}

/// Post-validates a play's keywords against `vars` (its host-independent variables).
pub fn post_validate_play(
    play: &Play,
    vars: &Mapping,
    templar: &Templar,
    loader: &tack_loader::DataLoader,
) -> Result<PlayKeywords, Diagnostic> {
    let mut values: Vec<(Keyword, Node)> = Vec::new();
    let mut argspec = None;
    for attr in ObjectKind::Play.attributes() {
        if !attr.always_post_validate || attr.is_static {
            continue;
        }
        let Some(raw) = play.attrs.get(attr.keyword) else { continue };
        // In the attribute order, after `name`, which it may take as the spec's name.
        if attr.keyword == Keyword::ValidateArgspec {
            let name = values.iter().find(|(k, _)| *k == Keyword::Name).map(|(_, n)| n);
            let name = name.map(|n| pyrepr::str(&n.value));
            argspec = crate::play_argspec::post_validate(
                play,
                raw,
                name.as_deref(),
                vars,
                templar,
                loader,
            )?;
            continue;
        }
        if let Some(value) = load_time_keyword(templar, attr, raw, vars)? {
            values.push((attr.keyword, value));
        }
    }
    let hosts_of = |n: &Node| -> Vec<String> {
        match &n.value {
            Value::Seq(items) => items.iter().map(|i| pyrepr::str(&i.value)).collect(),
            other => vec![pyrepr::str(other)],
        }
    };
    let raw_hosts = play.attrs.get(Keyword::Hosts).map(hosts_of).unwrap_or_default();
    let hosts = values
        .iter()
        .find(|(k, _)| *k == Keyword::Hosts)
        .map(|(_, v)| hosts_of(v))
        .unwrap_or_default();
    // An unnamed play is named after its (unrendered) hosts, then rendered like a name.
    let name = match values.iter().find(|(k, _)| *k == Keyword::Name) {
        Some((_, n)) => pyrepr::str(&n.value),
        None => {
            let joined = Node::new(Value::Str(raw_hosts.join(",")), None);
            templar
                .render_with_vars(&joined, vars)
                .map(|n| pyrepr::str(&n.value))
                .unwrap_or_else(|_| raw_hosts.join(","))
        }
    };
    Ok(PlayKeywords { name, hosts, values, argspec })
}
