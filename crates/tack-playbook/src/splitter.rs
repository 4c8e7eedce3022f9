//! ansible's `k=v` argument strings: `split_args` (whitespace split that keeps quoted text and
//! Jinja2 blocks together, preserving newlines) and `parse_kv` (the `copy: src=a dest=b` form).
//!
//! Written to behave as `ansible/parsing/splitter.py` does, quirks included (a token's quote
//! state ignores backslash-escaped quotes; Jinja2 depth counts `{{`/`}}` per token), because
//! users' free-form arguments must split exactly as ansible splits them.

use indexmap::IndexMap;

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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed at splitting arguments, either an unbalanced jinja2 block or quotes: {args}")]
pub struct SplitError {
    pub args: String,
}

/// The quote character still open after `token`, starting from `open`.
fn quote_state(token: &str, mut open: Option<char>) -> Option<char> {
    let mut prev = None;
    for c in token.chars() {
        if (c == '"' || c == '\'') && prev != Some('\\') {
            match open {
                Some(q) if q == c => open = None,
                Some(_) => {}
                None => open = Some(c),
            }
        }
        prev = Some(c);
    }
    open
}

fn block_depth(token: &str, depth: usize, open: &str, close: &str) -> usize {
    let opened = token.matches(open).count();
    let closed = token.matches(close).count();
    if opened == closed {
        return depth;
    }
    (depth as isize + opened as isize - closed as isize).max(0) as usize
}

/// Splits on spaces and newlines, re-joining pieces split inside quotes or Jinja2 blocks.
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
            let in_jinja = print_depth > 0 || block > 0 || comment > 0;

            let mut appended = false;
            if inside_quotes && !was_inside_quotes && !in_jinja {
                params.push(token.to_string());
                appended = true;
            } else if in_jinja || inside_quotes || was_inside_quotes {
                match params.last_mut() {
                    Some(last) => {
                        if !(idx == 0 && was_inside_quotes) && idx > 0 {
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

            let in_jinja = print_depth > 0 || block > 0 || comment > 0;
            if !in_jinja && !inside_quotes && !appended && !token.is_empty() {
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

/// Joins split pieces back, keeping the newlines `split_args` preserved.
pub fn join_args(parts: &[String]) -> String {
    let mut out = String::new();
    for p in parts {
        if !(out.is_empty() || out.ends_with('\n')) {
            out.push(' ');
        }
        out.push_str(p);
    }
    out
}

/// Removes one pair of matching surrounding quotes, as ansible's `unquote` does.
pub fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    let quoted = b.len() > 1
        && b[0] == b[b.len() - 1]
        && (b[0] == b'"' || b[0] == b'\'')
        && b[b.len() - 2] != b'\\';
    if quoted { &s[1..s.len() - 1] } else { s }
}

/// Decodes Python-style escapes (`\n`, `\x41`, `\u00e9`, `\U0001F600`, `\\`, quotes) as
/// ansible's `_decode_escapes` does; `\N{...}` names are left as written.
fn decode_escapes(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' || i + 1 >= chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let next = chars[i + 1];
        let simple = match next {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
            continue;
        }
        let width = match next {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => 0,
        };
        if width > 0 && i + 2 + width <= chars.len() {
            let hex: String = chars[i + 2..i + 2 + width].iter().collect();
            if hex.chars().all(|c| c.is_ascii_hexdigit())
                && let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
            {
                out.push(c);
                i += 2 + width;
                continue;
            }
        }
        out.push('\\');
        i += 1;
    }
    out
}

/// Parses `k=v` pairs; free-form words go to `_raw_params` (only collected when `check_raw`
/// asks for it for the keys command modules read: otherwise they are kept too, as ansible
/// does: every non-`k=v` word is a raw param).
pub fn parse_kv(args: &str, check_raw: bool) -> Result<IndexMap<String, String>, SplitError> {
    let mut options = IndexMap::new();
    let mut raw = Vec::new();
    for orig in split_args(args)? {
        let x = decode_escapes(&orig);
        if !x.contains('=') {
            raw.push(orig);
            continue;
        }
        // The first `=` after position 0 not preceded by a backslash splits key from value.
        let bytes = x.as_bytes();
        let split = (1..bytes.len()).find(|&p| bytes[p] == b'=' && bytes[p - 1] != b'\\');
        let Some(pos) = split else {
            raw.push(x.replace("\\=", "="));
            continue;
        };
        let (k, v) = (&x[..pos], &x[pos + 1..]);
        if check_raw && !COMMAND_OPTIONS.contains(&k) {
            raw.push(orig);
        } else {
            options.insert(k.trim().to_string(), unquote(v.trim()).to_string());
        }
    }
    if !raw.is_empty() {
        options.insert("_raw_params".to_string(), join_args(&raw));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_keep_quotes_and_jinja_together() {
        assert_eq!(split_args("a=b c=\"foo bar\"").unwrap(), ["a=b", "c=\"foo bar\""]);
        assert_eq!(split_args("msg={{ a | b }} x=1").unwrap(), ["msg={{ a | b }}", "x=1"]);
        assert_eq!(split_args("echo  hi").unwrap(), ["echo ", "hi"]);
        assert!(split_args("a='b").is_err());
    }

    #[test]
    fn kv_and_raw_params() {
        let kv = parse_kv("src=a dest='b c'", false).unwrap();
        assert_eq!(kv["src"], "a");
        assert_eq!(kv["dest"], "b c");
        let kv = parse_kv("echo hi creates=/x", true).unwrap();
        assert_eq!(kv["creates"], "/x");
        assert_eq!(kv["_raw_params"], "echo hi");
    }
}
