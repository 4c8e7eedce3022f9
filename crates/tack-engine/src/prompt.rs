//! A play's `vars_prompt`, as ansible's playbook executor answers it before the play starts:
//! the entries templated with the play's variables, each name given with `-e` passed over,
//! and, when stdin is not a terminal, no prompt at all (ansible's warning; the value is the
//! entry's `default`, or the text `None`). The answers become play variables.
//!
//! Asking at a terminal is refused by name, as are `encrypt`, `salt` and `salt_size` (refused
//! before the run, in `refuse`). Prints only through `tack_diag`'s warning channel.

use std::io::IsTerminal;

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_yaml::{Mapping, Node, Value};

use crate::RunContext;

/// The entry options `refuse` lets through.
pub(crate) const OPTIONS: &[&str] = &["name", "prompt", "default", "private", "confirm", "unsafe"];

fn truthy(value: Option<&Node>) -> bool {
    match value.map(|n| &n.value) {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => matches!(
            tack_yaml::pyrepr::str(other).to_ascii_lowercase().as_str(),
            "yes" | "on" | "1" | "true" | "t" | "y" | "1.0"
        ),
    }
}

/// `play` with its prompted variables among its `vars`, or `None` when it prompts for none.
pub(crate) fn answered(ctx: &RunContext<'_>, play: &Play) -> Result<Option<Play>, Diagnostic> {
    if play.vars_prompt.is_empty() {
        return Ok(None);
    }
    let mut template_vars = play.vars.clone();
    for (k, v) in ctx.extra_vars.iter() {
        template_vars.insert(k.clone(), v.clone());
    }
    let mut answers = Mapping::new();
    for entry in &play.vars_prompt {
        let rendered = ctx
            .templar
            .render_with_vars(&Node::bare(Value::Map(entry.clone())), &template_vars)
            .map_err(|e| e.to_diagnostic())?;
        let Value::Map(entry) = rendered.value else { continue };
        let Some(name) = entry.get("name").map(|n| tack_yaml::pyrepr::str(&n.value)) else {
            continue;
        };
        if ctx.extra_vars.get(&name).is_some() {
            continue;
        }
        if std::io::stdin().is_terminal() {
            return Err(Diagnostic::at(
                format!(
                    "tack does not support asking for '{name}' (vars_prompt) at a terminal yet; \
                     give it with -e or run without a terminal on stdin"
                ),
                play.origin.clone(),
            ));
        }
        tack_diag::warn(&Diagnostic::new("Not prompting as we are not in interactive mode"));
        // No answer: the default, else Python's `str(None)`.
        let text = match entry.get("default").map(|n| &n.value) {
            Some(Value::Null) | None => "None".to_string(),
            Some(value) => tack_yaml::pyrepr::str(value),
        };
        let value =
            if truthy(entry.get("unsafe")) { Value::Unsafe(text) } else { Value::Str(text) };
        answers.insert(crate::result::s(&name), Node::bare(value));
    }
    let mut play = play.clone();
    for (k, v) in answers.iter() {
        play.vars.insert(k.clone(), v.clone());
    }
    Ok(Some(play))
}
