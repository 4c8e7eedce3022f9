//! Python's `shlex.split` (POSIX mode) and `shlex.quote`: how ansible splits an INI inventory
//! host line and the `EDITOR` command line, and how it quotes a command it shows.
//!
//! Written here because shell-word crates follow the shell, not Python's lexer: in Python `#`
//! starts a comment only when asked (and then even in the middle of a word: `a=b#c` is
//! `a=b`), and inside double quotes only `\"` and `\\` are escapes.

/// Why a line could not be split, in Python's words (its `ValueError` text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShlexError {
    NoClosingQuotation,
    NoEscapedCharacter,
}

impl std::fmt::Display for ShlexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShlexError::NoClosingQuotation => "No closing quotation",
            ShlexError::NoEscapedCharacter => "No escaped character",
        })
    }
}

impl std::error::Error for ShlexError {}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Between,
    Word,
    Quote(char),
    /// After a backslash; the state to return to (`Word`, or the double quote).
    Escape(Resume),
}

#[derive(Clone, Copy, PartialEq)]
enum Resume {
    Word,
    DoubleQuote,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// `shlex.split(s)`.
pub fn split(s: &str) -> Result<Vec<String>, ShlexError> {
    split_words(s, false)
}

/// `shlex.split(s, comments=True)`: `#` also ends the line's words.
pub fn split_comments(s: &str) -> Result<Vec<String>, ShlexError> {
    split_words(s, true)
}

fn split_words(s: &str, comments: bool) -> Result<Vec<String>, ShlexError> {
    let mut words = Vec::new();
    let mut token = String::new();
    // A word that had quotes is emitted even when empty (`''`).
    let mut quoted = false;
    let mut state = State::Between;
    let mut chars = s.chars();
    loop {
        let next = chars.next();
        match state {
            State::Between | State::Word => {
                let Some(c) = next else { break };
                if is_space(c) || (comments && c == '#') {
                    if c == '#' {
                        chars.by_ref().find(|&c| c == '\n');
                    }
                    if state == State::Word || quoted {
                        words.push(std::mem::take(&mut token));
                        quoted = false;
                    }
                    state = State::Between;
                } else if c == '\\' {
                    state = State::Escape(Resume::Word);
                } else if c == '"' || c == '\'' {
                    state = State::Quote(c);
                } else {
                    token.push(c);
                    state = State::Word;
                }
            }
            State::Quote(q) => {
                quoted = true;
                let Some(c) = next else { return Err(ShlexError::NoClosingQuotation) };
                if c == q {
                    state = State::Word;
                } else if c == '\\' && q == '"' {
                    state = State::Escape(Resume::DoubleQuote);
                } else {
                    token.push(c);
                }
            }
            State::Escape(resume) => {
                let Some(c) = next else { return Err(ShlexError::NoEscapedCharacter) };
                if resume == Resume::DoubleQuote && c != '"' && c != '\\' {
                    token.push('\\');
                }
                token.push(c);
                state = match resume {
                    Resume::Word => State::Word,
                    Resume::DoubleQuote => State::Quote('"'),
                };
            }
        }
    }
    if state == State::Word || quoted {
        words.push(token);
    }
    Ok(words)
}

/// `shlex.quote(s)`: as is when made only of ASCII word characters and `@%+=:,./-`,
/// otherwise in single quotes.
pub fn quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if s.is_empty() {
        "''".into()
    } else if s.chars().all(safe) {
        s.into()
    } else {
        format!("'{}'", s.replace('\'', "'\"'\"'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Broader cases, recorded from CPython, are in `tests/corpus/shlex.json`.

    #[test]
    fn comments_only_when_asked() {
        assert_eq!(split("vi #x").unwrap(), ["vi", "#x"]);
        assert_eq!(split_comments("a=b#c d").unwrap(), ["a=b"]);
        assert_eq!(split("a\\"), Err(ShlexError::NoEscapedCharacter));
        assert_eq!(quote("it's"), "'it'\"'\"'s'");
    }
}
