//! Python's `json.loads`, as CPython 3.13's decoder reads text into a [`Node`] tree: `NaN`
//! and `Infinity` are numbers, `1e5` is a float (where YAML 1.1 would keep a string), integers
//! are unbounded ([`Value::BigInt`] past 64 bits), a duplicate key keeps its first position and
//! its last value, a leading byte-order mark is refused, and every error reads as Python's
//! `JSONDecodeError` does: `Expecting value: line 1 column 1 (char 0)`. serde_json differs on
//! all of these.
//!
//! One decoder serves every caller: the data loader and inventory scripts (through
//! [`loads_with`] and ansible's object hook for `__ansible_vault`/`__ansible_unsafe`, which is
//! the loader's), and the `from_json` filter (plain [`loads`]). Lone UTF-16 surrogates, which a
//! Python string can hold and a Rust one cannot, become U+FFFD.

use std::convert::Infallible;

use tack_diag::Origin;

use crate::{Mapping, Node, Value};

/// A JSON syntax error in Python's words: `msg: line L column C (char N)`; or, with no
/// position, Python's `RecursionError` for nesting deeper than it decodes.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSyntaxError {
    pub msg: String,
    pub line: usize,
    pub column: usize,
    /// Position in characters (Python's string index).
    pub pos: usize,
    /// Whether the message has a position (a syntax error's) or stands alone.
    pub positioned: bool,
}

impl std::fmt::Display for JsonSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.positioned {
            write!(f, "{}: line {} column {} (char {})", self.msg, self.line, self.column, self.pos)
        } else {
            f.write_str(&self.msg)
        }
    }
}

impl std::error::Error for JsonSyntaxError {}

/// How deeply arrays and objects may nest: where CPython 3.13's decoder, called from a task
/// argument's template under ansible-core 2.21, runs out of C recursion (measured: 9985
/// levels decode, 9986 do not; the limit depends on how deep its caller already is). Reading
/// that deep needs a large stack: see [`nesting_depth`].
pub const MAX_DEPTH: usize = 9985;

/// How deeply `text`'s arrays and objects nest, read without recursion (strings skipped): a
/// caller decides from it whether to decode on a thread with a stack large enough for
/// [`MAX_DEPTH`] levels.
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Why [`loads_with`] failed: the text is not JSON, or the object hook refused an object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsonLoadError<E> {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error("{0}")]
    Hook(E),
}

/// `json.loads(text)`, every node tagged with `origin`.
pub fn loads(text: &str, origin: Option<&Origin>) -> Result<Node, JsonSyntaxError> {
    loads_with(text, origin, |map| Ok::<_, Infallible>(Value::Map(map))).map_err(|e| match e {
        JsonLoadError::Syntax(e) => e,
        JsonLoadError::Hook(never) => match never {},
    })
}

/// `json.loads(text, object_hook=hook)`: each object, once read, becomes what `hook` makes of
/// it, and a hook's error ends the reading there, as the hook's exception does in Python
/// (before any syntax error further on).
pub fn loads_with<E>(
    text: &str,
    origin: Option<&Origin>,
    hook: impl Fn(Mapping) -> Result<Value, E>,
) -> Result<Node, JsonLoadError<E>> {
    let mut p = Parser { text, bytes: text.as_bytes(), origin, hook: &hook, pos: 0, depth: 0 };
    if text.starts_with('\u{feff}') {
        return Err(p.error("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0).into());
    }
    p.skip_ws();
    let value = p.value()?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.error("Extra data", p.pos).into());
    }
    Ok(value)
}

struct Parser<'a, H> {
    text: &'a str,
    bytes: &'a [u8],
    origin: Option<&'a Origin>,
    hook: &'a H,
    pos: usize,
    /// Arrays and objects open around the one being read.
    depth: usize,
}

impl<E, H: Fn(Mapping) -> Result<Value, E>> Parser<'_, H> {
    fn node(&self, value: Value) -> Node {
        Node::new(value, self.origin.cloned())
    }

    /// An error at byte offset `at`, positioned in characters as Python counts them.
    fn error(&self, msg: &str, at: usize) -> JsonSyntaxError {
        let before = &self.text[..at.min(self.text.len())];
        let pos = before.chars().count();
        let line = before.matches('\n').count() + 1;
        let column = match before.rfind('\n') {
            Some(nl) => before[nl + 1..].chars().count() + 1,
            None => pos + 1,
        };
        JsonSyntaxError { msg: msg.to_string(), line, column, pos, positioned: true }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn starts_with(&self, word: &str) -> bool {
        self.bytes[self.pos..].starts_with(word.as_bytes())
    }

    fn value(&mut self) -> Result<Node, JsonLoadError<E>> {
        let start = self.pos;
        let expecting = |p: &Self| JsonLoadError::from(p.error("Expecting value", start));
        match self.peek() {
            Some(b'"') => {
                let s = self.string()?;
                Ok(self.node(Value::Str(s)))
            }
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'n') if self.starts_with("null") => self.word(4, Value::Null),
            Some(b't') if self.starts_with("true") => self.word(4, Value::Bool(true)),
            Some(b'f') if self.starts_with("false") => self.word(5, Value::Bool(false)),
            Some(b'N') if self.starts_with("NaN") => self.word(3, Value::Float(f64::NAN)),
            Some(b'I') if self.starts_with("Infinity") => self.word(8, Value::Float(f64::INFINITY)),
            Some(b'-') if self.starts_with("-Infinity") => {
                self.word(9, Value::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number().ok_or_else(|| expecting(self)),
            _ => Err(expecting(self)),
        }
    }

    fn word(&mut self, len: usize, value: Value) -> Result<Node, JsonLoadError<E>> {
        self.pos += len;
        Ok(self.node(value))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, taking the longest valid prefix.
    fn number(&mut self) -> Option<Node> {
        let start = self.pos;
        let mut i = self.pos;
        let digits = |i: &mut usize, b: &[u8]| {
            let from = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i > from
        };
        if self.bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        match self.bytes.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                digits(&mut i, self.bytes);
            }
            _ => return None,
        }
        let mut is_float = false;
        if self.bytes.get(i) == Some(&b'.') {
            let mut j = i + 1;
            if digits(&mut j, self.bytes) {
                i = j;
                is_float = true;
            }
        }
        if matches!(self.bytes.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(self.bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if digits(&mut j, self.bytes) {
                i = j;
                is_float = true;
            }
        }
        self.pos = i;
        let text = &self.text[start..i];
        let value = if is_float {
            Value::Float(text.parse().unwrap_or(f64::NAN))
        } else {
            match text.parse::<i64>() {
                Ok(n) => Value::Int(n),
                Err(_) => Value::BigInt(text.to_string()),
            }
        };
        Some(self.node(value))
    }

    fn string(&mut self) -> Result<String, JsonSyntaxError> {
        let begin = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(self.error("Unterminated string starting at", begin));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    let esc_at = self.pos;
                    let Some(&esc) = self.bytes.get(self.pos + 1) else {
                        return Err(self.error("Unterminated string starting at", begin));
                    };
                    self.pos += 2;
                    let plain = match esc {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            out.push(self.unicode_escape(esc_at)?);
                            continue;
                        }
                        _ => return Err(self.error("Invalid \\escape", esc_at)),
                    };
                    out.push(plain);
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("Invalid control character at", self.pos));
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape whose backslash is at `esc_at`; `self.pos` is just
    /// past the `u`. A high surrogate followed by a low one combines into one character.
    fn unicode_escape(&mut self, esc_at: usize) -> Result<char, JsonSyntaxError> {
        let first = self.hex4().ok_or_else(|| self.error("Invalid \\uXXXX escape", esc_at + 1))?;
        if (0xd800..=0xdbff).contains(&first) && self.starts_with("\\u") {
            let save = self.pos;
            self.pos += 2;
            match self.hex4() {
                Some(second) if (0xdc00..=0xdfff).contains(&second) => {
                    let combined = 0x10000 + (((first - 0xd800) << 10) | (second - 0xdc00));
                    return Ok(char::from_u32(combined).unwrap_or('\u{fffd}'));
                }
                Some(_) => self.pos = save,
                None => return Err(self.error("Invalid \\uXXXX escape", save + 1)),
            }
        }
        Ok(char::from_u32(first).unwrap_or('\u{fffd}'))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    fn read_object(&mut self) -> Result<Node, JsonLoadError<E>> {
        self.pos += 1;
        let mut map = Mapping::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return self.hooked(map);
        }
        loop {
            if self.peek() != Some(b'"') {
                let msg = "Expecting property name enclosed in double quotes";
                return Err(self.error(msg, self.pos).into());
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("Expecting ':' delimiter", self.pos).into());
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value()?;
            map.insert(self.node(Value::Str(key)), value);
            if self.item_end(b'}', "object")? {
                break;
            }
        }
        self.hooked(map)
    }

    /// An object read to its end, as the object hook makes it.
    fn hooked(&self, map: Mapping) -> Result<Node, JsonLoadError<E>> {
        let value = (self.hook)(map).map_err(JsonLoadError::Hook)?;
        Ok(self.node(value))
    }

    /// What follows an object's or array's item: `true` at its closing `close`, `false` after
    /// a comma. A comma right before `close` is refused, as Python's decoder refuses it.
    fn item_end(&mut self, close: u8, container: &str) -> Result<bool, JsonLoadError<E>> {
        self.skip_ws();
        match self.peek() {
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            Some(b',') => {
                let comma = self.pos;
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(close) {
                    let msg = format!("Illegal trailing comma before end of {container}");
                    return Err(self.error(&msg, comma).into());
                }
                Ok(false)
            }
            _ => Err(self.error("Expecting ',' delimiter", self.pos).into()),
        }
    }

    /// One more level of nesting for `what` (`array`, `object`), or Python's
    /// `RecursionError` past [`MAX_DEPTH`].
    fn nested<T>(
        &mut self,
        what: &str,
        read: impl FnOnce(&mut Self) -> Result<T, JsonLoadError<E>>,
    ) -> Result<T, JsonLoadError<E>> {
        if self.depth >= MAX_DEPTH {
            return Err(JsonSyntaxError {
                msg: format!(
                    "maximum recursion depth exceeded while decoding a JSON {what} from a \
                     unicode string"
                ),
                line: 0,
                column: 0,
                pos: 0,
                positioned: false,
            }
            .into());
        }
        self.depth += 1;
        let result = read(self);
        self.depth -= 1;
        result
    }

    fn array(&mut self) -> Result<Node, JsonLoadError<E>> {
        self.nested("array", Self::read_array)
    }

    fn object(&mut self) -> Result<Node, JsonLoadError<E>> {
        self.nested("object", Self::read_object)
    }

    fn read_array(&mut self) -> Result<Node, JsonLoadError<E>> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(self.node(Value::Seq(items)));
        }
        loop {
            items.push(self.value()?);
            if self.item_end(b']', "array")? {
                break;
            }
        }
        Ok(self.node(Value::Seq(items)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_outside_strings_and_limited_in_the_decoder() {
        assert_eq!(nesting_depth(r#"[{"a": ["[[[", "\"["]}]"#), 3);
        assert_eq!(nesting_depth("[[]][[[]]]"), 3);
        let deep = "[".repeat(MAX_DEPTH + 1);
        let e = std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn(move || loads(&deep, None).unwrap_err().to_string())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(
            e,
            "maximum recursion depth exceeded while decoding a JSON array from a unicode string"
        );
    }

    fn err(text: &str) -> String {
        loads(text, None).unwrap_err().to_string()
    }

    fn ok(text: &str) -> Value {
        loads(text, None).unwrap().value
    }

    #[test]
    fn errors_read_as_pythons() {
        // Each message is what CPython 3.13's json.loads raised for the same text.
        assert_eq!(err(""), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(
            err("\u{feff}{}"),
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"
        );
        assert_eq!(err("  "), "Expecting value: line 1 column 3 (char 2)");
        assert_eq!(err("tru"), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(err("-"), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(err("\"a\u{1}\""), "Invalid control character at: line 1 column 3 (char 2)");
        assert_eq!(err("\"ab"), "Unterminated string starting at: line 1 column 1 (char 0)");
        assert_eq!(err("\"\\q\""), "Invalid \\escape: line 1 column 2 (char 1)");
        assert_eq!(err("\"\\u12\""), "Invalid \\uXXXX escape: line 1 column 3 (char 2)");
        assert_eq!(err("{\"a\" 1}"), "Expecting ':' delimiter: line 1 column 6 (char 5)");
        assert_eq!(err("[1 2]"), "Expecting ',' delimiter: line 1 column 4 (char 3)");
        assert_eq!(
            err("{\"a\":1,}"),
            "Illegal trailing comma before end of object: line 1 column 7 (char 6)"
        );
        assert_eq!(
            err("[1,]"),
            "Illegal trailing comma before end of array: line 1 column 3 (char 2)"
        );
        assert_eq!(err("[1] x"), "Extra data: line 1 column 5 (char 4)");
        assert_eq!(err("01"), "Extra data: line 1 column 2 (char 1)");
        assert_eq!(err("1."), "Extra data: line 1 column 2 (char 1)");
        assert_eq!(
            err("{\"g\": {\"hosts\": [\"a\"]},\n"),
            "Expecting property name enclosed in double quotes: line 2 column 1 (char 24)"
        );
        assert_eq!(
            err("{1:2}"),
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
    }

    #[test]
    fn values_type_as_pythons() {
        assert_eq!(ok("1e5"), Value::Float(100000.0));
        assert_eq!(ok("-3"), Value::Int(-3));
        assert_eq!(ok("10000000000000000000000"), Value::BigInt("10000000000000000000000".into()));
        assert!(matches!(ok("NaN"), Value::Float(x) if x.is_nan()));
        assert_eq!(ok("-Infinity"), Value::Float(f64::NEG_INFINITY));
        assert_eq!(ok("\"\\ud83d\\ude00\\u00e9\""), Value::Str("😀é".into()));
        let Value::Map(m) = ok("{\"a\":1, \"b\":3, \"a\":2}") else { panic!() };
        let keys: Vec<_> = m.keys().map(|k| k.as_str().unwrap().to_string()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(m.get("a").unwrap().value, Value::Int(2));
    }

    #[test]
    fn a_hook_error_comes_before_a_later_syntax_error() {
        let hook = |m: Mapping| if m.is_empty() { Err("empty") } else { Ok(Value::Map(m)) };
        assert_eq!(loads_with("[{}, x]", None, hook), Err(JsonLoadError::Hook("empty")));
        assert_eq!(
            loads_with("[{\"a\": 1}, x]", None, hook).unwrap_err().to_string(),
            "Expecting value: line 1 column 12 (char 11)"
        );
    }
}
