//! JSON text exactly as Python's `json.dumps` writes it for ansible-core's encoders.
//!
//! ansible prints JSON through Python's standard `json` module (`ansible-inventory --list`,
//! callbacks, the `to_json`/`to_nice_json` filters). serde_json's output differs from it in
//! float formatting (`1e+16`, `1e-05`), escaping (`ensure_ascii`), separators and indentation,
//! so this module writes [`Node`]s itself with the same options Python's encoder takes.
//!
//! ansible's "legacy" profiles add three conventions on top of plain JSON, kept here:
//! non-string keys become their JSON text (`1` → `"1"`, `true` → `"true"`) before sorting;
//! `!vault` values become `{"__ansible_vault": "<ciphertext>"}`; and, where a caller asks for
//! it, `!unsafe` strings become `{"__ansible_unsafe": "<text>"}`. Dates are written in ISO
//! format.
//!
//! It owns only the text form; it never decrypts anything and knows nothing of inventories.

use std::fmt::Write as _;

use crate::{Node, Timestamp, Value};

/// The options of Python's `json.dumps` that ansible uses, plus how `!unsafe` strings are
/// written.
#[derive(Clone, Debug)]
pub struct JsonOptions {
    /// `indent=N`: pretty-print with N spaces per level; `None` writes everything on one line.
    pub indent: Option<usize>,
    pub sort_keys: bool,
    /// Written between items; Python's default is `", "` without indent and `","` with it.
    pub item_separator: String,
    pub key_separator: String,
    /// Escape every non-ASCII character as `\uXXXX` (Python's default).
    pub ensure_ascii: bool,
    /// Write `!unsafe` strings as `{"__ansible_unsafe": ...}` (ansible's trust inversion in the
    /// contexts its profile allows it); otherwise as plain strings.
    pub mark_unsafe: bool,
    /// How `bytes` (a `!!binary` value) are written.
    pub bytes: BytesJson,
}

/// How JSON text says `bytes`: ansible's callbacks show them as their text (its
/// `fallback_to_str` profile); its other profiles refuse them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BytesJson {
    Text,
    /// Refused in ansible's words: the Python type it names and the profile.
    Refused {
        type_name: &'static str,
        profile: &'static str,
    },
}

impl JsonOptions {
    /// `json.dumps(value)` with Python's defaults.
    pub fn compact() -> JsonOptions {
        JsonOptions {
            indent: None,
            sort_keys: false,
            item_separator: ", ".into(),
            key_separator: ": ".into(),
            ensure_ascii: true,
            mark_unsafe: false,
            bytes: BytesJson::Text,
        }
    }

    /// `json.dumps(value, indent=indent, sort_keys=sort_keys)`.
    pub fn indented(indent: usize, sort_keys: bool) -> JsonOptions {
        JsonOptions {
            indent: Some(indent),
            sort_keys,
            item_separator: ",".into(),
            ..JsonOptions::compact()
        }
    }
}

/// A value Python's encoder refuses, in its words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(pub String);

/// Writes `node` as `json.dumps` would with `options`.
pub fn to_json(node: &Node, options: &JsonOptions) -> Result<String, JsonError> {
    let mut out = String::new();
    Writer { options, out: &mut out }.value(&node.value, 0)?;
    Ok(out)
}

/// `repr(float)`: the shortest digits that round-trip, in fixed notation when the decimal
/// exponent is in `-4..16` and in `1e+16` form otherwise, with `inf`, `-inf` and `nan`.
pub fn python_float_repr(x: f64) -> String {
    crate::pyrepr::float_repr(x)
}

/// The float text inside `repr(complex)`, which drops the `.0` a whole number would get.
pub fn python_float_repr_bare(x: f64) -> String {
    let full = crate::pyrepr::float_repr(x);
    match full.strip_suffix(".0") {
        Some(whole) if !whole.contains(['e', 'n', 'i']) => whole.to_string(),
        _ => full,
    }
}

/// `date.isoformat()` / `datetime.isoformat()`.
pub fn timestamp_isoformat(t: &Timestamp) -> String {
    let mut s = format!("{:04}-{:02}-{:02}", t.year, t.month, t.day);
    if let Some(time) = &t.time {
        let _ = write!(s, "T{:02}:{:02}:{:02}", time.hour, time.minute, time.second);
        if time.microsecond != 0 {
            let _ = write!(s, ".{:06}", time.microsecond);
        }
        if let Some(offset) = time.utc_offset_minutes {
            let sign = if offset < 0 { '-' } else { '+' };
            let abs = offset.unsigned_abs();
            let _ = write!(s, "{sign}{:02}:{:02}", abs / 60, abs % 60);
        }
    }
    s
}

/// `bytes` as ansible's callbacks show them: decoded as UTF-8, each byte that is not part of a
/// valid sequence (which Python keeps as a lone surrogate, and its display then writes as
/// `?`) written `?`, with ansible's warning that it was.
pub(crate) fn bytes_text(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len());
    let mut rest = data;
    let mut replaced = false;
    // ansible's display writes one `?` for each run of bytes that are not text (its error
    // handler is handed the whole run).
    let mut in_run = false;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                // `valid_up_to` is where the valid prefix ends: it is valid UTF-8.
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                if !(in_run && valid.is_empty()) {
                    out.push('?');
                }
                in_run = true;
                let bad = e.error_len().unwrap_or(after.len());
                replaced = true;
                rest = &after[bad..];
            }
        }
    }
    if replaced {
        tack_diag::warn(&tack_diag::Diagnostic::new(
            "Non UTF-8 encoded data replaced with \"?\" while displaying text to stdout/stderr.",
        ));
    }
    out
}

/// The JSON text of a float as Python's encoder writes it (`NaN`, `Infinity`, `-Infinity`).
fn json_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity".into() } else { "-Infinity".into() }
    } else {
        python_float_repr(x)
    }
}

struct Writer<'a> {
    options: &'a JsonOptions,
    out: &'a mut String,
}

impl Writer<'_> {
    fn value(&mut self, value: &Value, level: usize) -> Result<(), JsonError> {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(true) => self.out.push_str("true"),
            Value::Bool(false) => self.out.push_str("false"),
            Value::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::BigInt(digits) => self.out.push_str(digits),
            Value::Float(x) => self.out.push_str(&json_float(*x)),
            Value::Str(s) => self.string(s),
            Value::Unsafe(s) if self.options.mark_unsafe => {
                self.single_key_object("__ansible_unsafe", s, level)
            }
            Value::Unsafe(s) => self.string(s),
            Value::Vault(ciphertext) => {
                self.single_key_object("__ansible_vault", ciphertext, level)
            }
            Value::Timestamp(t) => self.string(&timestamp_isoformat(t)),
            Value::Bytes(data) => match self.options.bytes {
                BytesJson::Text => self.string(&bytes_text(data)),
                BytesJson::Refused { type_name, profile } => {
                    return Err(JsonError(format!(
                        "Object of type '{type_name}' is not JSON serializable by the \
                         '{profile}' profile."
                    )));
                }
            },
            Value::Seq(items) => self.seq(items, level)?,
            Value::Map(map) => {
                let mut entries: Vec<(String, &Value)> = Vec::with_capacity(map.len());
                // Where each converted key went: a map of many keys (an inventory's hosts)
                // is written in linear time.
                let mut at: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::with_capacity(map.len());
                for (k, v) in map.iter() {
                    let key = key_text(&k.value)?;
                    // A dict built from converted keys keeps the first position of a key and
                    // the last value given for it.
                    match at.get(&key) {
                        Some(&slot) => entries[slot].1 = &v.value,
                        None => {
                            at.insert(key.clone(), entries.len());
                            entries.push((key, &v.value));
                        }
                    }
                }
                if self.options.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                self.object(&entries, level)?;
            }
        }
        Ok(())
    }

    fn single_key_object(&mut self, key: &str, text: &str, level: usize) {
        let value = Value::Str(text.to_string());
        // Cannot fail: the only value is a string.
        let _ = self.object(&[(key.to_string(), &value)], level);
    }

    fn newline(&mut self, level: usize) {
        if let Some(indent) = self.options.indent {
            self.out.push('\n');
            self.out.push_str(&" ".repeat(indent * level));
        }
    }

    fn seq(&mut self, items: &[Node], level: usize) -> Result<(), JsonError> {
        if items.is_empty() {
            self.out.push_str("[]");
            return Ok(());
        }
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(&self.options.item_separator);
            }
            self.newline(level + 1);
            self.value(&item.value, level + 1)?;
        }
        self.newline(level);
        self.out.push(']');
        Ok(())
    }

    fn object(&mut self, entries: &[(String, &Value)], level: usize) -> Result<(), JsonError> {
        if entries.is_empty() {
            self.out.push_str("{}");
            return Ok(());
        }
        self.out.push('{');
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                self.out.push_str(&self.options.item_separator);
            }
            self.newline(level + 1);
            self.string(key);
            self.out.push_str(&self.options.key_separator);
            self.value(value, level + 1)?;
        }
        self.newline(level);
        self.out.push('}');
        Ok(())
    }

    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c if self.options.ensure_ascii && !(' '..='~').contains(&c) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(self.out, "\\u{unit:04x}");
                    }
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

/// A mapping key as ansible's legacy encoders convert it before Python's encoder sees it.
fn key_text(key: &Value) -> Result<String, JsonError> {
    Ok(match key {
        Value::Str(s) | Value::Unsafe(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(digits) => digits.clone(),
        Value::Float(x) => json_float(*x),
        other => {
            return Err(JsonError(format!(
                "Key of type '{}' is not JSON serializable by the 'inventory_legacy' profile.",
                other.python_type()
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mapping;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.into()))
    }

    fn map(entries: Vec<(Node, Node)>) -> Node {
        Node::bare(Value::Map(entries.into_iter().collect::<Mapping>()))
    }

    #[test]
    fn float_repr_matches_python() {
        // Each right-hand side is what CPython 3.13's repr() prints.
        let cases = [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (100000.0, "100000.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-0.0, "-0.0"),
            (-2.5, "-2.5"),
            (1e300, "1e+300"),
            (123456789.123, "123456789.123"),
        ];
        for (x, want) in cases {
            assert_eq!(python_float_repr(x), want, "{x:?}");
        }
        assert_eq!(python_float_repr(f64::INFINITY), "inf");
        assert_eq!(python_float_repr_bare(2.0), "2");
    }

    #[test]
    fn indented_sorted_like_json_dumps() {
        let node = map(vec![
            (s("b"), Node::bare(Value::Seq(vec![Node::bare(Value::Int(1)), s("x")]))),
            (s("a"), map(vec![])),
            (s("c"), Node::bare(Value::Seq(vec![]))),
        ]);
        let text = to_json(&node, &JsonOptions::indented(4, true)).unwrap();
        assert_eq!(
            text,
            "{\n    \"a\": {},\n    \"b\": [\n        1,\n        \"x\"\n    ],\n    \"c\": []\n}"
        );
    }

    #[test]
    fn escapes_follow_ensure_ascii() {
        let node = s("é\"\\\n\u{1}\u{7f}😀");
        assert_eq!(
            to_json(&node, &JsonOptions::compact()).unwrap(),
            "\"\\u00e9\\\"\\\\\\n\\u0001\\u007f\\ud83d\\ude00\""
        );
        let opts = JsonOptions { ensure_ascii: false, ..JsonOptions::compact() };
        assert_eq!(to_json(&node, &opts).unwrap(), "\"é\\\"\\\\\\n\\u0001\u{7f}😀\"");
    }

    #[test]
    fn keys_are_converted_then_sorted() {
        let node = map(vec![
            (s("b"), Node::bare(Value::Null)),
            (Node::bare(Value::Int(10)), Node::bare(Value::Float(f64::NAN))),
            (Node::bare(Value::Bool(true)), Node::bare(Value::Float(f64::NEG_INFINITY))),
        ]);
        let opts = JsonOptions { sort_keys: true, ..JsonOptions::compact() };
        assert_eq!(
            to_json(&node, &opts).unwrap(),
            "{\"10\": NaN, \"b\": null, \"true\": -Infinity}"
        );
    }

    #[test]
    fn vault_and_unsafe_markers() {
        let node = Node::bare(Value::Seq(vec![
            Node::bare(Value::Vault("$ANSIBLE_VAULT;1.1;AES256\n3031\n".into())),
            Node::bare(Value::Unsafe("{{ x }}".into())),
        ]));
        let mut opts = JsonOptions::compact();
        assert_eq!(
            to_json(&node, &opts).unwrap(),
            "[{\"__ansible_vault\": \"$ANSIBLE_VAULT;1.1;AES256\\n3031\\n\"}, \"{{ x }}\"]"
        );
        opts.mark_unsafe = true;
        assert!(to_json(&node, &opts).unwrap().ends_with("{\"__ansible_unsafe\": \"{{ x }}\"}]"));
    }

    #[test]
    fn timestamps_use_isoformat() {
        use crate::TimeOfDay;
        let date = Timestamp { year: 2024, month: 1, day: 2, time: None };
        assert_eq!(timestamp_isoformat(&date), "2024-01-02");
        let dt = Timestamp {
            time: Some(TimeOfDay {
                hour: 3,
                minute: 4,
                second: 5,
                microsecond: 120000,
                utc_offset_minutes: Some(-330),
            }),
            ..date
        };
        assert_eq!(timestamp_isoformat(&dt), "2024-01-02T03:04:05.120000-05:30");
    }
}
