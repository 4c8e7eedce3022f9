//! [`TemplateError`]: a render that failed, in ansible-core's words.

use tack_diag::{Diagnostic, Origin};

/// What kind of failure a [`TemplateError`] is; callers branch on it (an omitted value removes
/// a task argument, an undefined variable in a loop's terms is its own task error, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateErrorKind {
    /// A variable, attribute or key that does not exist (ansible's `AnsibleUndefinedVariable`).
    Undefined,
    /// The template does not parse (`AnsibleTemplateSyntaxError`).
    Syntax,
    /// The whole value is `omit` (`AnsibleValueOmittedError`): the caller drops the key.
    Omitted,
    /// A conditional that is empty, not a string, or not boolean (`AnsibleBrokenConditionalError`).
    BrokenConditional,
    /// A string that is not trusted was asked to be evaluated as an expression.
    Untrusted,
    /// Anything else that failed while rendering (`AnsibleTemplateError`).
    Render,
}

/// A template that could not be rendered. `message` is what ansible prints after `[ERROR]: `.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct TemplateError {
    pub kind: TemplateErrorKind,
    pub message: String,
    /// Where the template was written, when known.
    pub origin: Option<Origin>,
    /// Plan mode: the producers of the unavailable values the render read before it failed
    /// (sorted). A render that failed after reading a value that does not exist yet is
    /// deferred, not an error; one that failed first on something else stays an error.
    pub unavailable: Vec<std::sync::Arc<str>>,
    /// The text the error is about, shown under `Origin: <unknown>` when it has no origin
    /// (a string a template built, say).
    pub subject: Option<String>,
    /// The failure in a variable's template the render read (`x: "{{ undef }}"` read by
    /// `msg: "{{ x }}"`): ansible shows it there, under the rendered template's position.
    pub inner: Option<InnerFailure>,
}

/// A failure in a variable's template, where it was written.
#[derive(Debug, Clone)]
pub struct InnerFailure {
    pub origin: Origin,
    /// The template's text, shown under a position that is not a file's (`<CLI option
    /// '-e'>`).
    pub source: String,
    /// What failed there (the end of the error's own message).
    pub message: String,
}

impl TemplateError {
    pub fn new(kind: TemplateErrorKind, message: impl Into<String>) -> TemplateError {
        TemplateError {
            kind,
            message: message.into(),
            origin: None,
            unavailable: Vec::new(),
            subject: None,
            inner: None,
        }
    }

    pub fn at(mut self, origin: Option<Origin>) -> TemplateError {
        if self.origin.is_none() {
            self.origin = origin;
        }
        self
    }

    /// This error, noting the unavailable values its render had read.
    pub(crate) fn having_read(mut self, read: &crate::ProvenanceSet) -> TemplateError {
        self.unavailable = read.unavailable().map(std::sync::Arc::from).collect();
        self
    }

    pub fn is_undefined(&self) -> bool {
        self.kind == TemplateErrorKind::Undefined
    }

    pub fn is_omitted(&self) -> bool {
        self.kind == TemplateErrorKind::Omitted
    }

    /// The error as ansible's `[ERROR]:` block (exit code 1, a general error), at the
    /// variable's template it happened in when that is not the rendered one (a caller that
    /// wraps it under the rendered template's position then shows both, as ansible does).
    pub fn to_diagnostic(&self) -> Diagnostic {
        if let Some(inner) = &self.inner {
            let mut at = Diagnostic::at(inner.message.clone(), Some(inner.origin.clone()));
            if inner.origin.path.is_none() {
                at.value_repr = Some(inner.source.as_str().into());
            }
            // A message that prefaces the inner one (`Error while evaluating conditional:
            // ...`) is its own segment at the rendered template.
            return match self.message.strip_suffix(inner.message.as_str()) {
                Some(preface) if !preface.is_empty() => Diagnostic::caused_by(
                    format!("{}.", preface.trim_end_matches([':', ' ', '.'])),
                    self.origin.clone(),
                    at,
                ),
                _ => at,
            };
        }
        let diag = match (&self.origin, &self.subject) {
            (None, Some(subject)) => Diagnostic::about_value(self.message.clone(), subject),
            _ => Diagnostic::at(self.message.clone(), self.origin.clone()),
        };
        match self.kind {
            TemplateErrorKind::Untrusted => diag.with_help(UNTRUSTED_HELP),
            TemplateErrorKind::BrokenConditional => diag.with_help(BROKEN_CONDITIONAL_HELP),
            TemplateErrorKind::Omitted => diag.with_help(OMITTED_HELP),
            _ => diag,
        }
    }
}

/// The help ansible's `TemplateTrustCheckFailedError` carries.
pub const UNTRUSTED_HELP: &str = "Templates and expressions must be defined by trusted sources such as \
     playbooks or roles, not untrusted sources such as module results.";

/// The help ansible's `AnsibleBrokenConditionalError` carries.
pub(crate) const BROKEN_CONDITIONAL_HELP: &str = "Broken conditionals can be temporarily allowed with the \
     `ALLOW_BROKEN_CONDITIONALS` configuration option.";

/// ansible's message for a value that is entirely `omit` where a value is required.
pub(crate) const OMITTED_MESSAGE: &str = "A template was resolved to an Omit scalar.";

/// The help ansible's `AnsibleValueOmittedError` carries.
const OMITTED_HELP: &str = "Callers must be prepared to handle this value. This is most likely a \
     bug in the code requesting templating.";
