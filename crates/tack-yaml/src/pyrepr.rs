//! Python's `repr()` and `str()` of loaded values, as ansible's messages and templates show
//! them (`'abc'`, `True`, `None`, `{'a': 1}`, `1e+16`).
//!
//! Written here, next to the data model, because error messages (`The value 'x' could not be
//! converted to 'int'.`), loop labels and templates all print values the way CPython does, and
//! no crate reproduces CPython's float and string repr rules.

use std::fmt::Write;

use crate::{Node, Timestamp, Value};

/// `repr(value)` as CPython prints it.
pub fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// `str(value)`: strings bare, everything else as `repr`.
pub fn str(value: &Value) -> String {
    match value {
        Value::Str(s) | Value::Unsafe(s) => s.clone(),
        Value::Timestamp(t) => timestamp_str(t),
        _ => repr(value),
    }
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(s) => out.push_str(s),
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) | Value::Unsafe(s) | Value::Vault(s) => out.push_str(&str_repr(s)),
        Value::Timestamp(t) => out.push_str(&timestamp_repr(t)),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, &item.value);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, &k.value);
                out.push_str(": ");
                write_repr(out, &v.value);
            }
            out.push('}');
        }
    }
}

/// `repr()` of a node's value.
pub fn node_repr(node: &Node) -> String {
    repr(&node.value)
}

/// CPython's `repr(str)`: single quotes unless the text has a single quote and no double quote.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
    out
}

/// An approximation of Python's `str.isprintable` for one character: control characters,
/// separators other than the ASCII space, and unassigned/private code points are escaped.
fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() {
        return false;
    }
    let u = c as u32;
    // Unicode separators (Zl, Zp, Zs other than space) and format characters CPython escapes.
    !matches!(u, 0x85 | 0xa0 | 0xad | 0x1680 | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064
        | 0x2066..=0x206f | 0x3000 | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff | 0xd800..=0xdfff)
}

/// CPython's `repr(float)`: the shortest digits that round-trip, positional when the decimal
/// exponent is in -4..16, otherwise `d.ddde+XX`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. `1.2345e-7`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let decpt = exp + 1;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if -4 < decpt && decpt <= 16 {
        if decpt <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-decpt) as usize));
            out.push_str(&digits);
        } else if decpt as usize >= digits.len() {
            out.push_str(&digits);
            out.push_str(&"0".repeat(decpt as usize - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(out, "e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}

fn timestamp_repr(t: &Timestamp) -> String {
    match &t.time {
        None => format!("datetime.date({}, {}, {})", t.year, t.month, t.day),
        Some(time) => {
            let mut s = format!(
                "datetime.datetime({}, {}, {}, {}, {}",
                t.year, t.month, t.day, time.hour, time.minute
            );
            if time.second != 0 || time.microsecond != 0 {
                let _ = write!(s, ", {}", time.second);
            }
            if time.microsecond != 0 {
                let _ = write!(s, ", {}", time.microsecond);
            }
            if let Some(off) = time.utc_offset_minutes {
                if off == 0 {
                    s.push_str(", tzinfo=datetime.timezone.utc");
                } else {
                    let _ = write!(
                        s,
                        ", tzinfo=datetime.timezone({}datetime.timedelta(seconds={}))",
                        if off < 0 { "-" } else { "" },
                        off.abs() * 60
                    );
                }
            }
            s.push(')');
            s
        }
    }
}

/// `str(date)` / `str(datetime)`: `2001-12-14`, `2001-12-14 21:59:43.100000-05:00`.
pub fn timestamp_str(t: &Timestamp) -> String {
    let mut s = format!("{:04}-{:02}-{:02}", t.year, t.month, t.day);
    if let Some(time) = &t.time {
        let _ = write!(s, " {:02}:{:02}:{:02}", time.hour, time.minute, time.second);
        if time.microsecond != 0 {
            let _ = write!(s, ".{:06}", time.microsecond);
        }
        if let Some(off) = time.utc_offset_minutes {
            let sign = if off < 0 { '-' } else { '+' };
            let _ = write!(s, "{sign}{:02}:{:02}", off.abs() / 60, off.abs() % 60);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_cpython() {
        for (f, want) in [
            (1.0, "1.0"),
            (1.5, "1.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.789, "123456.789"),
            (-2.5e-7, "-2.5e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn strings_pick_quotes_as_cpython() {
        assert_eq!(str_repr("abc"), "'abc'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(str_repr("tab\there\n"), "'tab\\there\\n'");
        assert_eq!(str_repr("é\u{7}"), "'é\\x07'");
    }
}
