//! The `template` lookup: a template file found in `templates/` (as every file lookup finds
//! files) rendered with the render's variables, the `template_*` variables and
//! `template_vars`, in the given delimiters; the result keeps its native type.
//!
//! What the template reads is recorded with the running render, as any nested template's.

use minijinja::value::{Value as JValue, ValueKind};
use tack_yaml::Node;

use super::files::find_file;
use super::options::{boolean, py_str, string};
use super::{Call, Entry, LookupError};
use crate::{Layer, Provenance};

pub(super) const LOOKUPS: &[Entry] = &[Entry::new("template", template).reading_files()];

/// Options ansible-core 2.21 accepts, ignores and deprecates, with the alternative its
/// deprecation names.
const DEPRECATED: &[(&str, &str)] = &[
    (
        "convert_data",
        "Jinja2 native mode is now the default and only option, which is mutually exclusive \
         with this option.",
    ),
    ("jinja2_native", "Jinja2 native mode is now the default and only option."),
];

fn deprecated(option: &str, alternative: &str) {
    tack_diag::deprecate_formatted(&tack_diag::Diagnostic::new(format!(
        "{option} option. Reason: This option is no longer used in the Ansible Core code \
         base.\nAlternatives: {alternative} This feature will be removed from lookup plugin \
         'template' in ansible-core version 2.23."
    )));
}

fn template(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut syntax: Vec<(String, String)> = Vec::new();
    let mut extra: Vec<(String, Node)> = Vec::new();
    for (key, value) in &call.kwargs {
        match key.as_str() {
            "variable_start_string"
            | "variable_end_string"
            | "comment_start_string"
            | "comment_end_string" => syntax.push((key.clone(), string(value))),
            "trim_blocks" => {
                let flag = boolean(value, true);
                syntax.push((key.clone(), if flag { "True" } else { "False" }.to_string()));
            }
            "template_vars" => {
                if value.kind() != ValueKind::Map {
                    return Err(LookupError::failed(format!(
                        "Invalid type for configuration option setting: template_vars : {}",
                        py_str(value)
                    )));
                }
                for k in value.try_iter()? {
                    let v = value.get_item(&k)?;
                    let node = crate::value::to_node(&v)?;
                    // The values are data the caller computed; they are not templates again.
                    extra.push((py_str(&k), untemplated(node)));
                }
            }
            name => {
                // Native mode is the only one; these are accepted, ignored and deprecated.
                if let Some((option, alternative)) = DEPRECATED.iter().find(|(o, _)| *o == name) {
                    deprecated(option, alternative);
                }
            }
        }
    }
    let templar = call.env.templar();
    let mut out = Vec::new();
    for term in &call.terms {
        let name = py_str(term);
        let found = find_file(call, "templates", &name, true)?;
        super::files::note_found("File lookup using", found.as_deref(), "as file");
        let Some(path) = found else {
            return Err(LookupError::failed(format!(
                "the template file {name} could not be found for the lookup"
            )));
        };
        // What the file raises (a deprecation) points at the file, as the template action's.
        let at = tack_diag::Origin::file(std::sync::Arc::from(tack_py::path::abspath(&path)));
        let value = crate::engine::active::at_origin(Some(at), || {
            crate::engine::template_file::render_for_lookup(
                &templar.engine(),
                &path,
                &name,
                call.env.scope(),
                &syntax,
                layer(&extra),
            )
        })?;
        out.push(value);
    }
    Ok(out)
}

fn layer(vars: &[(String, Node)]) -> Layer {
    let mut layer = Layer::new();
    for (name, node) in vars {
        layer.insert(name.clone(), node.clone(), Provenance::Trusted);
    }
    layer
}

fn untemplated(node: Node) -> Node {
    use tack_yaml::Value;
    let value = match node.value {
        Value::Str(s) if crate::is_possibly_template(&s) => Value::Unsafe(s),
        Value::Seq(items) => Value::Seq(items.into_iter().map(untemplated).collect()),
        Value::Map(m) => {
            let mut out = tack_yaml::Mapping::new();
            for (k, v) in m.iter() {
                out.insert(k.clone(), untemplated(v.clone()));
            }
            Value::Map(out)
        }
        other => other,
    };
    Node::new(value, node.origin)
}
