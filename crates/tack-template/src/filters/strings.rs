//! String filters: Jinja2's (`capitalize`, `lower`, `upper`, `title`, `trim`, `replace`,
//! `indent`, `wordcount`, `center`, `truncate`, `string`, `format`, `wordwrap`, `striptags`,
//! `escape`/`e`, `forceescape`, `safe`, `xmlattr`, `pprint`) and ansible's `split` and `quote`.
//!
//! Jinja2 converts the input with `str()` first (so `1 | upper` is `'1'`), uses Python's
//! definitions of whitespace and line breaks, and folds case by Unicode rules; minijinja's
//! versions differ in those points, so all are written here.

use minijinja::value::ValueKind;
use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::pyval::{self, str_of, type_name};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("capitalize", Sig::new("do_capitalize", &["s"], 1), capitalize),
    Entry::new("lower", Sig::new("do_lower", &["s"], 1), lower),
    Entry::new("upper", Sig::new("do_upper", &["s"], 1), upper),
    Entry::new("title", Sig::new("do_title", &["s"], 1), title),
    Entry::new("trim", Sig::new("do_trim", &["value", "chars"], 1), trim),
    Entry::new("replace", Sig::new("do_replace", &["s", "old", "new", "count"], 3), replace),
    Entry::new("indent", Sig::new("do_indent", &["s", "width", "first", "blank"], 1), indent),
    Entry::new("wordcount", Sig::new("do_wordcount", &["s"], 1), wordcount),
    Entry::new("center", Sig::new("do_center", &["value", "width"], 1), center),
    Entry::new(
        "truncate",
        Sig::new("do_truncate", &["s", "length", "killwords", "end", "leeway"], 1).env(),
        truncate,
    ),
    Entry::new("string", Sig::builtin_one("soft_str"), string),
    Entry::new("format", Sig::new("do_format", &["value"], 1).varargs().varkw(), format),
    Entry::new(
        "wordwrap",
        Sig::new(
            "do_wordwrap",
            &["s", "width", "break_long_words", "wrapstring", "break_on_hyphens"],
            1,
        )
        .env(),
        wordwrap,
    ),
    Entry::new("striptags", Sig::new("do_striptags", &["value"], 1), striptags),
    Entry::new("escape", Sig::builtin_one("escape"), escape),
    Entry::new("e", Sig::builtin_one("escape"), escape),
    Entry::new("forceescape", Sig::new("do_forceescape", &["value"], 1), forceescape),
    Entry::new("safe", Sig::new("do_mark_safe", &["value"], 1), safe),
    Entry::new("xmlattr", Sig::new("do_xmlattr", &["d", "autospace"], 1), xmlattr),
    Entry::new("pprint", Sig::new("do_pprint", &["value"], 1), pprint),
    Entry::new("split", Sig::new("split", &["self", "sep", "maxsplit"], 1), split),
    Entry::new("quote", Sig::new("quote", &["a"], 1), quote),
    Entry::new(
        "urlize",
        Sig::new(
            "do_urlize",
            &["value", "trim_url_limit", "nofollow", "target", "rel", "extra_schemes"],
            1,
        ),
        urlize,
    ),
];

fn urlize(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let trim_limit = match args.opt(1) {
        None => None,
        Some(v) => Some(usize::try_from(int_arg(Some(v), 0)?).unwrap_or(0)),
    };
    let mut rel_parts: Vec<String> = args
        .opt(4)
        .map(str_of)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if args.get(2).is_some_and(pyval::truthy) {
        rel_parts.push("nofollow".into());
    }
    // Jinja2's default policy adds `noopener`.
    rel_parts.push("noopener".into());
    rel_parts.sort();
    rel_parts.dedup();
    let rel = rel_parts.join(" ");
    let target = args.opt(3).map(str_of);
    if let Some(schemes) = args.opt(5)
        && pyval::list_of(schemes).is_some_and(|l| !l.is_empty())
    {
        return Err(FilterError::failed("tack does not implement urlize's extra_schemes"));
    }
    super::urlize::urlize(&text(args), trim_limit, &rel, target.as_deref()).map(Value::from)
}

fn text(args: &Bound) -> String {
    str_of(args.input())
}

/// Python's `str.isspace()` for one character.
pub(super) fn is_py_space(c: char) -> bool {
    matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ' | '\u{85}' | '\u{a0}' | '\u{1680}')
        || matches!(c, '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}')
        || c == '\u{3000}'
}

/// Python's `str.splitlines()`.
pub(super) fn splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        out.push(&s[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r'
            && let Some((j, '\n')) = chars.peek().copied()
        {
            chars.next();
            end = j + 1;
        }
        start = end;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

fn py_upper(s: &str) -> String {
    s.to_uppercase()
}

fn py_lower(s: &str) -> String {
    s.to_lowercase()
}

/// Python's `str.capitalize()`: the first character in title case, the rest lowered.
fn capitalize_str(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out = title_char(first);
            out.push_str(&py_lower(chars.as_str()));
            out
        }
        None => String::new(),
    }
}

fn title_char(c: char) -> String {
    // The few characters whose title case is not their upper case (ǅ-style digraphs).
    match c {
        'Ǆ' | 'ǅ' | 'ǆ' => "ǅ".into(),
        'Ǉ' | 'ǈ' | 'ǉ' => "ǈ".into(),
        'Ǌ' | 'ǋ' | 'ǌ' => "ǋ".into(),
        'Ǳ' | 'ǲ' | 'ǳ' => "ǲ".into(),
        _ => c.to_uppercase().collect(),
    }
}

fn capitalize(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(capitalize_str(&text(args))))
}

fn lower(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(py_lower(&text(args))))
}

fn upper(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(py_upper(&text(args))))
}

fn title(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    // Jinja2 splits before runs of `-`, whitespace and opening brackets and capitalises each
    // piece's first character.
    let s = text(args);
    let is_sep = |c: char| c == '-' || is_py_space(c) || matches!(c, '(' | '{' | '[' | '<');
    let mut out = String::with_capacity(s.len());
    let mut piece = String::new();
    let mut in_sep = None;
    let flush = |piece: &mut String, out: &mut String| {
        let mut chars = piece.chars();
        if let Some(first) = chars.next() {
            out.push_str(&py_upper(&first.to_string()));
            out.push_str(&py_lower(chars.as_str()));
        }
        piece.clear();
    };
    for c in s.chars() {
        let sep = is_sep(c);
        if in_sep.is_some_and(|was| was != sep) {
            flush(&mut piece, &mut out);
        }
        in_sep = Some(sep);
        piece.push(c);
    }
    flush(&mut piece, &mut out);
    Ok(Value::from(out))
}

fn trim(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = text(args);
    let out = match args.opt(1) {
        None => s.trim_matches(is_py_space).to_string(),
        Some(chars) => {
            let Some(set) = chars.as_str() else {
                return Err(FilterError::failed(format!(
                    "strip arg must be None or str, not {}",
                    type_name(chars)
                )));
            };
            s.trim_matches(|c| set.contains(c)).to_string()
        }
    };
    Ok(Value::from(out))
}

/// Python's `str.replace(old, new, count)` (`count < 0`: all).
pub(super) fn py_replace(s: &str, old: &str, new: &str, count: i64) -> String {
    if count < 0 {
        if old.is_empty() {
            let mut out = String::from(new);
            for c in s.chars() {
                out.push(c);
                out.push_str(new);
            }
            return out;
        }
        return s.replace(old, new);
    }
    let count = usize::try_from(count).unwrap_or(0);
    if old.is_empty() {
        let mut out = String::new();
        let mut done = 0;
        for c in s.chars() {
            if done < count {
                out.push_str(new);
                done += 1;
            }
            out.push(c);
        }
        if done < count {
            out.push_str(new);
        }
        return out;
    }
    s.replacen(old, new, count)
}

fn replace(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = text(args);
    let old = args.get(1).map(str_of).unwrap_or_default();
    let new = args.get(2).map(str_of).unwrap_or_default();
    let count = match args.opt(3) {
        None => -1,
        Some(c) => match pyval::num(c) {
            Some(pyval::Num::Int(i)) => i64::try_from(i).unwrap_or(i64::MAX),
            _ => {
                return Err(FilterError::failed(format!(
                    "'{}' object cannot be interpreted as an integer",
                    type_name(c)
                )));
            }
        },
    };
    Ok(Value::from(py_replace(&s, &old, &new, count)))
}

fn indent(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let input = args.input();
    let Some(s) = input.as_str() else {
        return Err(FilterError::failed(format!(
            "unsupported operand type(s) for +=: '{}' and 'str'",
            type_name(input)
        )));
    };
    let indention = match args.get(1) {
        None => "    ".to_string(),
        Some(w) if w.kind() == ValueKind::String => str_of(w),
        Some(w) => match pyval::num(w) {
            Some(pyval::Num::Int(i)) => {
                crate::python::memory::repeat(" ", usize::try_from(i).unwrap_or(0))
            }
            _ => {
                return Err(FilterError::failed(format!(
                    "can't multiply sequence by non-int of type '{}'",
                    type_name(w)
                )));
            }
        },
    };
    let first = args.get(2).is_some_and(pyval::truthy);
    let blank = args.get(3).is_some_and(pyval::truthy);
    let with_newline = format!("{s}\n");
    let lines = splitlines(&with_newline);
    let mut rv = if blank {
        lines.join(&format!("\n{indention}"))
    } else {
        let mut rest = lines.iter();
        let mut rv = rest.next().copied().unwrap_or_default().to_string();
        let tail: Vec<String> = rest
            .map(|line| if line.is_empty() { String::new() } else { format!("{indention}{line}") })
            .collect();
        if !tail.is_empty() {
            rv.push('\n');
            rv.push_str(&tail.join("\n"));
        }
        rv
    };
    if first {
        rv = format!("{indention}{rv}");
    }
    Ok(Value::from(rv))
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn wordcount(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = text(args);
    let mut count = 0;
    let mut in_word = false;
    for c in s.chars() {
        let w = is_word_char(c);
        if w && !in_word {
            count += 1;
        }
        in_word = w;
    }
    Ok(Value::from(count))
}

fn center(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = text(args);
    let width = match args.get(1) {
        None => 80,
        Some(w) => match pyval::num(w) {
            Some(pyval::Num::Int(i)) => i64::try_from(i).unwrap_or(0),
            _ => {
                return Err(FilterError::failed(format!(
                    "'{}' object cannot be interpreted as an integer",
                    type_name(w)
                )));
            }
        },
    };
    let len = s.chars().count() as i64;
    if width <= len {
        return Ok(Value::from(s));
    }
    let marg = width - len;
    let left = marg / 2 + (marg & width & 1);
    let right = marg - left;
    let mem = crate::python::memory::repeat;
    Ok(Value::from(format!("{}{s}{}", mem(" ", left as usize), mem(" ", right as usize))))
}

fn int_arg(value: Option<&Value>, default: i64) -> Result<i64, FilterError> {
    match value {
        None => Ok(default),
        Some(v) => match pyval::num(v) {
            Some(pyval::Num::Int(i)) => Ok(i64::try_from(i).unwrap_or(i64::MAX)),
            _ => Err(FilterError::failed(format!(
                "'{}' object cannot be interpreted as an integer",
                type_name(v)
            ))),
        },
    }
}

/// `s[:n]` by code points, Python's negative indexes included.
fn py_prefix(s: &str, n: i64) -> String {
    let len = s.chars().count() as i64;
    let end = if n < 0 { (len + n).max(0) } else { n.min(len) };
    s.chars().take(end as usize).collect()
}

fn truncate(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = text(args);
    let length = int_arg(args.get(1), 255)?;
    let killwords = args.get(2).is_some_and(pyval::truthy);
    let end = args.get(3).map(str_of).unwrap_or_else(|| "...".into());
    let leeway = int_arg(args.opt(4), 5)?;
    let end_len = end.chars().count() as i64;
    if length < end_len {
        return Err(FilterError::failed(format!("expected length >= {end_len}, got {length}")));
    }
    if leeway < 0 {
        return Err(FilterError::failed(format!("expected leeway >= 0, got {leeway}")));
    }
    if s.chars().count() as i64 <= length + leeway {
        return Ok(Value::from(s));
    }
    let head = py_prefix(&s, length - end_len);
    if killwords {
        return Ok(Value::from(format!("{head}{end}")));
    }
    let kept = match head.rsplit_once(' ') {
        Some((before, _)) => before.to_string(),
        None => head,
    };
    Ok(Value::from(format!("{kept}{end}")))
}

fn string(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    // Jinja2's `soft_str` hands a string back as it is (with its tags, in ansible).
    let input = args.input();
    if input.kind() == minijinja::value::ValueKind::String {
        return Ok(input.clone());
    }
    // A container holding a value that fails when read (an undecryptable `!vault` one) fails
    // here, as ansible's marker does when `str()` reaches it.
    pyval::try_str_of(input).map(Value::from).map_err(FilterError::Template)
}

fn format(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    if !args.extra.is_empty() && !args.extra_kw.is_empty() {
        return Err(FilterError::failed(
            "can't handle positional and keyword arguments at the same time",
        ));
    }
    let fmt = text(args);
    let values = if args.extra_kw.is_empty() {
        Value::from(args.extra.clone())
    } else {
        Value::from_pairs(args.extra_kw.iter().map(|(k, v)| (Value::from(k.as_str()), v.clone())))
    };
    super::printf::percent_format(&fmt, &values).map(Value::from)
}

fn wordwrap(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let s = text(args);
    let width = usize::try_from(int_arg(args.get(1), 79)?).unwrap_or(0);
    let break_long = args.get(2).is_none_or(pyval::truthy);
    let wrapstring = args.opt(3).map(str_of).unwrap_or_else(|| "\n".into());
    let on_hyphens = args.get(4).is_none_or(pyval::truthy);
    let out: Vec<String> = splitlines(&s)
        .into_iter()
        .map(|line| {
            super::textwrap::wrap_line(line, width, break_long, on_hyphens).join(&wrapstring)
        })
        .collect();
    Ok(Value::from(out.join(&wrapstring)))
}

/// `html.escape`-style entity decoding for the entities markup carries most.
fn unescape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';').filter(|&e| e <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn striptags(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let mut s = text(args);
    while let Some(start) = s.find("<!--") {
        match s[start..].find("-->") {
            Some(end) => s.replace_range(start..start + end + 3, ""),
            None => break,
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(start) = rest.find('<') {
        match rest[start..].find('>') {
            Some(end) if end > 1 => {
                out.push_str(&rest[..start]);
                rest = &rest[start + end + 1..];
            }
            _ => {
                out.push_str(&rest[..=start]);
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    let collapsed: Vec<&str> = out.split(is_py_space).filter(|w| !w.is_empty()).collect();
    Ok(Value::from(unescape_html(&collapsed.join(" "))))
}

/// markupsafe's `escape`.
pub(super) fn escape_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn escape(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let input = args.input();
    if input.is_safe() {
        return Ok(input.clone());
    }
    Ok(Value::from_safe_string(escape_str(&text(args))))
}

fn forceescape(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from_safe_string(escape_str(&text(args))))
}

fn safe(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from_safe_string(text(args)))
}

fn xmlattr(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let d = args.input();
    if d.kind() != ValueKind::Map {
        return Err(FilterError::failed(format!(
            "'{}' object has no attribute 'items'",
            type_name(d)
        )));
    }
    let autospace = args.get(1).is_none_or(pyval::truthy);
    let mut items = Vec::new();
    for key in d.try_iter()? {
        let value = d.get_item(&key).unwrap_or_default();
        if value.is_none() || value.is_undefined() {
            continue;
        }
        let key = str_of(&key);
        if key.chars().any(|c| c.is_ascii_whitespace() || matches!(c, '/' | '>' | '=' | '\x0b')) {
            return Err(FilterError::failed(format!(
                "Invalid character in attribute name: {}",
                tack_yaml::pyrepr::str_repr(&key)
            )));
        }
        items.push(format!("{}=\"{}\"", escape_str(&key), escape_str(&str_of(&value))));
    }
    let mut rv = items.join(" ");
    if autospace && !rv.is_empty() {
        rv.insert(0, ' ');
    }
    Ok(Value::from_safe_string(rv))
}

fn pprint(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    // ansible's lazy lists and dicts are not the types `pprint` lays out, so it falls back to
    // their `repr()` (one line, keys in their own order); scalars print as `repr()` too.
    Ok(Value::from(pyval::repr_of(args.input())))
}

fn split(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let input = args.input();
    let Some(s) = input.as_str() else {
        return Err(FilterError::failed(format!(
            "descriptor 'split' for 'str' objects doesn't apply to a '{}' object",
            type_name(input)
        )));
    };
    let maxsplit = match args.opt(2) {
        None => -1,
        Some(m) => int_arg(Some(m), -1)?,
    };
    let limit = usize::try_from(maxsplit).ok();
    let parts: Vec<Value> = match args.opt(1) {
        None => {
            let mut out = Vec::new();
            let mut rest = s.trim_start_matches(is_py_space);
            while !rest.is_empty() {
                if limit.is_some_and(|l| out.len() >= l) {
                    out.push(Value::from(rest.trim_end_matches(is_py_space)));
                    break;
                }
                let end = rest.find(is_py_space).unwrap_or(rest.len());
                out.push(Value::from(&rest[..end]));
                rest = rest[end..].trim_start_matches(is_py_space);
            }
            out
        }
        Some(sep) => {
            let Some(sep) = sep.as_str() else {
                return Err(FilterError::failed(format!(
                    "must be str or None, not {}",
                    type_name(sep)
                )));
            };
            if sep.is_empty() {
                return Err(FilterError::failed("empty separator"));
            }
            match limit {
                Some(l) => s.splitn(l + 1, sep).map(Value::from).collect(),
                None => s.split(sep).map(Value::from).collect(),
            }
        }
    };
    Ok(Value::from(parts))
}

fn quote(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let input = args.input();
    let s = if input.is_none() { String::new() } else { text(args) };
    Ok(Value::from(tack_py::shlex::quote(&s)))
}
