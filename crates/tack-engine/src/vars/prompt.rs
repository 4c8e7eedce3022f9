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

/// An entry's `private`, `confirm` and `unsafe`, read as the executor reads them: strict
/// `boolean()` of each (defaults `true`, `false`, `false`), all three before anything is asked.
#[derive(Debug)]
struct Flags {
    private: bool,
    confirm: bool,
    unsafe_: bool,
}

impl Flags {
    fn of(entry: &Mapping) -> Result<Flags, Diagnostic> {
        let flag = |key: &str, default: bool| match entry.get(key) {
            None => Ok(default),
            // ansible raises an unexpected `TypeError` here (it prints a traceback and exits
            // 250); tack reports the same text as an error.
            Some(node) => node.value.boolean_strict().map_err(|e| {
                Diagnostic::new(format!("Unexpected Exception, this is probably a bug: {e}"))
            }),
        };
        Ok(Flags {
            private: flag("private", true)?,
            confirm: flag("confirm", false)?,
            unsafe_: flag("unsafe", false)?,
        })
    }
}

/// ansible's `do_var_prompt` at a terminal: `<prompt> [<default>]: `, `<prompt>: ` (the
/// prompt is the name unless given) or `input for <name>: ` (an empty one), asked with echo off unless `private: false`; with `confirm`, asked
/// again until both answers match.
fn ask(
    entry: &Mapping,
    flags: &Flags,
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
    let private = flags.private;
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
    if !flags.confirm {
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
        let flags = Flags::of(&entry)?;
        if ctx.extra_vars.get(&name).is_some() {
            continue;
        }
        callback.vars_prompt(&entry);
        let default = match entry.get("default").map(|n| &n.value) {
            Some(Value::Null) | None => None,
            Some(value) => Some(tack_yaml::pyrepr::str(value)),
        };
        let answer = if std::io::stdin().is_terminal() {
            ask(&entry, &flags, &name, default.as_deref(), play, callback)?
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
        let value = if flags.unsafe_ { Value::Unsafe(text) } else { Value::Str(text) };
        answers.insert(tack_report::result::s(&name), Node::bare(value));
    }
    let mut play = play.clone();
    for (k, v) in answers.iter() {
        play.vars.insert(k.clone(), v.clone());
    }
    Ok(Some(play))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pairs: &[(&str, Value)]) -> Mapping {
        let mut m = Mapping::new();
        for (k, v) in pairs {
            m.insert(tack_report::result::s(k), Node::bare(v.clone()));
        }
        m
    }

    #[test]
    fn flags_are_strict_booleans_with_the_executors_defaults() {
        let flags = Flags::of(&entry(&[])).unwrap();
        assert!(flags.private && !flags.confirm && !flags.unsafe_);
        let flags = Flags::of(&entry(&[("private", Value::Str(" No ".into()))])).unwrap();
        assert!(!flags.private);
        // Measured: ansible-playbook raises TypeError (an unexpected exception) for these.
        let err = Flags::of(&entry(&[("unsafe", Value::Str("maybe".into()))])).unwrap_err();
        assert_eq!(
            err.message,
            "Unexpected Exception, this is probably a bug: The value 'maybe' is not a valid \
             boolean. Valid booleans include: 0, 'y', 'true', 1, 'f', 'n', 'off', 't', '0', \
             'no', 'false', '1', 'on', 'yes'"
        );
        assert!(Flags::of(&entry(&[("private", Value::Null)])).is_err());
    }
}
