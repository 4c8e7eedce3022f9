//! `no_log`: which results are hidden and what is left of them when shown. A hidden result
//! keeps only the keys ansible preserves (`attempts`, `changed`, `retries`, warnings,
//! deprecations, exception) and says it was censored; what `register` stores stays the real
//! result. Deciding is the executor's (per run, per loop item); hiding is the callback's.
//!
//! Nothing here prints; error blocks are not censored (ansible shows them whole too). Whether a
//! task's result is hidden is decided by the run loop, which renders the task's `no_log`.

use tack_yaml::{Mapping, Node, Value};

use crate::result::{HostResult, s};

/// The keys a censored result keeps.
const PRESERVE: &[&str] =
    &["attempts", "changed", "deprecations", "exception", "retries", "warnings"];

/// The text that replaces a hidden result.
pub const CENSORED: &str =
    "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

/// The loop label shown for a hidden item.
pub const CENSORED_ITEM: &str = "(censored due to no_log)";

/// The result as a callback may show it: censored when it is hidden, with a loop's `results`
/// kept (each item censors itself).
pub fn shown(result: &HostResult) -> Mapping {
    if !result.no_log {
        return result.data.clone();
    }
    let mut out = Mapping::new();
    for key in PRESERVE {
        if let Some(value) = result.data.get(key) {
            out.insert(s(key), value.clone());
        }
    }
    out.insert(s("censored"), Node::bare(Value::Str(CENSORED.into())));
    if let Some(results) = result.data.get("results") {
        out.insert(s("results"), results.clone());
    }
    out
}
