//! Python's `ast.literal_eval`, as the INI inventory applies it to every variable value.
//!
//! `port=22` is an int, `x=1_000` an int, `y=1e5` a float, `l=[1, 'a']` a list, `t=True` a
//! bool, `n=None` null; anything that is not a Python literal (`yes`, `foo`, `017`) stays the
//! string it was. ansible then turns tuples and sets into lists, and `...` and complex numbers
//! into their text.
//!
//! No crate parses Python literals, so this module has its own small tokenizer and parser. Its
//! known gaps against CPython: `\N{NAME}` escapes are not resolved (the value stays a string),
//! and a set keeps its written order where CPython orders it by hash.

use tack_diag::Origin;
use tack_yaml::{Mapping, Node, Value, python_float_repr_bare};

/// What `literal_eval` made of a value.
#[derive(Debug, PartialEq)]
pub(crate) enum Literal {
    /// A literal, converted as ansible converts it.
    Value(Node),
    /// Not a literal: ansible keeps the text as a string.
    Text,
    /// A literal CPython refuses with an error ansible does not catch
    /// (`unhashable type: 'list'`): the INI file fails to parse with this message.
    Fails(String),
}

/// `literal_eval(text)` followed by ansible's coercions, every node tagged with `origin`.
pub(crate) fn literal_eval(text: &str, origin: Option<&Origin>) -> Literal {
    // CPython 3.13 strips leading spaces and tabs before parsing.
    let text = text.trim_start_matches([' ', '\t']);
    let tokens = match tokenize(text) {
        Some(tokens) => tokens,
        None => return Literal::Text,
    };
    let mut parser = Parser { tokens: &tokens, pos: 0, origin };
    let result = parser.expression().and_then(|expr| {
        if parser.pos == tokens.len() { Ok(expr) } else { Err(Failure::NotLiteral) }
    });
    match result.and_then(|expr| parser.convert(expr)) {
        Ok(node) => Literal::Value(node),
        Err(Failure::NotLiteral) => Literal::Text,
        Err(Failure::Fails(msg)) => Literal::Fails(msg),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(Int),
    Float(f64),
    Imag(f64),
    Str(String),
    Bytes(Vec<u8>),
    Name(String),
    Op(char),
    Ellipsis,
}

/// An integer literal: small ones as `i64`, others as decimal digits.
#[derive(Debug, Clone, PartialEq)]
enum Int {
    Small(i64),
    Big(String),
}

fn tokenize(text: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' | '\u{c}' => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '.' if chars.get(i + 1) == Some(&'.') && chars.get(i + 2) == Some(&'.') => {
                tokens.push(Tok::Ellipsis);
                i += 3;
            }
            '0'..='9' | '.' if c != '.' || chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                let (tok, next) = number(&chars, i)?;
                tokens.push(tok);
                i = next;
            }
            '(' | ')' | '[' | ']' | '{' | '}' | ',' | ':' | '+' | '-' => {
                tokens.push(Tok::Op(c));
                i += 1;
            }
            '\'' | '"' => {
                let (tok, next) = string(&chars, i, "")?;
                tokens.push(tok);
                i = next;
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if matches!(chars.get(i), Some('\'' | '"')) && is_string_prefix(&word) {
                    let (tok, next) = string(&chars, i, &word.to_ascii_lowercase())?;
                    tokens.push(tok);
                    i = next;
                } else {
                    tokens.push(Tok::Name(word));
                }
            }
            _ => return None,
        }
    }
    Some(tokens)
}

fn is_string_prefix(word: &str) -> bool {
    matches!(word.to_ascii_lowercase().as_str(), "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf")
}

/// Digits with single underscores between them, starting at `i`; returns the digits and the
/// index after them.
fn digit_part(chars: &[char], mut i: usize, radix: u32) -> Option<(String, usize)> {
    let mut out = String::new();
    if !chars.get(i).is_some_and(|c| c.is_digit(radix)) {
        return None;
    }
    while i < chars.len() {
        let c = chars[i];
        if c.is_digit(radix) {
            out.push(c);
            i += 1;
        } else if c == '_' && chars.get(i + 1).is_some_and(|n| n.is_digit(radix)) {
            i += 1;
        } else {
            break;
        }
    }
    Some((out, i))
}

fn number(chars: &[char], start: usize) -> Option<(Tok, usize)> {
    let lower = |i: usize| chars.get(i).map(|c| c.to_ascii_lowercase());
    if chars[start] == '0'
        && let Some(radix) = match lower(start + 1) {
            Some('x') => Some(16),
            Some('o') => Some(8),
            Some('b') => Some(2),
            _ => None,
        }
    {
        // `0x_1f` is allowed: one underscore may follow the prefix.
        let mut i = start + 2;
        if chars.get(i) == Some(&'_') {
            i += 1;
        }
        let (digits, next) = digit_part(chars, i, radix)?;
        if chars.get(next).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
            return None;
        }
        return Some((Tok::Int(int_from_radix(&digits, radix)), next));
    }
    let mut i = start;
    let mut text = String::new();
    let mut is_float = false;
    let int_part = digit_part(chars, i, 10);
    if let Some((digits, next)) = &int_part {
        text.push_str(digits);
        i = *next;
    }
    if chars.get(i) == Some(&'.') {
        is_float = true;
        text.push('.');
        i += 1;
        if let Some((digits, next)) = digit_part(chars, i, 10) {
            text.push_str(&digits);
            i = next;
        }
    }
    if lower(i) == Some('e') {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if let Some(sign @ ('+' | '-')) = chars.get(j) {
            exp.push(*sign);
            j += 1;
        }
        if let Some((digits, next)) = digit_part(chars, j, 10) {
            exp.push_str(&digits);
            text.push_str(&exp);
            i = next;
            is_float = true;
        } else {
            return None;
        }
    }
    if lower(i) == Some('j') {
        let value: f64 = text.parse().ok()?;
        return Some((Tok::Imag(value), i + 1));
    }
    if chars.get(i).is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '.') {
        return None;
    }
    if is_float {
        return Some((Tok::Float(text.parse().ok()?), i));
    }
    // `00` is zero; any other leading zero is a syntax error in Python 3.
    if text.len() > 1 && text.starts_with('0') && text.chars().any(|c| c != '0') {
        return None;
    }
    Some((Tok::Int(int_from_radix(&text, 10)), i))
}

/// An integer from its digits in `radix`, kept exact beyond `i64`.
fn int_from_radix(digits: &str, radix: u32) -> Int {
    if let Ok(n) = i64::from_str_radix(digits, radix) {
        return Int::Small(n);
    }
    // Base conversion on little-endian base-10^9 limbs.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let mut carry = u64::from(c.to_digit(radix).unwrap_or(0));
        for limb in &mut limbs {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::new();
    for (idx, limb) in limbs.iter().rev().enumerate() {
        if idx == 0 {
            out.push_str(&limb.to_string());
        } else {
            out.push_str(&format!("{limb:09}"));
        }
    }
    Int::Big(out)
}

/// A quoted string starting at `start` (the quote), with `prefix` already consumed.
fn string(chars: &[char], start: usize, prefix: &str) -> Option<(Tok, usize)> {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    let raw = prefix.contains('r');
    let bytes = prefix.contains('b');
    if prefix.contains('f') {
        // An f-string is not a literal (or not even valid): either way the text stays a string.
        return None;
    }
    let mut body = String::new();
    loop {
        let c = *chars.get(i)?;
        if c == quote {
            if !triple {
                i += 1;
                break;
            }
            if chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                i += 3;
                break;
            }
        }
        if c == '\n' && !triple {
            return None;
        }
        if c == '\\' {
            let next = *chars.get(i + 1)?;
            body.push('\\');
            body.push(next);
            i += 2;
            continue;
        }
        body.push(c);
        i += 1;
    }
    if bytes {
        if !body.is_ascii() {
            return None;
        }
        let decoded = if raw { body.into_bytes() } else { unescape_bytes(&body)? };
        return Some((Tok::Bytes(decoded), i));
    }
    let decoded = if raw { body } else { unescape_str(&body)? };
    Some((Tok::Str(decoded), i))
}

/// The value of an escape common to str and bytes at `chars[i]` (just after the backslash):
/// the produced code point and the index after the escape. `None` for an escape that is not
/// one of these.
fn common_escape(chars: &[char], i: usize) -> Option<Result<(u32, usize), ()>> {
    let c = *chars.get(i)?;
    let simple = match c {
        '\\' => Some('\\'),
        '\'' => Some('\''),
        '"' => Some('"'),
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        _ => None,
    };
    if let Some(ch) = simple {
        return Some(Ok((ch as u32, i + 1)));
    }
    if c.is_digit(8) {
        let mut j = i;
        let mut value = 0u32;
        while j < i + 3 && chars.get(j).is_some_and(|d| d.is_digit(8)) {
            value = value * 8 + chars[j].to_digit(8).unwrap_or(0);
            j += 1;
        }
        return Some(Ok((value, j)));
    }
    if c == 'x' {
        return Some(hex_escape(chars, i + 1, 2));
    }
    None
}

fn hex_escape(chars: &[char], from: usize, len: usize) -> Result<(u32, usize), ()> {
    let digits: String = chars.get(from..from + len).ok_or(())?.iter().collect();
    if digits.len() != len || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(());
    }
    u32::from_str_radix(&digits, 16).map(|v| (v, from + len)).map_err(|_| ())
}

fn unescape_str(body: &str) -> Option<String> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let next = *chars.get(i + 1)?;
        if next == '\n' {
            i += 2;
            continue;
        }
        let escaped = match next {
            'u' => Some(hex_escape(&chars, i + 2, 4)),
            'U' => Some(hex_escape(&chars, i + 2, 8)),
            // `\N{NAME}` needs the Unicode name table; leave the value a string.
            'N' => return None,
            _ => common_escape(&chars, i + 1),
        };
        match escaped {
            Some(Ok((code, next_i))) => {
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                i = next_i;
            }
            Some(Err(())) => return None,
            None => {
                // An unknown escape keeps its backslash (CPython only warns).
                out.push('\\');
                i += 1;
            }
        }
    }
    Some(out)
}

fn unescape_bytes(body: &str) -> Option<Vec<u8>> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            out.push(chars[i] as u8);
            i += 1;
            continue;
        }
        let next = *chars.get(i + 1)?;
        if next == '\n' {
            i += 2;
            continue;
        }
        match common_escape(&chars, i + 1) {
            Some(Ok((code, next_i))) => {
                out.push((code & 0xff) as u8);
                i = next_i;
            }
            Some(Err(())) => return None,
            None => {
                out.push(b'\\');
                i += 1;
            }
        }
    }
    Some(out)
}

/// The parsed expression, before `literal_eval`'s checks.
#[derive(Debug, Clone)]
enum Expr {
    Int(Int),
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Bool(bool),
    None,
    Ellipsis,
    Name,
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    Neg(Box<Expr>),
    Pos(Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Call(String, usize),
}

enum Failure {
    NotLiteral,
    Fails(String),
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    origin: Option<&'a Origin>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn eat_op(&mut self, op: char) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `a + b - c ...` (left-associative), over unary terms.
    fn expression(&mut self) -> Result<Expr, Failure> {
        let mut left = self.unary()?;
        loop {
            if self.eat_op('+') {
                left = Expr::Add(Box::new(left), Box::new(self.unary()?));
            } else if self.eat_op('-') {
                left = Expr::Sub(Box::new(left), Box::new(self.unary()?));
            } else {
                return Ok(left);
            }
        }
    }

    fn unary(&mut self) -> Result<Expr, Failure> {
        if self.eat_op('-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat_op('+') {
            return Ok(Expr::Pos(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, Failure> {
        let tok = self.peek().cloned().ok_or(Failure::NotLiteral)?;
        self.pos += 1;
        Ok(match tok {
            Tok::Int(i) => Expr::Int(i),
            Tok::Float(x) => Expr::Float(x),
            Tok::Imag(x) => Expr::Complex(0.0, x),
            Tok::Ellipsis => Expr::Ellipsis,
            Tok::Str(s) => {
                let mut s = s;
                while let Some(Tok::Str(more)) = self.peek() {
                    s.push_str(more);
                    self.pos += 1;
                }
                if matches!(self.peek(), Some(Tok::Bytes(_))) {
                    return Err(Failure::NotLiteral);
                }
                Expr::Str(s)
            }
            Tok::Bytes(b) => {
                let mut b = b;
                while let Some(Tok::Bytes(more)) = self.peek() {
                    b.extend_from_slice(more);
                    self.pos += 1;
                }
                if matches!(self.peek(), Some(Tok::Str(_))) {
                    return Err(Failure::NotLiteral);
                }
                Expr::Bytes(b)
            }
            Tok::Name(name) => match name.as_str() {
                "True" => Expr::Bool(true),
                "False" => Expr::Bool(false),
                "None" => Expr::None,
                _ if self.eat_op('(') => {
                    let mut args = 0;
                    while !self.eat_op(')') {
                        self.expression()?;
                        args += 1;
                        if !self.eat_op(',') && self.peek() != Some(&Tok::Op(')')) {
                            return Err(Failure::NotLiteral);
                        }
                    }
                    Expr::Call(name, args)
                }
                _ => Expr::Name,
            },
            Tok::Op('[') => Expr::List(self.items(']')?),
            Tok::Op('(') => {
                if self.eat_op(')') {
                    return Ok(Expr::Tuple(Vec::new()));
                }
                let first = self.expression()?;
                if self.eat_op(')') {
                    return Ok(first);
                }
                if !self.eat_op(',') {
                    return Err(Failure::NotLiteral);
                }
                let mut items = vec![first];
                items.extend(self.items(')')?);
                Expr::Tuple(items)
            }
            Tok::Op('{') => self.braces()?,
            Tok::Op(_) => return Err(Failure::NotLiteral),
        })
    }

    /// Comma-separated expressions up to `close`, a trailing comma allowed.
    fn items(&mut self, close: char) -> Result<Vec<Expr>, Failure> {
        let mut items = Vec::new();
        loop {
            if self.eat_op(close) {
                return Ok(items);
            }
            items.push(self.expression()?);
            if !self.eat_op(',') {
                return if self.eat_op(close) { Ok(items) } else { Err(Failure::NotLiteral) };
            }
        }
    }

    fn braces(&mut self) -> Result<Expr, Failure> {
        if self.eat_op('}') {
            return Ok(Expr::Dict(Vec::new()));
        }
        let first = self.expression()?;
        if !self.eat_op(':') {
            let mut items = vec![first];
            if self.eat_op(',') {
                items.extend(self.items('}')?);
            } else if !self.eat_op('}') {
                return Err(Failure::NotLiteral);
            }
            return Ok(Expr::Set(items));
        }
        let mut pairs = vec![(first, self.expression()?)];
        loop {
            if self.eat_op('}') {
                return Ok(Expr::Dict(pairs));
            }
            if !self.eat_op(',') {
                return Err(Failure::NotLiteral);
            }
            if self.eat_op('}') {
                return Ok(Expr::Dict(pairs));
            }
            let key = self.expression()?;
            if !self.eat_op(':') {
                return Err(Failure::NotLiteral);
            }
            pairs.push((key, self.expression()?));
        }
    }

    fn node(&self, value: Value) -> Node {
        Node::new(value, self.origin.cloned())
    }

    /// `literal_eval`'s evaluation, then ansible's coercions (tuples and sets to lists, `...`
    /// and complex numbers to text, bytes decoded).
    fn convert(&self, expr: Expr) -> Result<Node, Failure> {
        Ok(match expr {
            Expr::Int(Int::Small(n)) => self.node(Value::Int(n)),
            Expr::Int(Int::Big(digits)) => self.node(Value::BigInt(digits)),
            Expr::Float(x) => self.node(Value::Float(x)),
            Expr::Complex(re, im) => self.node(Value::Str(complex_repr(re, im))),
            Expr::Str(s) => self.node(Value::Str(s)),
            Expr::Bytes(b) => self.node(Value::Str(String::from_utf8_lossy(&b).into_owned())),
            Expr::Bool(b) => self.node(Value::Bool(b)),
            Expr::None => self.node(Value::Null),
            Expr::Ellipsis => self.node(Value::Str("...".into())),
            Expr::Name => return Err(Failure::NotLiteral),
            Expr::Call(name, 0) if name == "set" => self.node(Value::Seq(Vec::new())),
            Expr::Call(..) => return Err(Failure::NotLiteral),
            Expr::List(items) | Expr::Tuple(items) => {
                let items = items.into_iter().map(|e| self.convert(e)).collect::<Result<_, _>>()?;
                self.node(Value::Seq(items))
            }
            // CPython's `set(map(_convert, elts))` and `dict(zip(...))` convert each item
            // before hashing it: an item that is no literal (`{{ lookup(...) }}`) makes the
            // text a string before an unhashable one fails.
            Expr::Set(items) => {
                let mut out: Vec<Node> = Vec::new();
                for item in items {
                    let unhashable_item =
                        matches!(item, Expr::List(_) | Expr::Dict(_) | Expr::Set(_))
                            .then(|| unhashable(&item));
                    let node = self.convert(item)?;
                    if let Some(message) = unhashable_item {
                        return Err(Failure::Fails(message));
                    }
                    if !out.iter().any(|n| n.value == node.value) {
                        out.push(node);
                    }
                }
                self.node(Value::Seq(out))
            }
            Expr::Dict(pairs) => {
                let mut map = Mapping::new();
                for (k, v) in pairs {
                    let unhashable_key = matches!(k, Expr::List(_) | Expr::Dict(_) | Expr::Set(_))
                        .then(|| unhashable(&k));
                    let (key, value) = (self.convert(k)?, self.convert(v)?);
                    if let Some(message) = unhashable_key {
                        return Err(Failure::Fails(message));
                    }
                    map.insert(key, value);
                }
                self.node(Value::Map(map))
            }
            Expr::Neg(_) | Expr::Pos(_) | Expr::Add(..) | Expr::Sub(..) => {
                match signed(&expr).or_else(|| complex_sum(&expr)) {
                    Some(Number::Int(i)) => self.convert(Expr::Int(i))?,
                    Some(Number::Float(x)) => self.node(Value::Float(x)),
                    Some(Number::Complex(re, im)) => self.node(Value::Str(complex_repr(re, im))),
                    None => return Err(Failure::NotLiteral),
                }
            }
        })
    }
}

fn unhashable(expr: &Expr) -> String {
    let kind = match expr {
        Expr::Dict(_) => "dict",
        Expr::Set(_) => "set",
        _ => "list",
    };
    format!("unhashable type: '{kind}'")
}

enum Number {
    Int(Int),
    Float(f64),
    Complex(f64, f64),
}

/// A number, or one sign applied to a number (`-1`, `+2.5`, `-1j`); booleans are not numbers.
fn signed(expr: &Expr) -> Option<Number> {
    let plain = |e: &Expr| match e {
        Expr::Int(i) => Some(Number::Int(i.clone())),
        Expr::Float(x) => Some(Number::Float(*x)),
        Expr::Complex(re, im) => Some(Number::Complex(*re, *im)),
        _ => None,
    };
    match expr {
        Expr::Pos(inner) => plain(inner),
        Expr::Neg(inner) => match plain(inner)? {
            Number::Int(Int::Small(n)) => Some(match n.checked_neg() {
                Some(m) => Number::Int(Int::Small(m)),
                None => Number::Int(Int::Big(format!("-{}", (n as i128).unsigned_abs()))),
            }),
            Number::Int(Int::Big(d)) => Some(Number::Int(Int::Big(match d.strip_prefix('-') {
                Some(pos) => pos.to_string(),
                None => format!("-{d}"),
            }))),
            Number::Float(x) => Some(Number::Float(-x)),
            Number::Complex(re, im) => Some(Number::Complex(-re, -im)),
        },
        other => plain(other),
    }
}

/// `real ± imaginary`, the only binary operation `literal_eval` accepts.
fn complex_sum(expr: &Expr) -> Option<Number> {
    let (left, right, negate) = match expr {
        Expr::Add(l, r) => (l, r, false),
        Expr::Sub(l, r) => (l, r, true),
        _ => return None,
    };
    let real = match signed(left)? {
        Number::Int(Int::Small(n)) => n as f64,
        Number::Int(Int::Big(d)) => d.parse().ok()?,
        Number::Float(x) => x,
        Number::Complex(..) => return None,
    };
    let (re2, im2) = match signed(right)? {
        Number::Complex(re, im) => (re, im),
        _ => return None,
    };
    Some(if negate { Number::Complex(real - re2, -im2) } else { Number::Complex(real + re2, im2) })
}

/// `str(complex(re, im))`.
fn complex_repr(re: f64, im: f64) -> String {
    if re == 0.0 && re.is_sign_positive() {
        return format!("{}j", python_float_repr_bare(im));
    }
    let sign = if im.is_sign_negative() && !im.is_nan() { "" } else { "+" };
    format!("({}{sign}{}j)", python_float_repr_bare(re), python_float_repr_bare(im))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> Option<Value> {
        match literal_eval(text, None) {
            Literal::Value(node) => Some(node.value),
            Literal::Text => None,
            Literal::Fails(msg) => panic!("{msg}"),
        }
    }

    fn s(text: &str) -> Option<Value> {
        Some(Value::Str(text.into()))
    }

    #[test]
    fn numbers() {
        // Measured through ansible-inventory 2.21.5 from INI host variables.
        assert_eq!(eval("1"), Some(Value::Int(1)));
        assert_eq!(eval("-3"), Some(Value::Int(-3)));
        assert_eq!(eval("1.5"), Some(Value::Float(1.5)));
        assert_eq!(eval("1e5"), Some(Value::Float(100000.0)));
        assert_eq!(eval("0o17"), Some(Value::Int(15)));
        assert_eq!(eval("0x1f"), Some(Value::Int(31)));
        assert_eq!(eval("1_000"), Some(Value::Int(1000)));
        assert_eq!(
            eval("123456789012345678901234567890"),
            Some(Value::BigInt("123456789012345678901234567890".into()))
        );
        assert_eq!(
            eval("0xffffffffffffffffff"),
            Some(Value::BigInt("4722366482869645213695".into()))
        );
        assert_eq!(eval("1j"), s("1j"));
        assert_eq!(eval("-1j"), s("(-0-1j)"));
        assert_eq!(eval("1+2j"), s("(1+2j)"));
        assert_eq!(eval("1.5-2j"), s("(1.5-2j)"));
        assert_eq!(eval("017"), None);
        assert_eq!(eval("00"), Some(Value::Int(0)));
        assert_eq!(eval("1__0"), None);
        assert_eq!(eval("--3"), None);
        assert_eq!(eval("-True"), None);
        assert_eq!(eval("1+2"), None);
    }

    #[test]
    fn words_and_strings() {
        assert_eq!(eval("True"), Some(Value::Bool(true)));
        assert_eq!(eval("None"), Some(Value::Null));
        assert_eq!(eval("yes"), None);
        assert_eq!(eval("..."), s("..."));
        assert_eq!(eval("'a b'"), s("a b"));
        assert_eq!(eval("'a' \"b\""), s("ab"));
        assert_eq!(eval("'\\x41\\n\\q'"), s("A\n\\q"));
        assert_eq!(eval("r'\\n'"), s("\\n"));
        assert_eq!(eval("b'abc'"), s("abc"));
        assert_eq!(eval("f'x'"), None);
        assert_eq!(eval("'03#pa33w0rd'"), s("03#pa33w0rd"));
        assert_eq!(eval("quoted str"), None);
        assert_eq!(eval(""), None);
        assert_eq!(eval("8080 # a comment"), Some(Value::Int(8080)));
        assert_eq!(eval("  7"), Some(Value::Int(7)));
    }

    #[test]
    fn containers() {
        let Some(Value::Seq(items)) = eval("(1, 2)") else { panic!() };
        assert_eq!(items.len(), 2);
        let Some(Value::Seq(items)) = eval("{1, 1, 2}") else { panic!() };
        assert_eq!(items.len(), 2);
        let Some(Value::Map(m)) = eval("{'a': [1, {'b': None}], 2: 'x',}") else { panic!() };
        assert_eq!(m.len(), 2);
        assert_eq!(eval("(1)"), Some(Value::Int(1)));
        assert_eq!(eval("set()"), Some(Value::Seq(vec![])));
        assert_eq!(eval("[1, foo]"), None);
        assert_eq!(eval("[1 2]"), None);
        assert!(
            matches!(literal_eval("{[1]: 2}", None), Literal::Fails(m) if m == "unhashable type: 'list'")
        );
        // Items are converted before they are hashed: one that is no literal wins.
        assert_eq!(literal_eval("{{ lookup('file', 'k') }}", None), Literal::Text);
        assert_eq!(literal_eval("{[x]: 1}", None), Literal::Text);
        assert!(
            matches!(literal_eval("{{1}}", None), Literal::Fails(m) if m == "unhashable type: 'set'")
        );
    }
}
