//! ansible's `boolean()` (`ansible.module_utils.parsing.convert_bool`): the words it takes as
//! true and false, how it normalises a string before looking it up, what its strict form
//! refuses and the `TypeError` text it refuses with.
//!
//! Every site that reproduces `boolean()` calls this module: configuration settings, playbook
//! keywords, module and action arguments, lookup options, `vars_prompt` flags, `truthy`/
//! `falsy` with `convert_bool`. Two rules that look alike are not this one and live with
//! their owners: YAML 1.1's `yes`/`on` booleans (`tack_yaml`'s resolver) and the Jinja `bool`
//! filter's shorter word lists (`tack_template`).
//!
//! ```
//! use tack_py::boolean::{Input, loose, strict};
//! assert_eq!(strict(Input::Text(" Yes ")), Some(true));
//! assert_eq!(strict(Input::Text("1.0")), None);
//! assert!(!loose(Input::Text("maybe")));
//! assert!(loose(Input::Float(1.0)));
//! ```

/// The strings in `BOOLEANS_TRUE`.
pub const TRUE_WORDS: [&str; 6] = ["y", "yes", "on", "1", "true", "t"];

/// The strings in `BOOLEANS_FALSE`.
pub const FALSE_WORDS: [&str; 6] = ["n", "no", "off", "0", "false", "f"];

/// `', '.join(repr(i) for i in BOOLEANS)`: the frozenset's iteration order, which depends on
/// the string hash seed; this is its order under `PYTHONHASHSEED=0`, the seed every recording
/// runs with (ansible's own order changes from run to run without one).
pub const LISTED: &str =
    "0, 'y', 'true', 1, 'f', 'n', 'off', 't', '0', 'no', 'false', '1', 'on', 'yes'";

/// A value as `boolean()` tells values apart. Callers map their own value types onto it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Input<'a> {
    /// A Python `bool`: returned as it is.
    Bool(bool),
    /// An `int` that fits in 64 bits (a larger one is [`Input::Other`]: it is neither 0 nor 1).
    Int(i64),
    /// A `float`.
    Float(f64),
    /// A `str` (or `bytes` decoded as UTF-8): lower-cased and stripped, then looked up.
    Text(&'a str),
    /// Anything else (`None`, a list, a dict, a date): in neither set.
    Other,
}

/// `boolean(value, strict=True)`: `None` where ansible raises `TypeError` (see
/// [`invalid_message`] for its text).
pub fn strict(value: Input<'_>) -> Option<bool> {
    match value {
        Input::Bool(b) => Some(b),
        Input::Int(1) => Some(true),
        Input::Int(0) => Some(false),
        Input::Float(1.0) => Some(true),
        Input::Float(0.0) => Some(false),
        Input::Text(s) => word(&normalize(s)),
        Input::Int(_) | Input::Float(_) | Input::Other => None,
    }
}

/// `boolean(value, strict=False)`: true only for a member of `BOOLEANS_TRUE`, false for
/// anything else.
pub fn loose(value: Input<'_>) -> bool {
    strict(value) == Some(true)
}

/// Whether `value` is itself a member of `BOOLEANS_TRUE` (`truth`) or `BOOLEANS_FALSE`, with
/// no normalising: the test `AnsibleModule` applies to a parameter's `choices` when YAML
/// turned a `yes` into `True` (`BOOLEANS_TRUE.intersection(choices)`).
pub fn is_member(value: Input<'_>, truth: bool) -> bool {
    match value {
        Input::Bool(b) => b == truth,
        Input::Int(i) => i == i64::from(truth),
        Input::Float(f) => f == f64::from(u8::from(truth)),
        Input::Text(s) => word(s) == Some(truth),
        Input::Other => false,
    }
}

/// The `TypeError` strict `boolean()` raises, for a value whose `str()` is `text`.
pub fn invalid_message(text: &str) -> String {
    format!("The value '{text}' is not a valid boolean. Valid booleans include: {LISTED}")
}

/// `s.lower().strip()`, the form a string is looked up in.
fn normalize(s: &str) -> String {
    crate::text::strip(&s.to_lowercase()).to_string()
}

/// Which set an already normalised word is in.
fn word(s: &str) -> Option<bool> {
    if TRUE_WORDS.contains(&s) {
        Some(true)
    } else if FALSE_WORDS.contains(&s) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Broader cases, recorded from ansible-core under its own Python, are in
    // `tests/corpus/boolean.json`.

    #[test]
    fn members_are_not_normalised() {
        assert!(is_member(Input::Text("yes"), true));
        assert!(!is_member(Input::Text("Yes"), true));
        assert!(is_member(Input::Float(0.0), false));
        assert!(!is_member(Input::Text("no"), true));
    }
}
