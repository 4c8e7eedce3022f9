//! The lookups over the render's own variables: `vars` (a variable by name, its provenance
//! recorded through [`crate::value::RenderEnv::read`]) and `varnames` (the names matching a
//! regular expression).
//!
//! They read variables only through the running render, so what they read is recorded.

use minijinja::value::Value as JValue;

use super::options::py_str;
use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] = &[Entry::new("vars", vars), Entry::new("varnames", varnames)];

fn vars(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let default = call.kwarg("default").filter(|v| !v.is_none());
    let mut out = Vec::new();
    for term in &call.terms {
        let Some(name) = term.as_str() else {
            return Err(LookupError::failed(format!(
                "Variable name must be 'str' not {}.",
                tack_yaml::pyrepr::str_repr(crate::filters::pyval::type_name(term))
            )));
        };
        match call.env.read(name) {
            Some(value) => out.push(value),
            None => match default {
                Some(d) => out.push(d.clone()),
                // ansible's `undef` with its words, for when the value is used.
                None => {
                    let hint = format!(
                        "No variable named {} was found.",
                        tack_yaml::pyrepr::str_repr(name)
                    );
                    crate::engine::active::undef_made(Some(hint));
                    out.push(JValue::UNDEFINED)
                }
            },
        }
    }
    Ok(out)
}

fn varnames(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let names: Vec<String> = call.env.scope().names().into_iter().map(str::to_string).collect();
    let mut out = Vec::new();
    for term in &call.terms {
        let Some(pattern) = term.as_str() else {
            return Err(LookupError::failed(format!(
                "Invalid setting identifier, \"{}\" is not a string, it is a {}",
                py_str(term),
                crate::filters::pyval::class_repr(term)
            )));
        };
        let re = crate::filters::regex::compile_python(pattern).map_err(|e| {
            LookupError::failed(format!("Unable to use \"{pattern}\" as a search parameter: {e}"))
        })?;
        for name in &names {
            if re.is_match(name).unwrap_or(false) {
                out.push(JValue::from(name.as_str()));
            }
        }
    }
    Ok(out)
}
