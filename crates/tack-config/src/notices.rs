//! Warnings and deprecation warnings raised while loading configuration, kept in the order
//! ansible raises them and shown the way its display shows them: plain warnings first, then
//! deprecations in the order the settings were resolved.

use tack_diag::{DEPRECATION_PREAMBLE, Diagnostic};

use crate::def::Deprecation;

/// One thing configuration has to tell the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    Warning(String),
    /// `subject` is the setting (`DEFAULT_JINJA2_EXTENSIONS`) or the way it was set
    /// (`ANSIBLE_TEST_ENTRY_D`, `[testing]deprecated`).
    Deprecation {
        subject: String,
        deprecation: &'static Deprecation,
    },
}

impl Notice {
    /// A deprecation notice as the deprecation it raises (its message without the sentence
    /// on when the feature goes), by ansible-core until said otherwise.
    pub fn deprecated(&self) -> Option<tack_diag::Deprecated> {
        let Notice::Deprecation { subject, deprecation } = self else { return None };
        let msg = format!(
            "{subject} option. Reason: {}\nAlternatives: {}",
            deprecation.why, deprecation.alternatives
        );
        Some(tack_diag::Deprecated::core(msg, deprecation.version))
    }

    /// The notice as a diagnostic, its message worded as ansible words it.
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            Notice::Warning(text) => Diagnostic::new(text.clone()),
            Notice::Deprecation { subject, deprecation } => {
                let msg = format!(
                    "{subject} option. Reason: {}\nAlternatives: {}",
                    deprecation.why, deprecation.alternatives
                );
                let removal = format!(
                    "This feature will be removed from ansible-core version {}.",
                    deprecation.version
                );
                Diagnostic::new(join_sentences(&msg, &removal))
            }
        }
    }
}

/// ansible's `join_sentences`: each part stripped and ended with `.` (unless it already ends
/// with `.`, `!` or `?`), joined by a space.
fn join_sentences(first: &str, second: &str) -> String {
    let finish = |s: &str| {
        let s = s.trim();
        if s.is_empty() || s.ends_with(['.', '!', '?']) { s.to_string() } else { format!("{s}.") }
    };
    let (first, second) = (finish(first), finish(second));
    match (first.is_empty(), second.is_empty()) {
        (false, true) => first,
        (true, false) => second,
        _ => format!("{first} {second}"),
    }
}

/// Emits `notices` through tack-diag's warning channel, deprecations only when
/// `deprecations_enabled`.
pub(crate) fn emit(notices: &[Notice], deprecations_enabled: bool) {
    for notice in notices {
        match notice {
            Notice::Warning(_) => tack_diag::warn(&notice.to_diagnostic()),
            Notice::Deprecation { .. } if deprecations_enabled => {
                tack_diag::deprecate_formatted(&notice.to_diagnostic());
            }
            Notice::Deprecation { .. } => {}
        }
    }
}

/// The text [`emit`] would print in a fresh process.
pub(crate) fn render(notices: &[Notice], deprecations_enabled: bool) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::new();
    let mut push = |text: String| {
        if seen.insert(text.clone()) {
            out.push_str(&text);
        }
    };
    for notice in notices {
        match notice {
            Notice::Warning(_) => push(notice.to_diagnostic().render_warning()),
            Notice::Deprecation { .. } if deprecations_enabled => {
                push(Diagnostic::new(DEPRECATION_PREAMBLE).render_warning());
                push(notice.to_diagnostic().render_deprecation());
            }
            Notice::Deprecation { .. } => {}
        }
    }
    out
}
