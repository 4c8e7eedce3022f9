//! `str` and `bytes` methods whose exact rules ansible's results depend on: `strip()`,
//! `split()` and `splitlines()`.
//!
//! Rust's nearest methods differ at the edges (`trim` keeps U+001C..U+001F, `lines` knows only
//! `\n` and `\r\n`, `trim_ascii` keeps `\x0b`), and those edges reach users through INI files,
//! password files and vault envelopes.

use crate::unicode::{is_line_break, is_space};

/// `s.strip()`.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// `s.lstrip()`.
pub fn lstrip(s: &str) -> &str {
    s.trim_start_matches(is_space)
}

/// `s.rstrip()`.
pub fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// `s.split()`: the runs of non-whitespace.
pub fn split(s: &str) -> Vec<&str> {
    s.split(is_space).filter(|w| !w.is_empty()).collect()
}

/// `s.splitlines()`: lines end at any of Python's line boundaries (`\r\n` is one), which are
/// dropped; no empty line after a final boundary.
pub fn splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_line_break(c) {
            continue;
        }
        lines.push(&s[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r' && chars.peek().map(|&(_, n)| n) == Some('\n') {
            chars.next();
            end += 1;
        }
        start = end;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// `s.splitlines(True)`: as [`splitlines`], each line keeping the boundary that ended it.
pub fn splitlines_keepends(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !is_line_break(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        if c == '\r' && chars.peek().map(|&(_, n)| n) == Some('\n') {
            chars.next();
            end += 1;
        }
        lines.push(&s[start..end]);
        start = end;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// The bytes `bytes.strip()` removes with no argument: ASCII whitespace including `\x0b`.
fn is_bytes_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// `data.strip()` of a `bytes`.
pub fn bytes_strip(data: &[u8]) -> &[u8] {
    bytes_strip_matching(data, is_bytes_space)
}

/// `data.strip(chars)` of a `bytes`.
pub fn bytes_strip_chars<'a>(data: &'a [u8], chars: &[u8]) -> &'a [u8] {
    bytes_strip_matching(data, |b| chars.contains(&b))
}

fn bytes_strip_matching(data: &[u8], strip: impl Fn(u8) -> bool) -> &[u8] {
    let start = data.iter().position(|&b| !strip(b)).unwrap_or(data.len());
    let end = data.iter().rposition(|&b| !strip(b)).map_or(start, |i| i + 1);
    &data[start..end.max(start)]
}

/// `data.splitlines()` of a `bytes`: only `\n`, `\r` and `\r\n` end a line.
pub fn bytes_splitlines(data: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            b'\n' => {
                lines.push(&data[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&data[start..i]);
                if data.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < data.len() {
        lines.push(&data[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    // Broader cases, recorded from CPython, are in `tests/corpus/text.json`.

    #[test]
    fn str_methods() {
        assert_eq!(strip("\u{1c} a \u{a0}"), "a");
        assert_eq!(split(" a\u{1f}b  c "), ["a", "b", "c"]);
        assert_eq!(splitlines("a\r\nb\rc\u{85}d\n"), ["a", "b", "c", "d"]);
        assert_eq!(splitlines("a\n\nb"), ["a", "", "b"]);
        assert!(splitlines("").is_empty());
    }

    #[test]
    fn bytes_methods() {
        assert_eq!(bytes_strip(b"\x0b\x0c pw \t\r\n"), b"pw");
        assert_eq!(bytes_strip(b" \n "), b"");
        assert_eq!(bytes_strip_chars(b"\r\n pw \n", b"\r\n"), b" pw ");
        assert_eq!(bytes_splitlines(b"a\nb\r\nc\rd\x0be"), [&b"a"[..], b"b", b"c", b"d\x0be"]);
        assert_eq!(bytes_splitlines(b"a\n"), [&b"a"[..]]);
    }
}
