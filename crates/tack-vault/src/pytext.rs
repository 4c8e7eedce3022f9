//! Python's byte and text conventions that ansible-vault's behaviour and messages depend on:
//! `bytes.strip()`, `bytes.splitlines()`, and the `repr()` of strings, bytes and lists that
//! ansible interpolates into its error messages.
//!
//! Written here rather than taken from a crate because the point is to match CPython exactly
//! (Rust's `trim_ascii` does not strip `\x0b`, and no crate reproduces `repr`). Knows nothing
//! of vaults.

/// The bytes `bytes.strip()` removes with no argument.
fn is_py_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// `data.strip()`.
pub fn strip(data: &[u8]) -> &[u8] {
    strip_with(data, is_py_space)
}

/// `data.strip(b'\r\n')`.
pub fn strip_newlines(data: &[u8]) -> &[u8] {
    strip_with(data, |b| b == b'\r' || b == b'\n')
}

fn strip_with(data: &[u8], strip: impl Fn(u8) -> bool) -> &[u8] {
    let start = data.iter().position(|&b| !strip(b)).unwrap_or(data.len());
    let end = data.iter().rposition(|&b| !strip(b)).map_or(start, |i| i + 1);
    &data[start..end.max(start)]
}

/// `data.splitlines()`: lines end at `\n`, `\r` or `\r\n`, which are dropped; no trailing empty
/// line after a final line break.
pub fn splitlines(data: &[u8]) -> Vec<&[u8]> {
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

/// `repr(s)` of a Python `str`.
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `repr(b)` of a Python `bytes`.
pub fn repr_bytes(data: &[u8]) -> String {
    let quote = if data.contains(&b'\'') && !data.contains(&b'"') { b'"' } else { b'\'' };
    let mut out = String::with_capacity(data.len() + 3);
    out.push('b');
    out.push(quote as char);
    for &b in data {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b if b == quote => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote as char);
    out
}

/// `repr(list_of_str)`.
pub fn repr_str_list<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<String> = items.iter().map(|s| repr_str(s.as_ref())).collect();
    format!("[{}]", parts.join(", "))
}

/// ansible's `textwrap.shorten(str(value), 120)` of a bytes value: the excerpt it prints under
/// an origin that has no file to quote from.
pub fn value_excerpt(data: &[u8]) -> String {
    const WIDTH: usize = 120;
    const PLACEHOLDER: &str = " [...]";
    let text = repr_bytes(data);
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.len() <= WIDTH {
        return joined;
    }
    let mut line = String::new();
    for word in words {
        let next = if line.is_empty() { word.len() } else { line.len() + 1 + word.len() };
        if next + PLACEHOLDER.len() > WIDTH {
            break;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.is_empty() { PLACEHOLDER.trim_start().to_string() } else { line + PLACEHOLDER }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_excerpts_shorten_as_textwrap_does() {
        assert_eq!(value_excerpt(b"$ANSIBLE_VAULT;1.1\nabcd\n"), "b'$ANSIBLE_VAULT;1.1\\nabcd\\n'");
        assert_eq!(value_excerpt(&[b'a'; 200]), "[...]");
        let spaced = format!("{} tail", "w ".repeat(80));
        let shown = value_excerpt(spaced.as_bytes());
        assert!(shown.ends_with(" [...]") && shown.len() <= 120, "{shown}");
    }

    #[test]
    fn strip_matches_python() {
        assert_eq!(strip(b"\x0b\x0c pw \t\r\n"), b"pw");
        assert_eq!(strip(b" \n "), b"");
        assert_eq!(strip_newlines(b"\r\n pw \n"), b" pw ");
        assert_eq!(strip_newlines(b"\n\n"), b"");
    }

    #[test]
    fn splitlines_matches_python() {
        assert_eq!(splitlines(b"a\nb\r\nc\rd"), [&b"a"[..], b"b", b"c", b"d"]);
        assert_eq!(splitlines(b"a\n"), [&b"a"[..]]);
        assert_eq!(splitlines(b"a\n\nb"), [&b"a"[..], b"", b"b"]);
        assert!(splitlines(b"").is_empty());
    }

    #[test]
    fn reprs_match_python() {
        assert_eq!(repr_str("a.yml"), "'a.yml'");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("a'\"b"), "'a\\'\"b'");
        assert_eq!(repr_bytes(b"no id\n"), "b'no id\\n'");
        assert_eq!(repr_bytes(b"\xff'"), "b\"\\xff'\"");
        assert_eq!(repr_bytes(b""), "b''");
        assert_eq!(repr_str_list(&["default", "foo"]), "['default', 'foo']");
    }
}
