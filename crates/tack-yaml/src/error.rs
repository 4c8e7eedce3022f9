//! Turning a failed load into the error ansible-core 2.21 prints: `YAML parsing failed: ...`,
//! the position of PyYAML's problem mark, and ansible's guesses about common mistakes (tabs,
//! unquoted templates, colons in plain values, unbalanced quotes) with their help texts,
//! reproduced from `ansible/_internal/_yaml/_errors.py`'s behaviour.
//!
//! The guesses read the source line at the problem mark. ansible reads it back from the file;
//! tack reads it from the text it was given, which is the file's content, and, as ansible,
//! makes no guess for text that has no file.

use std::sync::LazyLock;

use libyaml_safer::{ErrorKind, Mark};
use regex::Regex;
use tack_diag::Origin;

use crate::YamlError;
use crate::compose::ComposeError;
use crate::construct::{ConstructError, OriginBase};

const DEFAULT_MESSAGE: &str = "YAML parsing failed";

const TEMPLATE_HELP: &str =
    "\nFor example:\n\n    raw: {{ some_var }}\n\nShould be:\n\n    raw: \"{{ some_var }}\"\n";
const COLON_HELP: &str = "\nFor example:\n\n    raw: echo 'name: ansible'\n\nShould be:\n\n    raw: \"echo 'name: ansible'\"\n";
const QUOTE_HELP: &str =
    "\nFor example:\n\n    raw: \"foo\" in bar\n\nShould be:\n\n    raw: '\"foo\" in bar'\n";
const QUOTES_HELP: &str = "\nFor example:\n\n    raw: \"foo\" in \"bar\"\n\nShould be:\n\n    raw: '\"foo\" in \"bar\"'\n";

macro_rules! pattern {
    ($name:ident, $re:literal) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| {
            // A literal pattern, exercised by the error corpus.
            Regex::new($re).expect("error-analysis pattern is valid")
        });
    };
}

pattern!(TEMPLATE, r"^\s*(?:-\s+)*(?:[\w\s]+:\s+)?(?P<value>\{\{.*\}\})");
pattern!(VALUE, r"^\s*(?:-\s+)*(?:[\w\s\[\]{}]+:\s+)?(?P<value>.*)$");
pattern!(QUOTED, r#"^\s*('[^']*'|"[^"]*")\s*$"#);
pattern!(COLON, r":($| )");
pattern!(QUOTE_START, r#"^\s*(?:-\s+)*(?:[\w\s]+:\s+)?(?P<value>["'].*?\s*)$"#);

/// An error with PyYAML's parts, before ansible formats it.
pub(crate) struct Failure {
    kind: FailureKind,
}

enum FailureKind {
    /// A `MarkedYAMLError`; `analyse` is false for ansible's own constructor errors.
    Marked { context: Option<String>, problem: String, mark: Mark, analyse: bool },
    /// Any other exception: only its text, and the file as origin.
    Unmarked(String),
    /// tack's own refusal, worded by tack.
    Refused { message: String, mark: Mark },
}

impl From<ComposeError> for Failure {
    fn from(err: ComposeError) -> Failure {
        let kind = match err {
            ComposeError::Parser(err) => parser_failure(&err),
            ComposeError::Composer { context, problem, mark } => FailureKind::Marked {
                context: context.map(str::to_string),
                problem,
                mark,
                analyse: true,
            },
            ComposeError::Unsupported { message, mark } => FailureKind::Refused { message, mark },
        };
        Failure { kind }
    }
}

impl From<ConstructError> for Failure {
    fn from(err: ConstructError) -> Failure {
        let kind = match err {
            ConstructError::Marked { context, problem, mark, ansible } => FailureKind::Marked {
                context: context.map(str::to_string),
                problem,
                mark,
                analyse: !ansible,
            },
            ConstructError::Python(text) => FailureKind::Unmarked(text),
            ConstructError::Unsupported { message, mark } => FailureKind::Refused { message, mark },
        };
        Failure { kind }
    }
}

impl Failure {
    /// The composer's "expected a single document" error.
    pub(crate) fn not_single(mark: Mark) -> Failure {
        Failure {
            kind: FailureKind::Marked {
                context: Some("expected a single document in the stream".into()),
                problem: "but found another document".into(),
                mark,
                analyse: true,
            },
        }
    }
}

fn parser_failure(err: &libyaml_safer::Error) -> FailureKind {
    if err.kind() == ErrorKind::Reader {
        return FailureKind::Unmarked(reader_message(err));
    }
    match err.problem_mark() {
        Some(mark) => FailureKind::Marked {
            context: err.context().map(str::to_string),
            problem: err.problem().to_string(),
            mark,
            analyse: true,
        },
        None => FailureKind::Unmarked(err.to_string()),
    }
}

/// PyYAML's `ReaderError` text for a unicode source. libyaml-safer keeps the offset and the
/// character private but prints them, so they are read back from its message.
fn reader_message(err: &libyaml_safer::Error) -> String {
    let text = err.to_string();
    let number = |label: &str| -> i64 {
        text.split(label)
            .nth(1)
            .and_then(|rest| rest.split([',', ')']).next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    };
    format!(
        "unacceptable character #x{:04x}: {}\n  in \"<unicode string>\", position {}",
        number("value "),
        err.problem(),
        number("offset ")
    )
}

impl Failure {
    /// ansible's `AnsibleYAMLParserError.handle_exception`.
    pub(crate) fn into_error(self, text: &str, base: &OriginBase) -> YamlError {
        match self.kind {
            FailureKind::Refused { message, mark } => {
                YamlError { message, origin: Some(base.at(within(text, mark))), help: None }
            }
            FailureKind::Unmarked(text) => YamlError {
                message: format!("{DEFAULT_MESSAGE}: {}", collapse(&text)),
                origin: Some(file_origin(base)),
                help: None,
            },
            FailureKind::Marked { context, problem, mark, analyse } => {
                let origin = base.at(within(text, mark));
                if analyse && let Some(found) = guess(text, base, &origin) {
                    return found;
                }
                let mut message = [context.as_deref(), Some(problem.as_str())]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                message = message.trim().to_string();
                let mut chars = message.chars();
                if let Some(first) = chars.next() {
                    message = first.to_uppercase().chain(chars).collect();
                }
                if !message.ends_with('.') {
                    message.push('.');
                }
                YamlError {
                    message: format!("{DEFAULT_MESSAGE}: {}", collapse(&message)),
                    origin: Some(origin),
                    help: None,
                }
            }
        }
    }
}

/// `mark`, or the end of `text` when the mark lies past it: in the line break the parser is
/// given after a text that has none (`compose::Composer::new`), which is not the file's.
fn within(text: &str, mark: Mark) -> Mark {
    if mark.index <= text.len() as u64 {
        return mark;
    }
    let last_line = text.rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let mut end = mark;
    end.index = text.len() as u64;
    end.line = text.matches('\n').count() as u64;
    end.column = text[last_line..].chars().count() as u64;
    end
}

/// The origin of the whole stream, as ansible shows it for errors without a mark.
fn file_origin(base: &OriginBase) -> Origin {
    let description = match (&base.path, &base.description) {
        (None, None) => Some("<unknown>".into()),
        (_, d) => d.clone(),
    };
    Origin { path: base.path.clone(), description, line: 0, col: 0 }
}

/// `re.sub(r'\s+', ' ', message).strip()`.
fn collapse(text: &str) -> String {
    tack_py::text::split(text).join(" ")
}

/// ansible's guesses, tried in its order; `None` when none applies.
fn guess(text: &str, base: &OriginBase, origin: &Origin) -> Option<YamlError> {
    base.path.as_ref()?;
    let line = source_line(text, origin.line)?;
    let at = |byte: usize, message: &str, help: Option<&str>| {
        let col = line[..byte].chars().count() as u32 + 1;
        Some(YamlError {
            message: format!("{DEFAULT_MESSAGE}: {message}"),
            origin: Some(Origin { col, ..origin.clone() }),
            help: help.map(str::to_string),
        })
    };
    if let Some(tab) = line.find('\t') {
        return at(tab, "Tabs are usually invalid in YAML.", None);
    }
    if let Some(caps) = TEMPLATE.captures(line) {
        let start = caps.name("value").map_or(0, |m| m.start());
        return at(
            start,
            "This may be an issue with missing quotes around a template block.",
            Some(TEMPLATE_HELP),
        );
    }
    if !line.trim_start().starts_with(':')
        && let Some(value) = VALUE.captures(line).and_then(|c| c.name("value"))
    {
        let fragment = blank_quoted(value.as_str());
        if !fragment.is_empty()
            && let Some(colon) = COLON.find(&fragment)
        {
            // The fragment keeps the value's length in characters, not bytes.
            let colon_chars = fragment[..colon.start()].chars().count();
            let byte = value.start()
                + value.as_str().char_indices().nth(colon_chars).map_or(value.len(), |(i, _)| i);
            return at(
                byte,
                "Colons in unquoted values must be followed by a non-space character.",
                Some(COLON_HELP),
            );
        }
    }
    if let Some(value) = QUOTE_START.captures(line).and_then(|c| c.name("value")) {
        let suspected = value.as_str();
        let first = suspected.chars().next()?;
        let last = suspected.chars().last()?;
        if first != last {
            return at(
                value.start(),
                "Values starting with a quote must end with the same quote.",
                Some(QUOTE_HELP),
            );
        }
        if line.matches(first).count() > 2 {
            return at(
                value.start(),
                "Values starting with a quote must end with the same quote, and not contain \
                 that quote.",
                Some(QUOTES_HELP),
            );
        }
    }
    None
}

/// ansible's `_replace_quoted_value`: a value that is one quoted string becomes dots.
fn blank_quoted(value: &str) -> String {
    if QUOTED.is_match(value) { ".".repeat(value.chars().count()) } else { value.to_string() }
}

/// Line `number` (1-based) as Python's universal-newline reading returns it; `None` past the
/// end, where ansible finds no line to analyse.
fn source_line(text: &str, number: u32) -> Option<&str> {
    let mut rest = text;
    let mut current = 1;
    while !rest.is_empty() {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        if current == number {
            return Some(&rest[..end]);
        }
        let skip = match &rest[end..] {
            r if r.starts_with("\r\n") => 2,
            "" => 0,
            _ => 1,
        };
        rest = &rest[end + skip..];
        current += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_as_python_reads_them() {
        let text = "a\r\nb\rc\nd";
        assert_eq!(source_line(text, 1), Some("a"));
        assert_eq!(source_line(text, 2), Some("b"));
        assert_eq!(source_line(text, 3), Some("c"));
        assert_eq!(source_line(text, 4), Some("d"));
        assert_eq!(source_line(text, 5), None);
        assert_eq!(source_line("a\n", 2), None);
    }

    #[test]
    fn quoted_values_are_blanked_by_characters() {
        assert_eq!(blank_quoted(" 'é' "), ".....");
        assert_eq!(blank_quoted("a: b"), "a: b");
    }
}
