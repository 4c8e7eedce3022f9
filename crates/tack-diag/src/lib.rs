//! Source positions and the error blocks that point at them.
//!
//! Every value tack loads from a file remembers where it came from (an [`Origin`]), so that an
//! error raised many layers later can still print ansible-core's block:
//!
//! ```text
//! [ERROR]: 'serail' is not a valid attribute for a Play
//! Origin: /tmp/ap/site.yml:3:3
//!
//! 1 - name: first play
//! 2   hosts: all
//! 3   serail: 1
//!     ^ column 3
//! ```
//!
//! This crate owns that vocabulary, the chain of causes an error carries, and the rendering of
//! the block; it knows nothing about YAML, inventories or playbooks, and its only tack
//! dependency is `tack_py` (for `textwrap.shorten` of a value shown without a file). The excerpt is read from the
//! file when the error is shown, as ansible-core does, so holding an origin costs one shared path
//! and two numbers.

pub mod color;
mod deprecation;
pub mod display_log;
mod excerpt;
pub mod interrupt;
mod render;
mod warnings;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use deprecation::{Deprecated, Deprecator};
pub use excerpt::excerpt;
pub use warnings::{
    DEPRECATION_PREAMBLE, RecordedDeprecation, deprecate, deprecate_formatted, deprecate_with,
    error as show_error, forget_shown as forget_shown_warnings, recording_deprecations,
    set_deprecations_enabled, set_sink as set_warning_sink, show_recorded, warn,
};

/// Where a value was written: a file (or a description such as `<CLI option '-e'>`), and a
/// 1-based line and column where known (0 when not).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    pub path: Option<Arc<Path>>,
    pub description: Option<Arc<str>>,
    pub line: u32,
    pub col: u32,
}

impl Origin {
    /// A position in a file.
    pub fn new(path: Arc<Path>, line: u32, col: u32) -> Origin {
        Origin { path: Some(path), description: None, line, col }
    }

    /// A whole file, without a position.
    pub fn file(path: Arc<Path>) -> Origin {
        Origin { path: Some(path), description: None, line: 0, col: 0 }
    }

    /// A source that is not a file, named as ansible names it (`<CLI option '-e'>`).
    pub fn described(description: impl Into<Arc<str>>) -> Origin {
        Origin { path: None, description: Some(description.into()), line: 0, col: 0 }
    }
}

impl fmt::Display for Origin {
    /// `path:line:col`, dropping unknown parts from the right, then ` (description)` when both a
    /// path and a description are known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, &self.description) {
            (Some(path), _) => write!(f, "{}", path.display())?,
            (None, Some(desc)) => f.write_str(desc)?,
            (None, None) => f.write_str("<unknown>")?,
        }
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.col > 0 {
                write!(f, ":{}", self.col)?;
            }
        }
        if let (Some(_), Some(desc)) = (&self.path, &self.description) {
            write!(f, " ({desc})")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Which of ansible-core's error families an error belongs to; it decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ErrorClass {
    /// `AnsibleError`: exit code 1.
    #[default]
    General,
    /// `AnsibleParserError` (YAML, bad keywords, malformed plays): exit code 4.
    Parser,
    /// `AnsibleOptionsError` (bad command-line options or settings): exit code 5.
    Options,
    /// An exception ansible-core did not expect (its `Unexpected Exception, this is probably
    /// a bug`, Python's `RecursionError` among them): exit code 250.
    Unexpected,
}

impl ErrorClass {
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorClass::General => 1,
            ErrorClass::Parser => 4,
            ErrorClass::Options => 5,
            ErrorClass::Unexpected => 250,
        }
    }
}

/// An error or warning as ansible-core 2.21 reports it: a message, where it happened, help
/// text, and the error that caused it (ansible's `raise ... from ...` chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub class: ErrorClass,
    pub message: String,
    pub origin: Option<Origin>,
    /// Text ansible attaches to some errors (the "For example: ..." hint after YAML errors).
    pub help: Option<String>,
    pub cause: Option<Box<Diagnostic>>,
    /// For an error about a value that has no position (ansible's untagged objects): the
    /// value's `repr()`, shown under `Origin: <unknown>` instead of a source excerpt.
    pub value_repr: Option<Box<str>>,
    /// The error was raised while handling another exception that ansible does not show
    /// (Python's implicit exception context). Such an error never folds into the message of
    /// the error it causes; it keeps its own segment.
    pub raised_while_handling: bool,
    /// The errors of an exception group (Python's `ExceptionGroup`), each shown in a framed
    /// sub-event under the group's message. Boxed: diagnostics travel inside results, and
    /// groups are rare.
    pub sub_events: Option<Box<Vec<Diagnostic>>>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(message, None)
    }

    pub fn at(message: impl Into<String>, origin: Option<Origin>) -> Diagnostic {
        Diagnostic {
            class: ErrorClass::General,
            message: message.into(),
            origin,
            help: None,
            cause: None,
            value_repr: None,
            raised_while_handling: false,
            sub_events: None,
        }
    }

    /// Where ansible-core runs out of Python's recursion limit (an import that imports
    /// itself, includes nested without end): its `Unexpected Exception, this is probably a
    /// bug: maximum recursion depth exceeded` (exit code 250), with what went round at
    /// `origin` in `help` where ansible prints Python's traceback.
    pub fn recursion(origin: Option<Origin>, help: impl Into<String>) -> Diagnostic {
        let cause = Diagnostic::at("maximum recursion depth exceeded", origin).with_help(help);
        Diagnostic::caused_by("Unexpected Exception, this is probably a bug.", None, cause)
            .with_class(ErrorClass::Unexpected)
    }

    /// Marks the error as one of ansible's parser errors (exit code 4).
    pub fn parser(self) -> Diagnostic {
        self.with_class(ErrorClass::Parser)
    }

    pub fn with_class(mut self, class: ErrorClass) -> Diagnostic {
        self.class = class;
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Wraps `cause` under a new message, as ansible's `raise Outer(...) from cause` does. The
    /// class is the cause's unless set afterwards.
    pub fn caused_by(
        message: impl Into<String>,
        origin: Option<Origin>,
        cause: Diagnostic,
    ) -> Self {
        Diagnostic {
            class: cause.class,
            message: message.into(),
            origin,
            help: None,
            cause: Some(Box::new(cause)),
            value_repr: None,
            raised_while_handling: false,
            sub_events: None,
        }
    }

    /// An error about a value with no position: `Origin: <unknown>` and the value's repr.
    pub fn about_value(message: impl Into<String>, value_repr: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::at(message, Some(Origin::described("<unknown>")));
        d.value_repr = Some(value_repr.into().into_boxed_str());
        d
    }

    /// An exception group's error: `message` with Python's count of its errors appended
    /// (`(1 sub-exception)`), each of `errors` shown framed below it.
    pub fn group(message: impl Into<String>, errors: Vec<Diagnostic>) -> Diagnostic {
        let count = errors.len();
        let plural = if count == 1 { "" } else { "s" };
        let mut d = Diagnostic::new(format!("{} ({count} sub-exception{plural})", message.into()));
        d.sub_events = Some(Box::new(errors));
        d
    }

    /// Marks the error as raised while handling another (see `raised_while_handling`).
    pub fn while_handling(mut self) -> Diagnostic {
        self.raised_while_handling = true;
        self
    }

    /// The one-line form: every message in the chain joined with `: `.
    pub fn brief(&self) -> String {
        render::brief(self)
    }

    /// The `[ERROR]: ...` block as printed on stderr.
    pub fn render(&self) -> String {
        format!("[ERROR]: {}", render::block_body(self))
    }

    /// The `[DEPRECATION WARNING]: ...` block as printed on stderr.
    pub fn render_deprecation(&self) -> String {
        format!("[DEPRECATION WARNING]: {}", render::block_body(self))
    }

    /// The `[WARNING]: ...` block as printed on stderr.
    pub fn render_warning(&self) -> String {
        format!("[WARNING]: {}", render::block_body(self))
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.brief())
    }
}

impl std::error::Error for Diagnostic {}
