//! CPython's character classes: `str.isprintable()`, `str.isspace()`, the `\w` and `\d` of
//! `re` patterns, and the line boundaries of `str.splitlines()`.
//!
//! Rust's own classes differ from Python's in small ways that show in output (`char::
//! is_whitespace` leaves out U+001C..U+001F; no Rust method matches `isprintable`), so the
//! tables come from the reference interpreter itself (`scripts/gen-py-unicode.py`).

use crate::unicode_tables::{DECIMAL, NOT_PRINTABLE, WORD};

fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let u = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < u {
                std::cmp::Ordering::Less
            } else if lo > u {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `c.isprintable()`: what `repr()` of a string leaves unescaped (besides ASCII, which `repr`
/// handles itself).
pub fn is_printable(c: char) -> bool {
    !in_table(NOT_PRINTABLE, c)
}

/// `c.isspace()`: Unicode's `White_Space` plus the information separators U+001C..U+001F.
/// This is the whitespace of `str.split()`, `str.strip()`, `int()` and `float()`.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `\w` in a `str` pattern: `c.isalnum()` or `_`.
pub fn is_word(c: char) -> bool {
    in_table(WORD, c)
}

/// `\d` in a `str` pattern: `c.isdecimal()`.
pub fn is_decimal(c: char) -> bool {
    in_table(DECIMAL, c)
}

/// A line boundary of `str.splitlines()` (`\r\n` counts as one, which the caller handles).
pub fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_measured_on_cpython_3_13() {
        // Each expectation is what CPython 3.13 answers for the character.
        for (c, printable) in [
            ('a', true),
            (' ', true),
            ('\u{7f}', false),
            ('\u{a0}', false),
            ('é', true),
            ('\u{378}', false),
            ('\u{600}', false),
            ('\u{200b}', false),
            ('\u{1f600}', true),
            ('\u{e0001}', false),
        ] {
            assert_eq!(is_printable(c), printable, "{:x}", c as u32);
        }
        for (c, space) in [(' ', true), ('\u{1c}', true), ('\u{a0}', true), ('\u{200b}', false)] {
            assert_eq!(is_space(c), space, "{:x}", c as u32);
        }
        for (c, word) in [('_', true), ('é', true), ('٣', true), ('-', false), ('\u{301}', false)]
        {
            assert_eq!(is_word(c), word, "{:x}", c as u32);
        }
        assert!(is_decimal('٣') && !is_decimal('½') && !is_decimal('a'));
    }
}
