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
//! This crate owns that vocabulary and the rendering of the block; it knows nothing about YAML,
//! inventories or playbooks. The excerpt is read from the file when the error is shown, as
//! ansible-core does, so holding an origin costs one shared path and two numbers.

mod excerpt;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use excerpt::excerpt;

/// Where a value was written: a file and a 1-based line and column.
///
/// A value without a file (a command-line `-e`, a built-in default) has no origin at all:
/// use `Option<Origin>` for those.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    pub path: Arc<Path>,
    pub line: u32,
    pub col: u32,
}

impl Origin {
    pub fn new(path: Arc<Path>, line: u32, col: u32) -> Origin {
        Origin { path, line, col }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.col)
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
}

impl ErrorClass {
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorClass::General => 1,
            ErrorClass::Parser => 4,
            ErrorClass::Options => 5,
        }
    }
}

/// One `[ERROR]:` block as ansible-core 2.21 prints it: the message, then (when known) the
/// `Origin:` line and an excerpt of the source with a caret under the column, then any help
/// text ansible attaches to that kind of error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub class: ErrorClass,
    pub message: String,
    pub origin: Option<Origin>,
    /// Text printed after the excerpt, separated by a blank line (ansible's "For example: ..."
    /// hints on some YAML errors).
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>) -> Diagnostic {
        Diagnostic { class: ErrorClass::General, message: message.into(), origin: None, help: None }
    }

    pub fn at(message: impl Into<String>, origin: Option<Origin>) -> Diagnostic {
        Diagnostic { class: ErrorClass::General, message: message.into(), origin, help: None }
    }

    /// Marks the error as one of ansible's parser errors (exit code 4).
    pub fn parser(mut self) -> Diagnostic {
        self.class = ErrorClass::Parser;
        self
    }

    pub fn with_class(mut self, class: ErrorClass) -> Diagnostic {
        self.class = class;
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The block as printed on stderr, ending with a newline.
    pub fn render(&self) -> String {
        let mut out = format!("[ERROR]: {}\n", self.message);
        if let Some(origin) = &self.origin {
            out.push_str(&format!("Origin: {origin}\n"));
            if let Some(text) = excerpt(origin) {
                out.push('\n');
                out.push_str(&text);
            }
        }
        if let Some(help) = &self.help {
            out.push('\n');
            out.push_str(help);
            if !help.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(origin) = &self.origin {
            write!(f, " (at {origin})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Anything that can be shown as ansible's error block.
pub trait ToDiagnostic {
    fn to_diagnostic(&self) -> Diagnostic;
}

impl ToDiagnostic for Diagnostic {
    fn to_diagnostic(&self) -> Diagnostic {
        self.clone()
    }
}
