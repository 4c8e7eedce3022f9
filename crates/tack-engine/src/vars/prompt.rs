//! A play's `vars_prompt`, as ansible's playbook executor answers it before the play starts:
//! the entries templated with the play's variables, each name given with `-e` passed over,
//! and, when stdin is not a terminal, no prompt at all (ansible's warning; the value is the
//! entry's `default`, or the text `None`). The answers become play variables.
//!
//! At a terminal each entry is asked as ansible asks it (`terminal`); `encrypt`, `salt` and
//! `salt_size` are refused by name before the run, in `refuse`. Prints only the prompts,
//! confirm's mismatch line and `tack_diag`'s warning.

use std::io::IsTerminal;

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_yaml::{Mapping, Node, Value};

use crate::context::RunContext;

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

/// ansible's `do_var_prompt` at a terminal: `<prompt> [<default>]: `, `<prompt>: ` (the
/// prompt is the name unless given) or `input for <name>: ` (an empty one), asked with echo off unless `private: false`; with `confirm`, asked
/// again until both answers match.
fn ask(
    entry: &Mapping,
    name: &str,
    default: Option<&str>,
    play: &Play,
    callback: &mut dyn tack_report::Callback,
) -> Result<Option<String>, Diagnostic> {
    // The executor's `var.get("prompt", name)`: only an empty prompt asks "input for".
    let prompt =
        entry.get("prompt").map_or_else(|| name.to_string(), |n| tack_yaml::pyrepr::str(&n.value));
    let msg = match (Some(prompt).filter(|p| !p.is_empty()), default) {
        (Some(p), Some(d)) => format!("{p} [{d}]: "),
        (Some(p), None) => format!("{p}: "),
        (None, _) => format!("input for {name}: "),
    };
    // `private` is on unless set false.
    let private = entry.get("private").is_none_or(|_| truthy(entry.get("private")));
    let once = |msg: &str| {
        let asked =
            // The answer becomes a play variable, which is plain text like any other.
            if private {
                tack_actions::terminal::getpass(msg).map(|typed| typed.map(|t| t.to_string()))
            } else {
                tack_actions::terminal::input(msg)
            };
        asked.map_err(|e| {
            Diagnostic::at(
                format!("cannot ask for '{name}' at the terminal: {e}"),
                play.origin.clone(),
            )
        })
    };
    if !truthy(entry.get("confirm")) {
        return once(&msg);
    }
    loop {
        let first = once(&msg)?;
        let second = once(&format!("confirm {msg}"))?;
        if first == second {
            return Ok(first);
        }
        callback.display("***** VALUES ENTERED DO NOT MATCH ****");
    }
}

/// `play` with its prompted variables among its `vars`, or `None` when it prompts for none.
/// What ansible's display shows meanwhile (answers that do not match) goes to `callback`.
pub(crate) fn answered(
    ctx: &RunContext<'_>,
    play: &Play,
    callback: &mut dyn tack_report::Callback,
) -> Result<Option<Play>, Diagnostic> {
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
        let default = match entry.get("default").map(|n| &n.value) {
            Some(Value::Null) | None => None,
            Some(value) => Some(tack_yaml::pyrepr::str(value)),
        };
        let answer = if std::io::stdin().is_terminal() {
            ask(&entry, &name, default.as_deref(), play, callback)?
        } else {
            tack_diag::warn(&Diagnostic::new("Not prompting as we are not in interactive mode"));
            None
        };
        // No answer (or an empty one): the default, else what was typed, else Python's
        // `str(None)`.
        let text = match (answer, default) {
            (Some(typed), _) if !typed.is_empty() => typed,
            (_, Some(default)) => default,
            (Some(typed), None) => typed,
            (None, None) => "None".to_string(),
        };
        let value =
            if truthy(entry.get("unsafe")) { Value::Unsafe(text) } else { Value::Str(text) };
        answers.insert(tack_report::result::s(&name), Node::bare(value));
    }
    let mut play = play.clone();
    for (k, v) in answers.iter() {
        play.vars.insert(k.clone(), v.clone());
    }
    Ok(Some(play))
}
