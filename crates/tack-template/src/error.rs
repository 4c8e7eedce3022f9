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
}

impl TemplateError {
    pub fn new(kind: TemplateErrorKind, message: impl Into<String>) -> TemplateError {
        TemplateError { kind, message: message.into(), origin: None, unavailable: Vec::new() }
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

    /// The error as ansible's `[ERROR]:` block (exit code 1, a general error).
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::at(self.message.clone(), self.origin.clone())
    }
}

/// ansible's message for a value that is entirely `omit` where a value is required.
pub(crate) const OMITTED_MESSAGE: &str = "A template was resolved to an Omit scalar.";
