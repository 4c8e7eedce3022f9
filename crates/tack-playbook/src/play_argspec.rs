//! A play's `validate_argspec` (ansible 2.21's playbook argument specs): the keyword read as
//! `Play._post_validate_validate_argspec` reads it (a bool, or a string naming the spec; the
//! play's name when true), the spec found in the playbook's meta file beside it
//! (`site.yml` → `site.meta.yml`, `.yaml`, `.json`, then no extension), and the implicit task
//! that checks the play's variables against it once facts are gathered (`PlayIterator`'s
//! validation step).
//!
//! Reads the meta file through the caller's loader; runs nothing.

use std::path::{Path, PathBuf};

use tack_diag::{Diagnostic, Origin};
use tack_loader::DataLoader;
use tack_template::{Templar, TemplateErrorKind};
use tack_yaml::{Mapping, Node, Value, pyrepr};

use crate::ast::Play;
use crate::compile::CompiledBlock;

/// The argument spec a play validates against.
#[derive(Debug, Clone)]
pub struct PlayArgspec {
    /// The spec's name under `argument_specs` (the keyword's string, or the play's name).
    pub name: String,
    /// The meta file it was found in.
    pub path: PathBuf,
    /// The spec's `options`.
    pub options: Node,
}

/// `validate_argspec` post-validated: `raw` templated with `vars` when it is a string (an
/// omitted value turns validation off), then the spec it names looked up. `play_name` is
/// the play's rendered `name` when the play wrote one. Every failure is ansible's parser error
/// under `Error processing keyword 'validate_argspec'.`
pub fn post_validate(
    play: &Play,
    raw: &Node,
    play_name: Option<&str>,
    vars: &Mapping,
    templar: &Templar,
    loader: &DataLoader,
) -> Result<Option<PlayArgspec>, Diagnostic> {
    let wrap = |cause: Diagnostic| {
        let message = "Error processing keyword 'validate_argspec'.";
        let mut outer = Diagnostic::caused_by(message, raw.origin.clone(), cause).parser();
        // A value YAML gave as a bool carries no position in ansible: it shows its repr.
        if !matches!(raw.value, Value::Str(_)) {
            outer.origin = Some(Origin::described("<unknown>"));
            outer.value_repr = Some(pyrepr::repr(&raw.value).into_boxed_str());
        }
        outer
    };
    let value = match &raw.value {
        Value::Str(_) => match templar.render_with_vars(raw, vars) {
            Ok(rendered) => rendered.value,
            Err(e) if e.kind == TemplateErrorKind::Omitted => Value::Bool(false),
            Err(e) => return Err(wrap(e.to_diagnostic())),
        },
        other => other.clone(),
    };
    let name = match &value {
        Value::Bool(false) => return Ok(None),
        Value::Str(s) if s.is_empty() => return Ok(None),
        Value::Str(s) => Some(s.clone()),
        Value::Bool(true) => play_name.filter(|n| !n.is_empty()).map(str::to_string),
        other => {
            return Err(wrap(Diagnostic::at(
                format!(
                    "validate_argspec must be a boolean or string, not <class '{}'>",
                    Node::bare(other.clone()).python_type()
                ),
                raw.origin.clone(),
            )));
        }
    };
    // ansible plays without a file (ad hoc, the console) never validate.
    let Some(playbook) = play.origin.as_ref().and_then(|o| o.path.clone()) else { return Ok(None) };
    let candidates = candidates(&playbook, loader.yaml_extensions());
    let found = candidates.iter().find(|p| p.is_file());
    let mut problems = Vec::new();
    if name.is_none() {
        problems.push(
            "A play name is required when validate_argspec is True. Alternatively, set \
             validate_argspec to the name of an argument spec."
                .to_string(),
        );
    }
    if found.is_none() {
        let listed: Vec<String> =
            candidates.iter().map(|p| format!("  - {}", p.display())).collect();
        problems
            .push(format!("A playbook meta file is required. Considered:\n{}", listed.join("\n")));
    }
    let (Some(name), Some(path)) = (name, found) else {
        return Err(wrap(Diagnostic::at(problems.join(" "), play.origin.clone())));
    };
    let data = loader.load_file(path).map_err(|e| wrap(e.to_diagnostic()))?;
    // The innermost mapping reached is what ansible points at when the spec is missing.
    let mut reached = &data;
    let mut options = None;
    if let Some(specs) = data.as_map().and_then(|m| m.get("argument_specs")) {
        reached = specs;
        if let Some(spec) = specs.as_map().and_then(|m| m.get(name.as_str())) {
            reached = spec;
            options = spec.as_map().and_then(|m| m.get("options")).filter(|o| o.as_map().is_some());
        }
    }
    let Some(options) = options else {
        let mut expected = Mapping::new();
        let mut spec = Mapping::new();
        spec.insert(str_node("options"), Node::bare(Value::Map(Mapping::new())));
        expected.insert(str_node(&name), Node::bare(Value::Map(spec)));
        let mut top = Mapping::new();
        top.insert(str_node("argument_specs"), Node::bare(Value::Map(expected)));
        let shown = tack_yaml::dump(&Value::Map(top), &tack_yaml::DumpOptions::inventory())
            .unwrap_or_default();
        // ansible's message ends where the dump's last line does.
        let shown = shown.trim_end();
        return Err(wrap(Diagnostic::at(
            format!(
                "No argument spec named '{name}' in {}. Minimally expected:\n{shown}",
                path.display()
            ),
            reached.origin.clone(),
        )));
    };
    Ok(Some(PlayArgspec { name, path: path.clone(), options: options.clone() }))
}

/// `_metadata_candidate_paths`: the playbook's path without its YAML extension, then
/// `.meta` with each extension and with none.
fn candidates(playbook: &Path, extensions: &[String]) -> Vec<PathBuf> {
    let text = playbook.to_string_lossy();
    let stem = match extensions.iter().any(|e| text.ends_with(e.as_str())) {
        true => text.rsplit_once('.').map_or(text.as_ref(), |(stem, _)| stem),
        false => text.as_ref(),
    };
    extensions
        .iter()
        .map(String::as_str)
        .chain([""])
        .map(|ext| PathBuf::from(format!("{stem}.meta{ext}")))
        .collect()
}

fn str_node(text: &str) -> Node {
    Node::bare(Value::Str(text.to_string()))
}

/// The implicit validation task, as `PlayIterator` builds it: `validate_argument_spec` with
/// the spec's options and the play's context.
pub fn validation_block(spec: &PlayArgspec, play: &Play) -> CompiledBlock {
    let s = str_node;
    let mut context = Mapping::new();
    context.insert(s("type"), s("play"));
    context.insert(s("name"), s(&spec.name));
    context.insert(s("argument_spec_name"), s(&spec.name));
    context.insert(s("path"), s(&spec.path.to_string_lossy()));
    let mut args = Mapping::new();
    args.insert(s("argument_spec"), spec.options.clone());
    args.insert(s("validate_args_context"), Node::bare(Value::Map(context)));
    let name = format!("Validating arguments against arg spec {}", spec.name);
    crate::setup_block::setup_task_block(
        play,
        &name,
        "ansible.builtin.validate_argument_spec",
        args,
    )
}
