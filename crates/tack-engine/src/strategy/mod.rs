//! The strategies tack runs, by the names a play may give them: `linear` (ansible's default),
//! `free` and `host_pinned`, each short or under `ansible.builtin.`/`ansible.legacy.`. Any
//! other name is refused before the run (`crate::refuse`). Also the warnings ansible gives for
//! what the free strategies do not honour.

pub(crate) mod free;
pub(crate) mod free_include;
pub(crate) mod free_passes;
pub(crate) mod linear;

use tack_diag::Diagnostic;

/// How a batch's hosts go through their tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Every host in step, one task per round (`crate::strategy::linear`).
    Linear,
    /// Each host on its own, one task per pass over the batch (`crate::strategy::free_passes`).
    Free,
    /// Each host on its own, one host to its end before the next (`crate::strategy::free`).
    HostPinned,
}

impl Strategy {
    /// The strategy `name` names, if tack has it.
    pub(crate) fn named(name: &str) -> Option<Strategy> {
        match name {
            "linear" | "ansible.builtin.linear" | "ansible.legacy.linear" => Some(Strategy::Linear),
            "free" | "ansible.builtin.free" | "ansible.legacy.free" => Some(Strategy::Free),
            "host_pinned" | "ansible.builtin.host_pinned" | "ansible.legacy.host_pinned" => {
                Some(Strategy::HostPinned)
            }
            _ => None,
        }
    }

    /// The play's `strategy` keyword (rendered), else the `strategy` setting (`default`),
    /// else `linear`.
    pub(crate) fn of(
        keywords: &tack_playbook::post_validate::PlayKeywords,
        default: Option<&str>,
    ) -> Strategy {
        Strategy::named(&Strategy::name_of(keywords, default)).unwrap_or(Strategy::Linear)
    }

    /// The name of the strategy a play runs with (see [`Strategy::of`]).
    pub(crate) fn name_of(
        keywords: &tack_playbook::post_validate::PlayKeywords,
        default: Option<&str>,
    ) -> String {
        match keywords.get(tack_playbook::tables::Keyword::Strategy) {
            Some(node) => tack_yaml::pyrepr::str(&node.value),
            None => default.unwrap_or("linear").to_string(),
        }
    }

    /// `free` and `host_pinned`, which honour neither `any_errors_fatal` nor
    /// `max_fail_percentage`.
    pub(crate) fn is_free(self) -> bool {
        self != Strategy::Linear
    }
}

/// ansible's warnings for the task keywords `free` and `host_pinned` do not honour.
pub(crate) fn warn_unsupported(controls: &crate::play::env::Controls) {
    if controls.run_once {
        tack_diag::warn(&Diagnostic::new(
            "Using run_once with the free strategy is not currently supported. This task will \
             still be executed for every host in the inventory list.",
        ));
    }
    if controls.any_errors_fatal {
        tack_diag::warn(&Diagnostic::new(
            "Using any_errors_fatal with the free strategy is not supported, as tasks are \
             executed independently on each host",
        ));
    }
}
