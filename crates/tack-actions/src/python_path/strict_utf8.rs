//! ansible's check that a module's JSON answer holds only strings UTF-8 can encode
//! (`MODULE_STRICT_UTF8_RESPONSE`, on by default; tack refuses it off): a `\udc80` escape
//! that no other surrogate pairs with is a string Python can hold and UTF-8 cannot, which
//! ansible's decoder refuses as `Refusing to deserialize an invalid UTF8 string value`, naming
//! the first such string it checks with Python's own words for the encoding failure.
//!
//! Only asked once the answer failed to parse (serde's JSON refuses such escapes), so a good
//! answer costs nothing. ansible checks each object's keys and values as the object ends
//! (nested objects first), then a list or string at the top; this walks the text in that order.

/// Python's message for the first string ansible's check refuses in the JSON object at the
/// start of `json` (`'utf-8' codec can't encode character '\udc80' in position 3: surrogates
/// not allowed`), or `None` when every string is valid or the text is not JSON this reads.
pub(crate) fn first_invalid(json: &str) -> Option<String> {
    let mut reader = Reader { bytes: json.as_bytes(), at: 0 };
    match reader.value(0) {
        Ok(Parsed::Failed(message)) => Some(message),
        Ok(Parsed::Value(value)) => checked(&value).err(),
        Err(()) => None,
    }
}

/// A value as the check needs it: strings as code points (lone surrogates kept), lists
/// with their items, objects already checked.
enum Value {
    Str(Vec<u32>),
    List(Vec<Value>),
    Other,
}

enum Parsed {
    Value(Value),
    /// The check failed inside, with this message.
    Failed(String),
}

/// Python's `_recursively_check_string_encoding`: a string, or the strings in a list
/// (an object inside was checked when it ended).
fn checked(value: &Value) -> Result<(), String> {
    match value {
        Value::Str(points) => encodable(points),
        Value::List(items) => items.iter().try_for_each(checked),
        Value::Other => Ok(()),
    }
}

/// `str.encode()` of `points`: the first run of surrogates, in Python's words.
fn encodable(points: &[u32]) -> Result<(), String> {
    let surrogate = |p: &u32| (0xD800..=0xDFFF).contains(p);
    let Some(start) = points.iter().position(surrogate) else { return Ok(()) };
    let end =
        points[start..].iter().position(|p| !surrogate(p)).map_or(points.len(), |n| start + n);
    Err(if end - start == 1 {
        format!(
            "'utf-8' codec can't encode character '\\u{:04x}' in position {start}: surrogates not \
             allowed",
            points[start]
        )
    } else {
        format!(
            "'utf-8' codec can't encode characters in position {start}-{}: surrogates not allowed",
            end - 1
        )
    })
}

/// Nesting past this is not a module's answer; the reader gives up rather than recurse on.
const MAX_DEPTH: usize = 200;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.bytes.get(self.at).is_some_and(|b| b" \t\r\n".contains(b)) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Parsed, ()> {
        if depth > MAX_DEPTH {
            return Err(());
        }
        self.skip_space();
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.list(depth),
            Some(b'"') => Ok(Parsed::Value(Value::Str(self.string()?))),
            Some(_) => {
                // A number, `true`, `false`, `null` (or Python's `NaN`, `Infinity`).
                let start = self.at;
                while self.bytes.get(self.at).is_some_and(|b| !b",]} \t\r\n".contains(b)) {
                    self.at += 1;
                }
                if self.at == start { Err(()) } else { Ok(Parsed::Value(Value::Other)) }
            }
            None => Err(()),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Parsed, ()> {
        self.at += 1;
        let mut pairs = Vec::new();
        self.skip_space();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Parsed::Value(Value::Other));
        }
        loop {
            self.skip_space();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(());
            }
            let key = self.string()?;
            self.skip_space();
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(());
            }
            self.at += 1;
            let value = match self.value(depth + 1)? {
                Parsed::Value(value) => value,
                failed => return Ok(failed),
            };
            pairs.push((key, value));
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(()),
            }
        }
        // ansible's `object_hook`: each key, then its value, as the object ends.
        for (key, value) in &pairs {
            if let Err(message) = encodable(key).and_then(|()| checked(value)) {
                return Ok(Parsed::Failed(message));
            }
        }
        Ok(Parsed::Value(Value::Other))
    }

    fn list(&mut self, depth: usize) -> Result<Parsed, ()> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Parsed::Value(Value::List(items)));
        }
        loop {
            match self.value(depth + 1)? {
                Parsed::Value(value) => items.push(value),
                failed => return Ok(failed),
            }
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Parsed::Value(Value::List(items)));
                }
                _ => return Err(()),
            }
        }
    }

    /// A string's code points as Python's decoder makes them: a high surrogate escape
    /// followed by a low one is one code point, any other surrogate escape stays alone.
    fn string(&mut self) -> Result<Vec<u32>, ()> {
        self.at += 1;
        let mut points = Vec::new();
        loop {
            let rest = self.bytes.get(self.at..).ok_or(())?;
            let text = std::str::from_utf8(rest).map_err(|_| ())?;
            let mut chars = text.char_indices();
            let (_, c) = chars.next().ok_or(())?;
            match c {
                '"' => {
                    self.at += 1;
                    return Ok(points);
                }
                '\\' => {
                    let escape = *self.bytes.get(self.at + 1).ok_or(())?;
                    self.at += 2;
                    match escape {
                        b'u' => {
                            let unit = self.hex4()?;
                            let paired = (0xD800..=0xDBFF).contains(&unit)
                                && self.bytes.get(self.at..self.at + 2) == Some(b"\\u");
                            if paired {
                                let saved = self.at;
                                self.at += 2;
                                let low = self.hex4()?;
                                if (0xDC00..=0xDFFF).contains(&low) {
                                    points.push(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                                    continue;
                                }
                                self.at = saved;
                            }
                            points.push(unit);
                        }
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => points.push(0),
                        _ => return Err(()),
                    }
                }
                c => {
                    self.at += c.len_utf8();
                    points.push(u32::from(c));
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ()> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or(())?;
        let text = std::str::from_utf8(digits).map_err(|_| ())?;
        let unit = u32::from_str_radix(text, 16).map_err(|_| ())?;
        self.at += 4;
        Ok(unit)
    }
}

#[cfg(test)]
mod tests {
    use super::first_invalid;

    #[test]
    fn a_lone_surrogate_is_named_with_its_position() {
        assert_eq!(
            first_invalid(r#"{"changed": false, "msg": "hi \udc80 mom"}"#).as_deref(),
            Some(
                "'utf-8' codec can't encode character '\\udc80' in position 3: surrogates not \
                 allowed"
            )
        );
        assert_eq!(
            first_invalid(r#"{"a": ["x", "\ud800\ud800z"]}"#).as_deref(),
            Some("'utf-8' codec can't encode characters in position 0-1: surrogates not allowed")
        );
    }

    #[test]
    fn pairs_and_other_text_are_valid() {
        assert_eq!(first_invalid(r#"{"a": "\ud83d\ude00 é \n", "b": [1, null, true]}"#), None);
        assert_eq!(first_invalid("not json"), None);
    }

    #[test]
    fn a_nested_object_is_checked_before_its_parent() {
        let json = r#"{"a": "\udc81", "b": {"c": "\udc82"}}"#;
        assert!(first_invalid(json).is_some_and(|m| m.contains("'\\udc82'")));
    }
}
