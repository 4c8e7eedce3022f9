//! Python's `int(text)` and `float(text)` of a string, as ansible applies them to inventory
//! and configuration values.
//!
//! Both accept more than Rust's parsers: surrounding whitespace (Python's), `_` between digits,
//! and decimal digits of any script (`int('١٢')` is 12). `int` here is limited to `i64`, where
//! Python's is unbounded.

use crate::repr::str_repr;
use crate::text::strip;
use crate::unicode::is_decimal;
use crate::unicode_tables::DECIMAL;

/// Why `int(text)` failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntError {
    /// Python raises `ValueError` with this text.
    Invalid(String),
    /// Python would return the number; it does not fit in an `i64`.
    TooLarge,
}

/// The ASCII digit for a decimal digit of any script. Unicode encodes every decimal digit in a
/// run of ten from 0 to 9, and the runs in [`DECIMAL`] start on a zero.
fn ascii_digit(c: char) -> char {
    if c.is_ascii_digit() || !is_decimal(c) {
        return c;
    }
    let u = c as u32;
    let start = DECIMAL.iter().find(|&&(lo, hi)| lo <= u && u <= hi).map_or(u, |&(lo, _)| lo);
    char::from(b'0' + ((u - start) % 10) as u8)
}

/// `text` with whitespace stripped, decimal digits made ASCII and every `_` that stands between
/// two digits removed; `None` when an `_` stands anywhere else.
fn digits_only(text: &str) -> Option<String> {
    let chars: Vec<char> = strip(text).chars().map(ascii_digit).collect();
    let mut out = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c != '_' {
            out.push(c);
            continue;
        }
        let between = i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if !between {
            return None;
        }
    }
    Some(out)
}

/// `int(text)` (base 10).
pub fn int(text: &str) -> Result<i64, IntError> {
    let invalid =
        || IntError::Invalid(format!("invalid literal for int() with base 10: {}", str_repr(text)));
    let cleaned = digits_only(text).ok_or_else(invalid)?;
    let (negative, digits) = match cleaned.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, cleaned.strip_prefix('+').unwrap_or(&cleaned)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    // Parsed with its sign so that `i64::MIN` fits.
    let signed = if negative { format!("-{digits}") } else { digits.to_string() };
    signed.parse().map_err(|_| IntError::TooLarge)
}

/// `float(text)`: `None` where Python raises `ValueError`.
pub fn float(text: &str) -> Option<f64> {
    let cleaned = digits_only(text)?;
    // Once the digits are ASCII and the underscores gone, Rust's grammar is Python's (`1e3`,
    // `.5`, `5.`, signs, `inf`, `infinity` and `nan` in any case).
    cleaned.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_as_python() {
        // Each expectation is CPython 3.13's `int(text)`.
        for (text, want) in [(" -1_2 ", -12), ("+7", 7), ("007", 7), ("١٢", 12), ("١_٢", 12)] {
            assert_eq!(int(text), Ok(want), "{text:?}");
        }
        for text in ["", "_1", "1_", "1__0", "1.0", "0x10", "- 1", "a'"] {
            assert!(matches!(int(text), Err(IntError::Invalid(_))), "{text:?}");
        }
        assert_eq!(
            int("a'"),
            Err(IntError::Invalid("invalid literal for int() with base 10: \"a'\"".into()))
        );
        assert_eq!(int("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(int("99999999999999999999"), Err(IntError::TooLarge));
    }

    #[test]
    fn float_as_python() {
        // Each expectation is CPython 3.13's `float(text)`.
        for (text, want) in [
            (" 1_0.5e1_0 ", 105000000000.0),
            ("١.٥", 1.5),
            (".5", 0.5),
            ("5.", 5.0),
            ("-iNF", f64::NEG_INFINITY),
            ("Infinity", f64::INFINITY),
        ] {
            assert_eq!(float(text), Some(want), "{text:?}");
        }
        assert!(float("+nan").is_some_and(f64::is_nan) && float("-nan").is_some_and(f64::is_nan));
        for text in ["1_e5", "1e_5", "_1", "1__0", "0x10", "", "1e"] {
            assert_eq!(float(text), None, "{text:?}");
        }
    }
}
