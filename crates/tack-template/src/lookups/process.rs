//! The lookups that ask the controller's process: `env` (its environment), `pipe` and `lines`
//! (a command run through `/bin/sh` in the loader's base directory).
//!
//! Commands run on the controller, never on a managed host; their output is trusted data.

use std::process::{Command, Stdio};

use minijinja::value::{Value as JValue, ValueKind};

use super::options::py_str;
use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] = &[
    Entry::new("env", env)
        .accepting_undefined()
        .refused_when_chosen("environment variable", "read"),
    Entry::new("pipe", pipe).refused_when_chosen("command", "run"),
    Entry::new("lines", lines).refused_when_chosen("command", "run"),
];

fn env(call: &Call) -> Result<Vec<JValue>, LookupError> {
    if let Some(undefined) = call.terms.iter().find(|t| t.is_undefined()) {
        return Err(LookupError::Undefined(undefined.clone()));
    }
    let default = call.kwarg("default").cloned().unwrap_or(JValue::from(""));
    let mut out = Vec::new();
    for term in &call.terms {
        // The plugin splits each term as a string: ansible hands it containers as its lazy
        // classes, which have no `split`. (A number keeps its text here, where ansible's
        // fails on `int`/`_AnsibleTaggedInt` by where it came from, which a value does not
        // say.)
        let lacks_split = match term.kind() {
            ValueKind::Seq => Some("_AnsibleLazyTemplateList"),
            ValueKind::Map => Some("_AnsibleLazyTemplateDict"),
            ValueKind::Bool => Some("bool"),
            ValueKind::None => Some("NoneType"),
            _ => None,
        };
        if let Some(class) = lacks_split {
            return Err(LookupError::failed(format!("'{class}' object has no attribute 'split'")));
        }
        let text = py_str(term);
        let name = tack_py::text::split(&text).first().copied().unwrap_or("").to_string();
        // ansible tags what it returns, the default included, with where it came from
        // (`Origin`); a default keeps its trust.
        let origin = tack_diag::Origin::described(format!(
            "<environment variable {}>",
            tack_py::repr::str_repr(&name)
        ));
        let tag = |text: &str, trusted: bool| {
            crate::vars::str_tags::tagged(
                text,
                crate::vars::str_tags::StrTags { trusted, origin: Some(origin.clone()) },
            )
        };
        match std::env::var_os(&name) {
            Some(value) => out.push(tag(&value.to_string_lossy(), false)),
            None => match default.as_str() {
                Some(text) => {
                    let trusted =
                        crate::vars::str_tags::tags_of(&default).is_some_and(|t| t.trusted);
                    out.push(tag(text, trusted));
                }
                None => {
                    // ansible's lookup names the variable when the default is a bare
                    // `undef()` (its own default marker); a hinted one keeps its hint.
                    if default.is_undefined()
                        && crate::undef_hint::get().as_deref()
                            == Some(crate::undef_hint::BARE_UNDEF)
                    {
                        crate::undef_hint::set(format!(
                            "The environment variable {} is not set.",
                            tack_py::repr::str_repr(&name)
                        ));
                    }
                    out.push(default.clone())
                }
            },
        }
    }
    Ok(out)
}

/// Runs `command` with `sh -c` in the loader's base directory: its stdout and exit status
/// (a signal's number negated, as Python's `returncode`).
fn run(call: &Call, command: &str) -> Result<(Vec<u8>, i32), LookupError> {
    // An interrupted run starts nothing more (the binary's interrupt handling).
    tack_diag::interrupt::hold_if_ending();
    let output = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(call.env.loader().basedir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| LookupError::failed(tack_py::oserror::os_error_no_name(&e)))?;
    let code = match output.status.code() {
        Some(code) => code,
        None => {
            use std::os::unix::process::ExitStatusExt;
            -output.status.signal().unwrap_or(0)
        }
    };
    Ok((output.stdout, code))
}

fn pipe(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in &call.terms {
        let command = py_str(term);
        let (stdout, code) = run(call, &command)?;
        if code != 0 {
            return Err(LookupError::failed(format!(
                "lookup_plugin.pipe({command}) returned {code}"
            )));
        }
        let text = String::from_utf8_lossy(&stdout);
        out.push(JValue::from(tack_py::text::rstrip(&text).to_string()));
    }
    Ok(out)
}

fn lines(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in &call.terms {
        let command = py_str(term);
        let (stdout, code) = run(call, &command)?;
        if code != 0 {
            return Err(LookupError::failed(format!(
                "lookup_plugin.lines({command}) returned {code}"
            )));
        }
        for line in tack_py::text::bytes_splitlines(&stdout) {
            out.push(JValue::from(String::from_utf8_lossy(line).into_owned()));
        }
    }
    Ok(out)
}
