//! `key=value` strings as ansible splits them (`parsing/splitter.py`): `-e 'a=1 b="x y"'`,
//! free-form module arguments (`copy: src=a dest=b`, `command: echo hi creates=/x`).
//!
//! ansible's splitter is not a shell lexer: it splits on single spaces and newlines, then glues
//! pieces back together while a quote or a Jinja2 block (`{{ }}`, `{% %}`, `{# #}`) is open, and
//! keeps the quotes. This module follows it piece by piece, quirks included (a token's quote
//! state ignores backslash-escaped quotes; Jinja2 depth is counted per token), because users'
//! arguments must split exactly as ansible splits them.
//!
//! One gap: Python's `\N{NAME}` escapes are left as written (ansible decodes them by name).

use tack_py::ansible::unquote;

/// The options of a free-form command module that `parse_kv(check_raw=True)` still reads as
/// `k=v` rather than as part of the command line.
const COMMAND_OPTIONS: &[&str] = &[
    "creates",
    "removes",
    "chdir",
    "executable",
    "warn",
    "stdin",
    "stdin_add_newline",
    "strip_empty_ends",
];

/// An argument string whose quotes or Jinja2 blocks never close.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("failed at splitting arguments, either an unbalanced jinja2 block or quotes: {args}")]
pub struct SplitError {
    pub args: String,
}

/// The quote still open after `token`, starting from `quote` (`_get_quote_state`).
fn quote_state(token: &str, mut quote: Option<char>) -> Option<char> {
    let mut prev: Option<char> = None;
    for c in token.chars() {
        if (c == '"' || c == '\'') && prev != Some('\\') {
            match quote {
                Some(q) if q == c => quote = None,
                Some(_) => {}
                None => quote = Some(c),
            }
        }
        prev = Some(c);
    }
    quote
}

fn block_depth(token: &str, depth: usize, open: &str, close: &str) -> usize {
    let opened = token.matches(open).count() as isize;
    let closed = token.matches(close).count() as isize;
    (depth as isize + opened - closed).max(0) as usize
}

/// `split_args`: the pieces of an argument string, quotes kept.
pub fn split_args(args: &str) -> Result<Vec<String>, SplitError> {
    if args.is_empty() {
        return Ok(Vec::new());
    }
    let mut params: Vec<String> = Vec::new();
    let items: Vec<&str> = args.split('\n').collect();
    let mut quote: Option<char> = None;
    let mut inside_quotes = false;
    let (mut print_depth, mut block, mut comment) = (0usize, 0usize, 0usize);
    for (item_idx, item) in items.iter().enumerate() {
        let mut line_continuation = false;
        for (idx, token) in item.split(' ').enumerate() {
            if token.is_empty() && idx != 0 {
                if params.is_empty() {
                    params.push(String::new());
                }
                if let Some(last) = params.last_mut() {
                    last.push(' ');
                }
                continue;
            }
            if token == "\\" && !inside_quotes {
                line_continuation = true;
                continue;
            }
            let was_inside_quotes = inside_quotes;
            quote = quote_state(token, quote);
            inside_quotes = quote.is_some();
            let in_block = print_depth > 0 || block > 0 || comment > 0;
            let mut appended = false;
            if inside_quotes && !was_inside_quotes && !in_block {
                params.push(token.to_string());
                appended = true;
            } else if in_block || inside_quotes || was_inside_quotes {
                match params.last_mut() {
                    Some(last) if idx == 0 && was_inside_quotes => last.push_str(token),
                    Some(last) => {
                        if idx > 0 {
                            last.push(' ');
                        }
                        last.push_str(token);
                    }
                    None => params.push(token.to_string()),
                }
                appended = true;
            }
            for (depth, open, close) in [
                (&mut print_depth, "{{", "}}"),
                (&mut block, "{%", "%}"),
                (&mut comment, "{#", "#}"),
            ] {
                let before = *depth;
                *depth = block_depth(token, *depth, open, close);
                if *depth != before && !appended {
                    params.push(token.to_string());
                    appended = true;
                }
            }
            let in_block = print_depth > 0 || block > 0 || comment > 0;
            if !in_block && !inside_quotes && !appended && !token.is_empty() {
                params.push(token.to_string());
            }
        }
        if items.len() > 1 && item_idx != items.len() - 1 && !line_continuation {
            if params.is_empty() {
                params.push(String::new());
            }
            if let Some(last) = params.last_mut() {
                last.push('\n');
            }
        }
    }
    if print_depth > 0 || block > 0 || comment > 0 || inside_quotes {
        return Err(SplitError { args: args.to_string() });
    }
    Ok(params)
}

/// `join_args`: pieces joined with spaces, except after a piece that ends a line.
pub fn join_args(pieces: &[String]) -> String {
    let mut out = String::new();
    for piece in pieces {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push(' ');
        }
        out.push_str(piece);
    }
    out
}

/// Python's `unicode-escape` decoding of the escapes `parse_kv` recognises: `\\`, `\'`, `\"`,
/// `\a \b \f \n \r \t \v`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`. Anything else stays as written.
fn decode_escapes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let rest = &s[i + 1..];
        let simple = match rest.chars().next() {
            Some('\\') => Some('\\'),
            Some('\'') => Some('\''),
            Some('"') => Some('"'),
            Some('a') => Some('\u{7}'),
            Some('b') => Some('\u{8}'),
            Some('f') => Some('\u{c}'),
            Some('n') => Some('\n'),
            Some('r') => Some('\r'),
            Some('t') => Some('\t'),
            Some('v') => Some('\u{b}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            chars.next();
            continue;
        }
        let hex_len = match rest.chars().next() {
            Some('x') => 2,
            Some('u') => 4,
            Some('U') => 8,
            _ => 0,
        };
        let digits = rest.get(1..1 + hex_len).filter(|d| {
            hex_len > 0 && d.len() == hex_len && d.bytes().all(|b| b.is_ascii_hexdigit())
        });
        match digits.and_then(|d| u32::from_str_radix(d, 16).ok()).and_then(char::from_u32) {
            Some(ch) => {
                out.push(ch);
                for _ in 0..=hex_len {
                    chars.next();
                }
            }
            None => out.push('\\'),
        }
    }
    out
}

/// `parse_kv(args, check_raw)`: `key=value` pieces as an ordered list of pairs (a repeated key
/// keeps its first place and its last value). Pieces without an unescaped `=` after their first
/// character are joined into `_raw_params`; with `check_raw`, so are `k=v` pieces whose key is
/// not one of the command modules' own options.
pub fn parse_kv(args: &str, check_raw: bool) -> Result<Vec<(String, String)>, SplitError> {
    let mut options: Vec<(String, String)> = Vec::new();
    let mut set = |key: String, value: String| match options.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => options.push((key, value)),
    };
    let mut raw: Vec<String> = Vec::new();
    for original in split_args(args)? {
        let piece = decode_escapes(&original);
        if !piece.contains('=') {
            raw.push(original);
            continue;
        }
        let bytes = piece.as_bytes();
        // The first `=` at a position > 0 that is not preceded by a backslash.
        let Some(pos) = (1..bytes.len()).find(|&i| bytes[i] == b'=' && bytes[i - 1] != b'\\')
        else {
            raw.push(piece.replace("\\=", "="));
            continue;
        };
        let (key, value) = (&piece[..pos], &piece[pos + 1..]);
        if check_raw && !COMMAND_OPTIONS.contains(&key) {
            raw.push(original);
        } else {
            set(key.trim().to_string(), unquote(value.trim()).to_string());
        }
    }
    if !raw.is_empty() {
        set("_raw_params".into(), join_args(&raw));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(args: &str) -> Vec<(String, String)> {
        parse_kv(args, false).unwrap()
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.into(), v.into())
    }

    #[test]
    fn quotes_and_spaces() {
        // Measured: `-e 'k="a b" c=d\ e'` gave k="a b", c="d\\", _raw_params="e".
        assert_eq!(
            kv("k=\"a b\" c=d\\ e"),
            vec![pair("k", "a b"), pair("c", "d\\"), pair("_raw_params", "e")]
        );
        assert_eq!(kv("foo=bar"), vec![pair("foo", "bar")]);
        assert_eq!(kv("a='x=y' b=\"{{ z }}\""), vec![pair("a", "x=y"), pair("b", "{{ z }}")]);
    }

    #[test]
    fn jinja_blocks_stay_together() {
        assert_eq!(split_args("a={{ b | c }} d=e").unwrap(), ["a={{ b | c }}", "d=e"]);
        assert!(split_args("a=\"open").is_err());
    }

    #[test]
    fn check_raw_keeps_only_command_options() {
        // Measured: ansible's parse_kv(..., check_raw=True) on the same text.
        let parsed = parse_kv("echo a=b creates=/x  chdir=/tmp", true).unwrap();
        assert_eq!(
            parsed,
            vec![pair("creates", "/x"), pair("chdir", "/tmp"), pair("_raw_params", "echo a=b")]
        );
        assert_eq!(split_args("echo  hi").unwrap(), ["echo ", "hi"]);
    }

    #[test]
    fn escapes_are_decoded() {
        assert_eq!(kv("a=x\\ty"), vec![pair("a", "x\ty")]);
        assert_eq!(kv("a=\\u00e9"), vec![pair("a", "é")]);
        assert_eq!(kv("a\\=b"), vec![pair("_raw_params", "a=b")]);
    }
}
