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
/// kept, each item censored when it was hidden on its own.
pub fn shown(result: &HostResult) -> Mapping {
    if !result.no_log {
        return result.data.clone();
    }
    let mut out = censored(&result.data);
    if let Some(results) = result.data.get("results") {
        let items = match &results.value {
            Value::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(n, item)| match (&item.value, result.hidden_items.get(n)) {
                    (Value::Map(map), Some(true)) => Node::bare(Value::Map(censored(map))),
                    _ => item.clone(),
                })
                .collect(),
            _ => Vec::new(),
        };
        out.insert(s("results"), Node::new(Value::Seq(items), results.origin.clone()));
    }
    out
}

/// What is left of a hidden result: the keys ansible keeps, and that it was censored.
fn censored(data: &Mapping) -> Mapping {
    let mut out = Mapping::new();
    for key in PRESERVE {
        if let Some(value) = data.get(key) {
            out.insert(s(key), value.clone());
        }
    }
    out.insert(s("censored"), Node::bare(Value::Str(CENSORED.into())));
    out
}
