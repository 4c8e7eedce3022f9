//! Python's `shlex.split(line, comments=True)` in POSIX mode, as the INI inventory splits a
//! host line into its name and `key=value` words.
//!
//! Written here because shell-word crates differ from Python's lexer where INI inventories
//! notice: `#` ends a word and starts a comment even in the middle of it (`a=b#c` is `a=b`),
//! and only `\\`, `"` and `$`-free escapes are special inside double quotes.

/// Why a line could not be split, in Python's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShlexError {
    #[error("No closing quotation")]
    NoClosingQuotation,
    #[error("No escaped character")]
    NoEscapedCharacter,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Between,
    Word,
    Quote(char),
    Escape(char),
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// The words of `line`.
pub fn split(line: &str) -> Result<Vec<String>, ShlexError> {
    let mut words = Vec::new();
    let mut token = String::new();
    let mut quoted = false;
    let mut state = State::Between;
    let mut chars = line.chars();
    loop {
        let next = chars.next();
        match state {
            State::Between | State::Word => {
                let Some(c) = next else { break };
                if is_space(c) {
                    if state == State::Word || quoted {
                        words.push(std::mem::take(&mut token));
                        quoted = false;
                    }
                    state = State::Between;
                } else if c == '#' {
                    // The rest of the line is a comment.
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                    if state == State::Word || quoted {
                        words.push(std::mem::take(&mut token));
                        quoted = false;
                    }
                    state = State::Between;
                } else if c == '\\' {
                    state = State::Escape('a');
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
                    state = State::Escape(q);
                } else {
                    token.push(c);
                }
            }
            State::Escape(from) => {
                let Some(c) = next else { return Err(ShlexError::NoEscapedCharacter) };
                // Inside double quotes only the quote and the backslash itself are escaped.
                if from == '"' && c != '"' && c != '\\' {
                    token.push('\\');
                }
                token.push(c);
                state = if from == 'a' { State::Word } else { State::Quote(from) };
            }
        }
    }
    if state == State::Word || quoted {
        words.push(token);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(line: &str) -> Vec<String> {
        split(line).unwrap()
    }

    #[test]
    fn like_python_shlex() {
        // Each expectation is CPython's shlex.split(line, comments=True).
        assert_eq!(sp("host a=1 b=\"x y\"  # c"), ["host", "a=1", "b=x y"]);
        assert_eq!(sp("a=b#c d"), ["a=b"]);
        assert_eq!(sp("k=\"'q'\""), ["k='q'"]);
        assert_eq!(sp("a\\ b \"c\\d\" 'e\\f'"), ["a b", "c\\d", "e\\f"]);
        assert_eq!(sp("x='' y"), ["x=", "y"]);
        assert_eq!(sp("''"), [""]);
        assert_eq!(sp("echo \"[1]\"; exit 3"), ["echo", "[1];", "exit", "3"]);
        assert_eq!(split("a='b"), Err(ShlexError::NoClosingQuotation));
        assert_eq!(split("a\\"), Err(ShlexError::NoEscapedCharacter));
    }
}
