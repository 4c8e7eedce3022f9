//! `json.loads` as CPython's decoder runs it: `NaN`/`Infinity` accepted, integers of any size,
//! the last of duplicate keys kept in the first one's place, and its `JSONDecodeError` texts
//! (`Expecting value: line 1 column 1 (char 0)`), which `from_json` failures show.
//!
//! Written here because serde_json rejects what Python accepts and words its errors
//! differently.

use minijinja::Value;

use super::pyval::int_value;

pub(crate) fn loads(text: &str) -> Result<Value, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { s: &chars };
    let mut i = p.skip_ws(0);
    let (value, end) = p.value(i)?;
    i = p.skip_ws(end);
    if i != chars.len() {
        return Err(p.error("Extra data", i));
    }
    Ok(value)
}

struct Parser<'a> {
    s: &'a [char],
}

impl Parser<'_> {
    fn error(&self, msg: &str, pos: usize) -> String {
        let before: String = self.s[..pos.min(self.s.len())].iter().collect();
        let line = before.matches('\n').count() + 1;
        let col = match before.rfind('\n') {
            Some(nl) => before[nl + 1..].chars().count() + 1,
            None => pos + 1,
        };
        format!("{msg}: line {line} column {col} (char {pos})")
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while i < self.s.len() && matches!(self.s[i], ' ' | '\t' | '\n' | '\r') {
            i += 1;
        }
        i
    }

    fn starts(&self, i: usize, word: &str) -> bool {
        word.chars().enumerate().all(|(k, c)| self.s.get(i + k) == Some(&c))
    }

    fn value(&mut self, i: usize) -> Result<(Value, usize), String> {
        match self.s.get(i) {
            Some('"') => {
                let (s, end) = self.string(i + 1)?;
                Ok((Value::from(s), end))
            }
            Some('{') => self.object(i + 1),
            Some('[') => self.array(i + 1),
            Some('n') if self.starts(i, "null") => Ok((Value::from(()), i + 4)),
            Some('t') if self.starts(i, "true") => Ok((Value::from(true), i + 4)),
            Some('f') if self.starts(i, "false") => Ok((Value::from(false), i + 5)),
            Some('N') if self.starts(i, "NaN") => Ok((Value::from(f64::NAN), i + 3)),
            Some('I') if self.starts(i, "Infinity") => Ok((Value::from(f64::INFINITY), i + 8)),
            Some('-') if self.starts(i, "-Infinity") => Ok((Value::from(f64::NEG_INFINITY), i + 9)),
            _ => self.number(i).ok_or_else(|| self.error("Expecting value", i)),
        }
    }

    fn number(&self, start: usize) -> Option<(Value, usize)> {
        // `(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?`
        let s = self.s;
        let mut i = start;
        if s.get(i) == Some(&'-') {
            i += 1;
        }
        match s.get(i) {
            Some('0') => i += 1,
            Some(c) if c.is_ascii_digit() => {
                while s.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let mut is_float = false;
        if s.get(i) == Some(&'.') && s.get(i + 1).is_some_and(char::is_ascii_digit) {
            i += 1;
            while s.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            is_float = true;
        }
        if matches!(s.get(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(s.get(j), Some('+' | '-')) {
                j += 1;
            }
            if s.get(j).is_some_and(char::is_ascii_digit) {
                while s.get(j).is_some_and(char::is_ascii_digit) {
                    j += 1;
                }
                i = j;
                is_float = true;
            }
        }
        let text: String = s[start..i].iter().collect();
        if is_float {
            return text.parse::<f64>().ok().map(|f| (Value::from(f), i));
        }
        match text.parse::<i128>() {
            Ok(n) => Some((int_value(n), i)),
            Err(_) => text.parse::<f64>().ok().map(|f| (Value::from(f), i)),
        }
    }

    fn string(&self, start: usize) -> Result<(String, usize), String> {
        let mut out = String::new();
        let mut i = start;
        loop {
            let Some(&c) = self.s.get(i) else {
                return Err(self.error("Unterminated string starting at", start - 1));
            };
            match c {
                '"' => return Ok((out, i + 1)),
                '\\' => {
                    let Some(&e) = self.s.get(i + 1) else {
                        return Err(self.error("Unterminated string starting at", start - 1));
                    };
                    let simple = match e {
                        '"' => Some('"'),
                        '\\' => Some('\\'),
                        '/' => Some('/'),
                        'b' => Some('\u{8}'),
                        'f' => Some('\u{c}'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        _ => None,
                    };
                    if let Some(ch) = simple {
                        out.push(ch);
                        i += 2;
                        continue;
                    }
                    if e != 'u' {
                        return Err(self.error("Invalid \\escape", i));
                    }
                    let unit = self
                        .hex4(i + 2)
                        .ok_or_else(|| self.error("Invalid \\uXXXX escape", i + 1))?;
                    i += 6;
                    if (0xd800..0xdc00).contains(&unit)
                        && self.s.get(i) == Some(&'\\')
                        && self.s.get(i + 1) == Some(&'u')
                        && let Some(low) = self.hex4(i + 2).filter(|l| (0xdc00..0xe000).contains(l))
                    {
                        let code = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        i += 6;
                        continue;
                    }
                    out.push(char::from_u32(unit).unwrap_or('\u{fffd}'));
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("Invalid control character at", i));
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
    }

    fn hex4(&self, i: usize) -> Option<u32> {
        let digits: String = self.s.get(i..i + 4)?.iter().collect();
        if digits.chars().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(&digits, 16).ok()
        } else {
            None
        }
    }

    fn object(&mut self, start: usize) -> Result<(Value, usize), String> {
        let mut pairs: Vec<(Value, Value)> = Vec::new();
        let mut i = self.skip_ws(start);
        if self.s.get(i) == Some(&'}') {
            return Ok((Value::from_pairs(pairs), i + 1));
        }
        loop {
            if self.s.get(i) != Some(&'"') {
                return Err(self.error("Expecting property name enclosed in double quotes", i));
            }
            let (key, end) = self.string(i + 1)?;
            i = self.skip_ws(end);
            if self.s.get(i) != Some(&':') {
                return Err(self.error("Expecting ':' delimiter", i));
            }
            i = self.skip_ws(i + 1);
            let (value, end) = self.value(i)?;
            let key = Value::from(key);
            match pairs.iter_mut().find(|(k, _)| k == &key) {
                Some(slot) => slot.1 = value,
                None => pairs.push((key, value)),
            }
            i = self.skip_ws(end);
            match self.s.get(i) {
                Some('}') => return Ok((Value::from_pairs(pairs), i + 1)),
                Some(',') => {
                    let comma = i;
                    i = self.skip_ws(i + 1);
                    if self.s.get(i) == Some(&'}') {
                        return Err(
                            self.error("Illegal trailing comma before end of object", comma)
                        );
                    }
                    if self.s.get(i) != Some(&'"') {
                        return Err(
                            self.error("Expecting property name enclosed in double quotes", i)
                        );
                    }
                }
                _ => return Err(self.error("Expecting ',' delimiter", i)),
            }
        }
    }

    fn array(&mut self, start: usize) -> Result<(Value, usize), String> {
        let mut items = Vec::new();
        let mut i = self.skip_ws(start);
        if self.s.get(i) == Some(&']') {
            return Ok((Value::from(items), i + 1));
        }
        loop {
            let (value, end) = self.value(i)?;
            items.push(value);
            i = self.skip_ws(end);
            match self.s.get(i) {
                Some(']') => return Ok((Value::from(items), i + 1)),
                Some(',') => {
                    let comma = i;
                    i = self.skip_ws(i + 1);
                    if self.s.get(i) == Some(&']') {
                        return Err(self.error("Illegal trailing comma before end of array", comma));
                    }
                }
                _ => return Err(self.error("Expecting ',' delimiter", i)),
            }
        }
    }
}
