//! `ast.literal_eval` for the literals a dict option may be given as text (`{'a': 1}`):
//! strings, numbers, `True`/`False`/`None`, lists, tuples and dicts. Anything else is `None`.

use serde_json::{Map, Value};

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.ws();
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut map = Map::new();
                if self.eat(b'}') {
                    return Some(Value::Object(map));
                }
                loop {
                    let key = match self.value()? {
                        Value::String(k) => k,
                        other => super::pyfmt::py_str(&other),
                    };
                    if !self.eat(b':') {
                        return None;
                    }
                    let v = self.value()?;
                    map.insert(key, v);
                    if self.eat(b',') {
                        if self.eat(b'}') {
                            return Some(Value::Object(map));
                        }
                        continue;
                    }
                    return self.eat(b'}').then_some(Value::Object(map));
                }
            }
            open @ (b'[' | b'(') => {
                let close = if open == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut items = Vec::new();
                if self.eat(close) {
                    return Some(Value::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(b',') {
                        if self.eat(close) {
                            return Some(Value::Array(items));
                        }
                        continue;
                    }
                    return self.eat(close).then_some(Value::Array(items));
                }
            }
            q @ (b'\'' | b'"') => {
                self.i += 1;
                let mut out = Vec::new();
                while let Some(&c) = self.s.get(self.i) {
                    self.i += 1;
                    match c {
                        b'\\' => {
                            let e = *self.s.get(self.i)?;
                            self.i += 1;
                            out.push(match e {
                                b'n' => b'\n',
                                b't' => b'\t',
                                b'r' => b'\r',
                                other => other,
                            });
                        }
                        c if c == q => return String::from_utf8(out).ok().map(Value::from),
                        c => out.push(c),
                    }
                }
                None
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && !b",:}])".contains(&self.s[self.i])
                    && !self.s[self.i].is_ascii_whitespace()
                {
                    self.i += 1;
                }
                let word = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                match word {
                    "True" => Some(Value::Bool(true)),
                    "False" => Some(Value::Bool(false)),
                    "None" => Some(Value::Null),
                    w => w.parse::<i64>().map(Value::from).ok().or_else(|| {
                        w.parse::<f64>().ok().filter(|f| f.is_finite()).map(Value::from)
                    }),
                }
            }
        }
    }
}

/// The value of a Python literal, or `None` when `text` is not one.
pub fn literal_eval(text: &str) -> Option<Value> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let v = p.value()?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}
