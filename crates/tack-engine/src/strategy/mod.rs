//! The strategies tack runs, by the names a play may give them: `linear` (ansible's default),
//! `free` and `host_pinned`, each short or under `ansible.builtin.`/`ansible.legacy.`, and the
//! names of plugins that only inherit one of those (`RunFacts::external_strategies`). Any
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

    /// The strategy `name` names for a run whose plugins `inherited` are: tack's own, or the
    /// one such a plugin inherits.
    pub(crate) fn resolved(name: &str, inherited: &[crate::ExternalStrategy]) -> Option<Strategy> {
        Strategy::named(name).or_else(|| {
            let plugin = inherited.iter().find(|p| p.name == name)?;
            Strategy::named(plugin.runs_as.as_ref().ok()?)
        })
    }

    /// The play's `strategy` keyword (rendered), else the `strategy` setting, else `linear`.
    pub(crate) fn of(
        keywords: &tack_playbook::post_validate::PlayKeywords,
        facts: &crate::RunFacts,
    ) -> Strategy {
        let name = Strategy::name_of(keywords, facts.default_strategy.as_deref());
        Strategy::resolved(&name, &facts.external_strategies).unwrap_or(Strategy::Linear)
    }

    /// ansible's loader deprecates every strategy plugin not in ansible.builtin as a play
    /// loads it (after the play's banner); said once per run, as ansible dedupes it.
    pub(crate) fn deprecate_plugin(
        keywords: &tack_playbook::post_validate::PlayKeywords,
        facts: &crate::RunFacts,
    ) {
        let name = Strategy::name_of(keywords, facts.default_strategy.as_deref());
        if Strategy::named(&name).is_none()
            && facts.external_strategies.iter().any(|p| p.name == name && p.runs_as.is_ok())
        {
            tack_diag::deprecate_formatted(&Diagnostic::new(
                "Use of strategy plugins not included in ansible.builtin are deprecated and do \
                 not carry any backwards compatibility guarantees. No alternative for third \
                 party strategy plugins is currently planned. This feature will be removed \
                 from ansible-core in a future release.",
            ));
        }
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
