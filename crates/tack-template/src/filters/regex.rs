//! Regular-expression filters with Python `re` semantics: `regex_search`, `regex_findall`,
//! `regex_replace`, `regex_escape`.
//!
//! Patterns run on `fancy-regex` (backtracking, so lookaround and backreferences work) after a
//! translation of the Python syntax it reads differently: `(?P=name)`, `\Z`, `$` (which in
//! Python also matches before a final newline), and a `{` that does not start a repetition.
//! Common syntax errors are reported with Python's own words and positions. Iteration follows
//! Python's rule for empty matches (allowed right after a non-empty one), and replacement
//! templates are Python's (`\1`, `\g<name>`, `\n`).

use fancy_regex::{Captures, Regex, RegexBuilder};
use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::pyval::{self, str_of};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new(
        "regex_search",
        Sig::new("regex_search", &["value", "regex"], 2).varargs().varkw(),
        regex_search,
    ),
    Entry::new(
        "regex_findall",
        Sig::new("regex_findall", &["value", "regex", "multiline", "ignorecase"], 2),
        regex_findall,
    ),
    Entry::new(
        "regex_replace",
        Sig::new(
            "regex_replace",
            &[
                "value",
                "pattern",
                "replacement",
                "ignorecase",
                "multiline",
                "count",
                "mandatory_count",
            ],
            0,
        ),
        regex_replace,
    ),
    Entry::new("regex_escape", Sig::new("regex_escape", &["string", "re_type"], 1), regex_escape),
];

/// A Python `re` pattern compiled with Python's syntax rules; `Err` is Python's `re.error` text
/// (or why tack cannot compile it). For other plugin families (the `varnames` lookup).
pub(crate) fn compile_python(pattern: &str) -> Result<Regex, String> {
    compile(pattern, false, false).map_err(|e| e.to_string())
}

fn compile(pattern: &str, ignorecase: bool, multiline: bool) -> Result<Regex, FilterError> {
    compile_anchored(pattern, ignorecase, multiline, Anchor::Search)
}

/// Where a pattern must match: anywhere (`re.search`), at the start (`re.match`) or over the
/// whole text (`re.fullmatch`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Anchor {
    Search,
    Start,
    Full,
}

/// A Python pattern compiled for `re.search`, `re.match` or `re.fullmatch`; a syntax error is
/// Python's message, at Python's position in the pattern as written.
pub(crate) fn compile_anchored(
    pattern: &str,
    ignorecase: bool,
    multiline: bool,
    anchor: Anchor,
) -> Result<Regex, FilterError> {
    if let Some(msg) = tack_py::re::syntax_error(pattern) {
        return Err(FilterError::failed(msg));
    }
    let translated =
        tack_py::re::translate(pattern, tack_py::re::Flags { multiline, dotall: false });
    let anchored = match anchor {
        Anchor::Search => translated,
        Anchor::Start => format!("\\A(?:{translated})"),
        Anchor::Full => format!("\\A(?:{translated})\\z"),
    };
    RegexBuilder::new(&anchored).case_insensitive(ignorecase).multi_line(multiline).build().map_err(
        |e| FilterError::failed(format!("tack cannot compile the regular expression: {e}")),
    )
}

fn regex_error(e: fancy_regex::Error) -> FilterError {
    FilterError::failed(format!("regular expression failed: {e}"))
}

/// Every match as Python's `finditer` finds them.
fn find_all<'t>(
    re: &Regex,
    text: &'t str,
    limit: usize,
) -> Result<Vec<Captures<'t, str>>, FilterError> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut last_empty_at = None;
    while pos <= text.len() && (limit == 0 || out.len() < limit) {
        let Some(caps) = re.captures_from_pos(text, pos).map_err(regex_error)? else { break };
        let m = caps.get(0).map(|m| (m.start(), m.end())).unwrap_or((pos, pos));
        if m.0 == m.1 && last_empty_at == Some(m.0) {
            // An empty match where the previous empty match was: try one character on.
            let Some(c) = text[m.0..].chars().next() else { break };
            pos = m.0 + c.len_utf8();
            last_empty_at = None;
            continue;
        }
        last_empty_at = if m.0 == m.1 { Some(m.0) } else { None };
        pos = m.1;
        out.push(caps);
    }
    Ok(out)
}

fn flag(value: Option<&Value>) -> bool {
    value.is_some_and(pyval::truthy)
}

fn group_value(caps: &Captures<'_, str>, i: usize) -> Value {
    caps.get(i).map(|m| Value::from(m.as_str())).unwrap_or_else(|| Value::from(()))
}

fn regex_search(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = str_of(args.input());
    let pattern = args.get(1).map(str_of).unwrap_or_default();
    enum Group {
        Index(usize),
        Name(String),
    }
    let mut groups = Vec::new();
    for arg in &args.extra {
        let Some(text) = arg.as_str() else {
            return Err(FilterError::failed(format!(
                "'{}' object has no attribute 'startswith'",
                pyval::type_name(arg)
            )));
        };
        let none_group = || FilterError::failed("'NoneType' object has no attribute 'group'");
        if let Some(rest) = text.strip_prefix("\\g") {
            let name = rest
                .strip_prefix('<')
                .and_then(|r| r.split_once('>'))
                .map(|(n, _)| n)
                .filter(|n| !n.is_empty() && !n.chars().any(char::is_whitespace))
                .ok_or_else(none_group)?;
            groups.push(Group::Name(name.to_string()));
        } else if let Some(rest) = text.strip_prefix('\\') {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let n = digits.parse::<usize>().map_err(|_| none_group())?;
            groups.push(Group::Index(n));
        } else {
            return Err(FilterError::failed("Unknown argument"));
        }
    }
    // ansible reads only these two keywords and ignores any other.
    let kw = |name: &str| args.extra_kw.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let re = compile(&pattern, flag(kw("ignorecase")), flag(kw("multiline")))?;
    let Some(caps) = re.captures(value.as_str()).map_err(regex_error)? else {
        return Ok(Value::from(()));
    };
    if groups.is_empty() {
        return Ok(group_value(&caps, 0));
    }
    let mut out = Vec::new();
    for g in groups {
        match g {
            Group::Index(i) if i < caps.len() => out.push(group_value(&caps, i)),
            Group::Name(name) if re.capture_names().flatten().any(|n| n == name) => out.push(
                caps.name(&name)
                    .map(|m| Value::from(m.as_str()))
                    .unwrap_or_else(|| Value::from(())),
            ),
            _ => return Err(FilterError::failed("no such group")),
        }
    }
    Ok(Value::from(out))
}

fn regex_findall(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = str_of(args.input());
    let pattern = args.get(1).map(str_of).unwrap_or_default();
    let re = compile(&pattern, flag(args.get(3)), flag(args.get(2)))?;
    let groups = re.captures_len() - 1;
    let mut out = Vec::new();
    for caps in find_all(&re, value.as_str(), 0)? {
        let text = |i: usize| Value::from(caps.get(i).map(|m| m.as_str()).unwrap_or(""));
        out.push(match groups {
            0 => text(0),
            1 => text(1),
            n => Value::from((1..=n).map(text).collect::<Vec<_>>()),
        });
    }
    Ok(Value::from(out))
}

/// One piece of a Python replacement template.
enum Piece {
    Text(String),
    Group(usize),
}

fn parse_template(template: &str, re: &Regex) -> Result<Vec<Piece>, FilterError> {
    let chars: Vec<char> = template.chars().collect();
    let groups = re.captures_len();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    let flush = |text: &mut String, pieces: &mut Vec<Piece>| {
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(text)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' {
            text.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = chars.get(i + 1) else {
            return Err(FilterError::failed(format!(
                "bad escape (end of pattern) at position {i}"
            )));
        };
        match e {
            'g' => {
                let close = chars[i..].iter().position(|&x| x == '>').map(|p| i + p);
                let (Some('<'), Some(close)) = (chars.get(i + 2), close) else {
                    return Err(FilterError::failed(format!("missing < at position {}", i + 2)));
                };
                let name: String = chars[i + 3..close].iter().collect();
                let index = match name.parse::<usize>() {
                    Ok(n) if name.bytes().all(|b| b.is_ascii_digit()) => n,
                    _ => re.capture_names().position(|n| n == Some(name.as_str())).ok_or_else(
                        || FilterError::failed(format!("unknown group name '{name}'")),
                    )?,
                };
                if index >= groups {
                    return Err(FilterError::failed(format!(
                        "invalid group reference {index} at position {}",
                        i + 3
                    )));
                }
                flush(&mut text, &mut pieces);
                pieces.push(Piece::Group(index));
                i = close + 1;
            }
            '0' => {
                let digits: String =
                    chars[i + 1..].iter().take(3).take_while(|c| ('0'..='7').contains(c)).collect();
                let code = u32::from_str_radix(&digits, 8).unwrap_or(0);
                text.push(char::from_u32(code).unwrap_or('\0'));
                i += 1 + digits.len();
            }
            d if d.is_ascii_digit() => {
                let mut digits: String = d.to_string();
                if chars.get(i + 2).is_some_and(char::is_ascii_digit) {
                    digits.push(chars[i + 2]);
                    let octal = |c: Option<&char>| c.is_some_and(|c| ('0'..='7').contains(c));
                    if octal(Some(&d)) && octal(chars.get(i + 2)) && octal(chars.get(i + 3)) {
                        digits.push(chars[i + 3]);
                        let code = u32::from_str_radix(&digits, 8).unwrap_or(0);
                        if code > 0o377 {
                            return Err(FilterError::failed(format!(
                                "octal escape value \\{digits} outside of range 0-0o377 at position {i}"
                            )));
                        }
                        text.push(char::from_u32(code).unwrap_or('\0'));
                        i += 4;
                        continue;
                    }
                }
                let index: usize = digits.parse().unwrap_or(0);
                if index >= groups {
                    return Err(FilterError::failed(format!(
                        "invalid group reference {index} at position {}",
                        i + 1
                    )));
                }
                flush(&mut text, &mut pieces);
                pieces.push(Piece::Group(index));
                i += 1 + digits.len();
            }
            'n' | 't' | 'r' | 'f' | 'v' | 'a' | 'b' | '\\' => {
                text.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    _ => '\\',
                });
                i += 2;
            }
            e if e.is_ascii_alphabetic() => {
                return Err(FilterError::failed(format!("bad escape \\{e} at position {i}")));
            }
            e => {
                text.push('\\');
                text.push(e);
                i += 2;
            }
        }
    }
    flush(&mut text, &mut pieces);
    Ok(pieces)
}

fn regex_replace(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = match args.get(0) {
        Some(v) => str_of(v),
        None => String::new(),
    };
    let pattern = args.get(1).map(str_of).unwrap_or_default();
    let replacement = args.get(2).map(str_of).unwrap_or_default();
    let count_arg = args.get(5).and_then(|c| match pyval::num(c) {
        Some(pyval::Num::Int(i)) => Some(i),
        _ => None,
    });
    let count = usize::try_from(count_arg.unwrap_or(0).max(0)).unwrap_or(0);
    let mandatory = args.get(6).and_then(|c| match pyval::num(c) {
        Some(pyval::Num::Int(i)) => Some(i),
        _ => None,
    });
    let re = compile(&pattern, flag(args.get(3)), flag(args.get(4)))?;
    let template = parse_template(&replacement, &re)?;
    let matches = find_all(&re, value.as_str(), count)?;
    let mut out = String::with_capacity(value.len());
    let mut last = 0;
    for caps in &matches {
        let Some(m) = caps.get(0) else { continue };
        out.push_str(&value[last..m.start()]);
        for piece in &template {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Group(g) => out.push_str(caps.get(*g).map(|m| m.as_str()).unwrap_or("")),
            }
        }
        last = m.end();
    }
    out.push_str(&value[last..]);
    if let Some(mandatory) = mandatory.filter(|&m| m != 0)
        && mandatory != matches.len() as i128
    {
        return Err(FilterError::failed(format!(
            "'{pattern}' should match {mandatory} times, but matches {} times in '{value}'",
            count_arg.unwrap_or(0)
        )));
    }
    Ok(Value::from(out))
}

/// Python's `re.escape`.
fn py_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\u{b}\u{c}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn regex_escape(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = str_of(args.input());
    let re_type = args.get(1).map(str_of).unwrap_or_else(|| "python".into());
    match re_type.as_str() {
        "python" => Ok(Value::from(py_escape(&s))),
        "posix_basic" => {
            let mut out = String::with_capacity(s.len() * 2);
            for c in s.chars() {
                if "].[^$*\\".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            Ok(Value::from(out))
        }
        "posix_extended" => {
            Err(FilterError::failed(format!("Regex type ({re_type}) not yet implemented")))
        }
        _ => Err(FilterError::failed(format!("Invalid regex type ({re_type})"))),
    }
}
