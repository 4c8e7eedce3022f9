//! The boundary between one host's action and the run: a panic inside an action (a bug of
//! tack's) becomes that host's failed result, so the other hosts and later tasks go on.
//! Owns nothing else; what the action does is `tack_actions`'.

use tack_actions::{self as actions, ActionOutput};
use tack_diag::Diagnostic;

/// `run`'s output, or, when it panics (a bug of tack's), a failed result saying so: one
/// host's action never takes the whole run down.
pub(super) fn contained(
    run: impl FnOnce() -> ActionOutput,
    origin: Option<tack_diag::Origin>,
) -> ActionOutput {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|payload| {
        let said = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        actions::errored(Diagnostic::at(
            format!("Task failed: tack's action failed unexpectedly (a bug): {said}"),
            origin,
        ))
    })
}

#[cfg(test)]
mod contained_tests {
    use super::*;

    #[test]
    fn a_panicking_action_is_a_failed_result() {
        let out = contained(|| panic!("the action broke"), None);
        let msg = out.error.as_ref().map(|d| d.message.clone()).unwrap_or_default();
        assert_eq!(msg, "Task failed: tack's action failed unexpectedly (a bug): the action broke");
    }
}
