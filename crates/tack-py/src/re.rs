//! Python's `re` on `fancy-regex`: Python's complaints about a pattern (`re.error`'s text and
//! position), the translation of what Python spells differently (`(?P=n)`, `\\Z`, a literal
//! `[` inside a class, braces that are not a repetition, and `$`, which in Python also
//! matches before a final newline), `findall`'s rule for empty matches, and Python's
//! replacement templates (`\\1`, `\\g<n>`, escapes).
//!
//! Every layer that takes a Python regular expression (the template filters and tests, the
//! agent's modules) goes through here, so one pattern means one thing everywhere.

use fancy_regex::{Captures, Regex};

/// A compiled Python pattern.
#[derive(Debug)]
pub struct PyRegex {
    re: Regex,
}

/// `re.compile` flags tack honours.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags {
    pub multiline: bool,
    pub dotall: bool,
}

/// Whether the pattern turns `flag` on inline (`(?m)`, `(?sm:...)`).
pub fn has_inline_flag(pattern: &str, flag: char) -> bool {
    let mut rest = pattern;
    while let Some(i) = rest.find("(?") {
        let after = &rest[i + 2..];
        let flags: String = after.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        if after[flags.len()..].starts_with([')', ':']) && flags.contains(flag) {
            return true;
        }
        rest = after;
    }
    false
}

/// Python's complaint about a pattern, found before translation.
pub fn syntax_error(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    let mut prev_repeatable = false;
    // Python 3.11 on: a global flags group (`(?i)`) may only open the whole pattern.
    let mut at_start = true;
    while i < chars.len() {
        if chars[i] == '(' && chars.get(i + 1) == Some(&'?') {
            let letters = chars[i + 2..].iter().take_while(|c| "aiLmsux".contains(**c)).count();
            if letters > 0 && chars.get(i + 2 + letters) == Some(&')') {
                if !at_start || !open.is_empty() {
                    return Some(format!("{GLOBAL_FLAGS_NOT_AT_START} at position {i}"));
                }
                i += 3 + letters;
                continue;
            }
        }
        at_start = false;
        match chars[i] {
            '\\' => {
                let Some(&e) = chars.get(i + 1) else {
                    return Some(format!("bad escape (end of pattern) at position {i}"));
                };
                if e.is_ascii_alphabetic() && !"AbBdDsSwWZafnrtvxuUNg".contains(e) {
                    return Some(format!("bad escape \\{e} at position {i}"));
                }
                i += 2;
                prev_repeatable = true;
                continue;
            }
            '[' => {
                let start = i;
                i += 1;
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while i < chars.len() && chars[i] != ']' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Some(format!("unterminated character set at position {start}"));
                }
                prev_repeatable = true;
            }
            '(' => {
                open.push(i);
                prev_repeatable = false;
                if chars.get(i + 1) == Some(&'?') {
                    i += 1;
                }
            }
            ')' => {
                if open.pop().is_none() {
                    return Some(format!("unbalanced parenthesis at position {i}"));
                }
                prev_repeatable = true;
            }
            '*' | '+' | '?' => {
                if !prev_repeatable {
                    return Some(format!("nothing to repeat at position {i}"));
                }
                // A second quantifier is Python's lazy or possessive marker.
                if matches!(chars.get(i + 1), Some('?' | '+')) {
                    i += 1;
                }
                prev_repeatable = false;
            }
            '|' => prev_repeatable = false,
            _ => prev_repeatable = true,
        }
        i += 1;
    }
    open.first().map(|p| format!("missing ), unterminated subpattern at position {p}"))
}

/// Whether `chars[i..]` starts a `{m}`, `{m,}`, `{,n}` or `{m,n}` repetition.
fn is_repetition(chars: &[char], i: usize) -> bool {
    let mut j = i + 1;
    let mut digits = 0;
    while chars.get(j).is_some_and(char::is_ascii_digit) {
        j += 1;
        digits += 1;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        while chars.get(j).is_some_and(char::is_ascii_digit) {
            j += 1;
            digits += 1;
        }
    }
    digits > 0 && chars.get(j) == Some(&'}')
}

/// Rewrites Python-only syntax into the syntax fancy-regex reads; `flags` become inline
/// flags of the result.
pub fn translate(pattern: &str, flags: Flags) -> String {
    let multiline = flags.multiline || has_inline_flag(pattern, 'm');
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    if flags.multiline {
        out.push_str("(?m)");
    }
    if flags.dotall {
        out.push_str("(?s)");
    }
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let n = chars[i + 1];
            if !in_class && n == 'Z' {
                out.push_str("\\z");
            } else {
                out.push(c);
                out.push(n);
            }
            i += 2;
            continue;
        }
        if in_class {
            if c == ']' {
                in_class = false;
            }
            if c == '[' {
                // A literal `[` inside a class: fancy-regex would read a nested class.
                out.push_str("\\[");
            } else {
                out.push(c);
            }
            i += 1;
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                out.push('[');
                i += 1;
                // `]` or `^]` right after the opening bracket is literal in both dialects.
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
                continue;
            }
            '(' if chars[i..].starts_with(&['(', '?', 'P', '=']) => {
                let end =
                    chars[i..].iter().position(|c| *c == ')').map(|p| p + i).unwrap_or(chars.len());
                let name: String = chars[i + 4..end].iter().collect();
                out.push_str(&format!("\\k<{name}>"));
                i = end + 1;
                continue;
            }
            '$' if !multiline => out.push_str("(?=\\n?\\z)"),
            '{' if !is_repetition(&chars, i) => out.push_str("\\{"),
            '}' => {
                // An unmatched `}` is literal in both dialects, but fancy-regex wants it escaped.
                let opened = out
                    .rfind('{')
                    .is_some_and(|p| !out[p..].contains('}') && !out[..p].ends_with('\\'));
                if opened { out.push('}') } else { out.push_str("\\}") }
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// The message of Python 3.11 on for a global flags group (`(?i)`) that does not open the
/// pattern; earlier Pythons accept it (with a `DeprecationWarning`).
pub const GLOBAL_FLAGS_NOT_AT_START: &str = "global flags not at the start of the expression";

/// `pattern` with each global flags group (`(?i)`, wherever written) moved to its start, as
/// Pythons before 3.11 read it: the flags apply to the whole pattern.
pub fn hoist_global_flags(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let (mut letters, mut body) = (String::new(), String::new());
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            body.extend(chars[i..(i + 2).min(chars.len())].iter());
            i += 2;
            continue;
        }
        if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '(' && chars.get(i + 1) == Some(&'?') {
            let n = chars[i + 2..].iter().take_while(|c| "aiLmsux".contains(**c)).count();
            if n > 0 && chars.get(i + 2 + n) == Some(&')') {
                for &flag in &chars[i + 2..i + 2 + n] {
                    if !letters.contains(flag) {
                        letters.push(flag);
                    }
                }
                i += 3 + n;
                continue;
            }
        }
        body.push(c);
        i += 1;
    }
    if letters.is_empty() { body } else { format!("(?{letters}){body}") }
}

impl PyRegex {
    /// `re.compile(pattern, flags)` as a Python before 3.11 reads it: a global flags group
    /// anywhere applies to the whole pattern ([`hoist_global_flags`]).
    pub fn new_before_3_11(pattern: &str, flags: Flags) -> Result<Self, String> {
        PyRegex::new(&hoist_global_flags(pattern), flags)
    }

    /// `re.compile(pattern, flags)`; `Err` is the compile error's text.
    pub fn new(pattern: &str, flags: Flags) -> Result<Self, String> {
        if let Some(msg) = syntax_error(pattern) {
            return Err(msg);
        }
        Regex::new(&translate(pattern, flags)).map(|re| PyRegex { re }).map_err(|e| e.to_string())
    }

    /// `re.search`: the first match's captures.
    pub fn search<'t>(&self, text: &'t str) -> Option<Captures<'t, str>> {
        self.re.captures(text).ok().flatten()
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.re.is_match(text).unwrap_or(false)
    }

    /// Every non-overlapping match, in order, as Python (3.7 on) finds them: an empty match
    /// may follow a non-empty one at the same position, but never another empty one.
    pub fn captures_all<'t>(&self, text: &'t str) -> Vec<Captures<'t, str>> {
        let mut out = Vec::new();
        let mut pos = 0;
        let mut last_empty_at = None;
        while pos <= text.len() {
            let Ok(Some(caps)) = self.re.captures_from_pos(text, pos) else { break };
            let Some((start, end)) = caps.get(0).map(|m| (m.start(), m.end())) else { break };
            if start == end && last_empty_at == Some(start) {
                // Step one character on and look again, as Python does after an empty match.
                match text[start..].chars().next() {
                    Some(c) => pos = start + c.len_utf8(),
                    None => break,
                }
                continue;
            }
            last_empty_at = (start == end).then_some(end);
            pos = end;
            out.push(caps);
        }
        out
    }
}

impl PyRegex {
    /// The check `re.sub` makes of a replacement template before it looks for a match (its
    /// `_compile_template`), raised even when nothing matches: `re.error`'s message
    /// ([`TemplateError::Re`]), or the `IndexError` of an unknown group name.
    pub fn check_template(&self, template: &str) -> Result<(), TemplateError> {
        if !template.contains('\\') {
            return Ok(());
        }
        let names: Vec<&str> = self.re.capture_names().flatten().collect();
        let groups = self.re.captures_len();
        for piece in parse_template(template).map_err(TemplateError::Re)? {
            let Piece::Group { key, at } = piece else { continue };
            match key.parse::<usize>() {
                Ok(n) if n < groups => {}
                Ok(n) => {
                    let message = format!("invalid group reference {n} at position {at}");
                    return Err(TemplateError::Re(message));
                }
                Err(_) if names.contains(&key.as_str()) => {}
                Err(_) => return Err(TemplateError::Index(format!("unknown group name '{key}'"))),
            }
        }
        Ok(())
    }

    /// `match.expand(template)`: Python's replacement-template language; `Err` is Python's
    /// message for a bad escape or an unknown group.
    pub fn expand(&self, template: &str, caps: &Captures<'_, str>) -> Result<String, String> {
        let names: Vec<&str> = self.re.capture_names().flatten().collect();
        let mut out = String::new();
        for piece in parse_template(template)? {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Group { key, .. } => {
                    let m = match key.parse::<usize>() {
                        Ok(n) if n < caps.len() => caps.get(n),
                        Ok(n) => return Err(format!("invalid group reference {n}")),
                        Err(_) => {
                            if !names.contains(&key.as_str()) {
                                return Err(format!("unknown group name '{key}'"));
                            }
                            caps.name(&key)
                        }
                    };
                    if let Some(m) = m {
                        out.push_str(m.as_str());
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A piece of a replacement template: text as it stands, or a group by number or name
/// (`at`: where the reference starts, as Python's parser reports it).
enum Piece {
    Text(String),
    Group { key: String, at: usize },
}

/// Python's replacement-template grammar (`_parser.parse_template`): escapes, `\N` and
/// `\g<name>` group references, `\0NN` octal; `Err` is `re.error`'s message for a bad one.
/// The one reading of the grammar [`PyRegex::check_template`] and [`PyRegex::expand`] share.
fn parse_template(template: &str) -> Result<Vec<Piece>, String> {
    let chars: Vec<char> = template.chars().collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    let group = |text: &mut String, pieces: &mut Vec<Piece>, key: String, at: usize| {
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(text)));
        }
        pieces.push(Piece::Group { key, at });
    };
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' {
            text.push(c);
            i += 1;
            continue;
        }
        let Some(&n) = chars.get(i + 1) else {
            return Err(format!("bad escape (end of pattern) at position {i}"));
        };
        match n {
            'g' => {
                if chars.get(i + 2) != Some(&'<') {
                    return Err(format!("missing < at position {}", i + 2));
                }
                let end = chars[i + 3..].iter().position(|c| *c == '>').map(|p| p + i + 3);
                let Some(end) = end else {
                    return Err(format!("missing >, unterminated name at position {}", i + 3));
                };
                group(&mut text, &mut pieces, chars[i + 3..end].iter().collect(), i + 3);
                i = end + 1;
            }
            '0'..='9' => {
                let mut j = i + 1;
                while j < chars.len() && j < i + 3 && chars[j].is_ascii_digit() {
                    j += 1;
                }
                let digits: String = chars[i + 1..j].iter().collect();
                if n == '0' {
                    let v = u32::from_str_radix(&digits, 8).unwrap_or(0);
                    text.push(char::from_u32(v).unwrap_or('\0'));
                } else {
                    group(&mut text, &mut pieces, digits, i + 1);
                }
                i = j;
            }
            'n' => push(&mut text, &mut i, '\n'),
            't' => push(&mut text, &mut i, '\t'),
            'r' => push(&mut text, &mut i, '\r'),
            'f' => push(&mut text, &mut i, '\x0c'),
            'v' => push(&mut text, &mut i, '\x0b'),
            'a' => push(&mut text, &mut i, '\x07'),
            'b' => push(&mut text, &mut i, '\x08'),
            '\\' => push(&mut text, &mut i, '\\'),
            c if c.is_ascii_alphabetic() => {
                return Err(format!("bad escape \\{c} at position {i}"));
            }
            c => {
                text.push('\\');
                text.push(c);
                i += 2;
            }
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// Why a replacement template is refused, as Python raises it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// `re.error`, with its message.
    Re(String),
    /// `IndexError`: a group name the pattern does not have (Python's parser raises it
    /// outside `re.error`, so code that catches only `re.error` lets it escape).
    Index(String),
}

fn push(out: &mut String, i: &mut usize, c: char) {
    out.push(c);
    *i += 2;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_named_groups_and_dollar_translate() {
        assert_eq!(translate("(?P=a)$", Flags::default()), "\\k<a>(?=\\n?\\z)");
        assert_eq!(translate("^a$", Flags { multiline: true, dotall: false }), "(?m)^a$");
        assert_eq!(translate("(?m)^a$", Flags::default()), "(?m)^a$");
        // Python 3.11 on refuses global flags anywhere but at the start.
        assert_eq!(syntax_error("(?i)(?m)^a"), None);
        assert_eq!(syntax_error("(?i:a)b(?s:c)"), None);
        assert_eq!(
            syntax_error("^(?i)a|^(?i)b").as_deref(),
            Some("global flags not at the start of the expression at position 1")
        );
        assert_eq!(
            syntax_error("a|(?i)b").as_deref(),
            Some("global flags not at the start of the expression at position 2")
        );
        assert_eq!(
            syntax_error("(a(?i)b)").as_deref(),
            Some("global flags not at the start of the expression at position 2")
        );
        assert_eq!(hoist_global_flags("^(?i)a|^(?i)b"), "(?i)^a|^b");
        assert_eq!(hoist_global_flags("[(?i)]x(?s)\\(?m)"), "(?s)[(?i)]x\\(?m)");
        let re = PyRegex::new_before_3_11("a(?i)B", Flags::default()).expect("compiles");
        assert!(re.is_match("Ab"), "the flag applies to the whole pattern");
        assert_eq!(translate("a{x}", Flags::default()), "a\\{x\\}");
    }

    #[test]
    fn python_errors_come_before_translation() {
        assert_eq!(
            syntax_error("a("),
            Some("missing ), unterminated subpattern at position 1".into())
        );
        assert!(PyRegex::new("*", Flags::default()).is_err());
    }
}
