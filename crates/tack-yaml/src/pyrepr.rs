//! Python's `repr()` and `str()` of loaded values, as ansible's messages, loop labels and
//! templates show them: strings (`'a'`, `"it's"`), floats (`1.5`, `1e+16`, `inf`), `True`,
//! `None`, `{'a': 1}`, dates.
//!
//! Written here, next to the data model, because every layer prints values the way CPython
//! does and no crate reproduces CPython's float and string repr rules. This is the one place
//! those rules live.

use crate::value::{Node, Timestamp, Value};

/// `repr(value)` as CPython prints it.
pub fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// `repr()` of a node's value.
pub fn node_repr(node: &Node) -> String {
    repr(&node.value)
}

/// `str(value)`: strings bare, dates in ISO form, everything else as `repr`.
pub fn str(value: &Value) -> String {
    match value {
        Value::Str(s) | Value::Unsafe(s) => s.clone(),
        Value::Timestamp(t) => timestamp_str(t),
        _ => repr(value),
    }
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
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
        Value::Vault(s) => out.push_str(&str_repr(s)),
        other => out.push_str(&py_key_repr(other)),
    }
}

/// Python's `repr(float)`: the shortest text that reads back as the same number, in positional
/// form unless the exponent is below -4 or at least 16.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // `{:e}` gives the shortest round-trip digits, e.g. `-1.2345e-5`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// Python's `repr(str)`. Printability follows Python's rule (`str.isprintable`) for the
/// characters YAML text can carry; the table is approximated by Unicode's control, format,
/// separator and private-use ranges, which is exact for every character libyaml accepts
/// except unassigned code points.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

fn is_printable(c: char) -> bool {
    let u = c as u32;
    !(u < 0x20
        || (0x7f..=0xa0).contains(&u)
        || u == 0xad
        || u == 0x1680
        || (0x2000..=0x200f).contains(&u)
        || (0x2028..=0x202f).contains(&u)
        || (0x205f..=0x206f).contains(&u)
        || u == 0x3000
        || (0xd800..=0xf8ff).contains(&u)
        || u == 0xfeff
        || (0xfff9..=0xfffb).contains(&u)
        || (0xe0000..=0xe007f).contains(&u)
        || u >= 0xf0000)
}

/// Python's `repr()` of a mapping key as ansible's duplicate-key warning shows it.
pub fn py_key_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(digits) => digits.clone(),
        Value::Float(f) => float_repr(*f),
        Value::Str(s) | Value::Unsafe(s) => str_repr(s),
        Value::Timestamp(t) => timestamp_repr(t),
        Value::Vault(_) => "<EncryptedString>".into(),
        Value::Seq(_) | Value::Map(_) => "<unhashable>".into(),
    }
}

/// `repr()` of a `date` or `datetime`.
pub fn timestamp_repr(t: &Timestamp) -> String {
    let Some(time) = &t.time else {
        return format!("datetime.date({}, {}, {})", t.year, t.month, t.day);
    };
    let mut fields = vec![
        t.year.to_string(),
        t.month.to_string(),
        t.day.to_string(),
        time.hour.to_string(),
        time.minute.to_string(),
    ];
    if time.second != 0 || time.microsecond != 0 {
        fields.push(time.second.to_string());
    }
    if time.microsecond != 0 {
        fields.push(time.microsecond.to_string());
    }
    let tz = match time.utc_offset_minutes {
        None => String::new(),
        Some(0) => ", tzinfo=datetime.timezone.utc".into(),
        Some(m) => {
            let seconds = i64::from(m) * 60;
            let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
            let delta = if days != 0 {
                format!("days={days}, seconds={rest}")
            } else {
                format!("seconds={rest}")
            };
            format!(", tzinfo=datetime.timezone(datetime.timedelta({delta}))")
        }
    };
    format!("datetime.datetime({}{tz})", fields.join(", "))
}

/// `str()` of a `date` or `datetime`: `2001-12-14`, `2001-12-14 21:59:43.100000-05:00`.
pub fn timestamp_str(t: &Timestamp) -> String {
    let date = format!("{:04}-{:02}-{:02}", t.year, t.month, t.day);
    let Some(time) = &t.time else { return date };
    let mut out = format!("{date} {:02}:{:02}:{:02}", time.hour, time.minute, time.second);
    if time.microsecond != 0 {
        out.push_str(&format!(".{:06}", time.microsecond));
    }
    if let Some(m) = time.utc_offset_minutes {
        let sign = if m < 0 { '-' } else { '+' };
        out.push_str(&format!("{sign}{:02}:{:02}", m.abs() / 60, m.abs() % 60));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python() {
        let cases = [
            (1.5, "1.5"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-0.0, "-0.0"),
            (1.5e300, "1.5e+300"),
            (f64::NEG_INFINITY, "-inf"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn strings_quote_as_python() {
        assert_eq!(str_repr("a"), "'a'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("'\""), "'\\'\"'");
        assert_eq!(str_repr("a\tb\u{7}é"), "'a\\tb\\x07é'");
    }
}
