//! Python's behaviours on template values, as ansible users rely on them: methods of `str`,
//! `list` and `dict` (including the in-place ones ansible 2.21 allows), `str()`/`repr()`, and
//! Jinja2 builtins where minijinja's differ from Jinja2's.
//!
//! Formatting rules for numbers and strings come from `tack_yaml::pyrepr`; this module must
//! not grow its own copy of them.

pub(crate) mod methods;
pub(crate) mod percent;
pub(crate) mod repr;
pub(crate) mod strings;

use minijinja::Environment;

/// Registers the Jinja2 builtins tack provides itself.
pub(crate) fn register(env: &mut Environment<'static>) {
    let _ = env;
}
