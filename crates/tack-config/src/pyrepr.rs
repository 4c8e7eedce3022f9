//! Python's `repr()` of the values that appear in ansible's configuration errors
//! (`Invalid value provided for 'integer': 'abc'`, `[line  2]: 'forks\n'`).
//!
//! Owns only text formatting; it knows nothing about settings.

use crate::SettingValue;

/// `repr(s)` for a Python `str`: single quotes unless the text holds a `'` and no `"`.
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
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for one character. Python consults the full Unicode category
/// table; this covers the categories it rejects that occur in practice (controls, separators,
/// format characters, private use). Unassigned code points are taken as printable.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    !matches!(u,
        0x00..=0x1f | 0x7f..=0xa0 | 0xad
        | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x1680 | 0x180e
        | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064 | 0x2066..=0x206f
        | 0x3000 | 0xe000..=0xf8ff | 0xfeff | 0xfff9..=0xfffb
        | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a | 0xe0001 | 0xe0020..=0xe007f
        | 0xf0000..=0x10ffff)
}

/// `repr(f)` for a Python `float`: the shortest round-tripping digits, in exponent form when the
/// exponent is below -4 or at least 16.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // `{:e}` gives Rust's shortest round-trip digits, e.g. `1.5e-7`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// `repr()` of a setting value as Python would print the equivalent object.
pub fn value_repr(v: &SettingValue) -> String {
    match v {
        SettingValue::Null => "None".into(),
        SettingValue::Bool(true) => "True".into(),
        SettingValue::Bool(false) => "False".into(),
        SettingValue::Int(n) => n.to_string(),
        SettingValue::Float(f) => float_repr(*f),
        SettingValue::Str(s) => str_repr(s),
        SettingValue::List(items) => {
            let inner: Vec<String> = items.iter().map(value_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        SettingValue::Dict(items) => {
            let inner: Vec<String> =
                items.iter().map(|(k, v)| format!("{}: {}", str_repr(k), value_repr(v))).collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_pick_quotes_and_escape_as_python_does() {
        assert_eq!(str_repr("abc"), "'abc'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("'\""), "'\\'\"'");
        assert_eq!(str_repr("tab\there\n"), "'tab\\there\\n'");
        assert_eq!(str_repr("a\\b\u{7f}\u{a0}é"), "'a\\\\b\\x7f\\xa0é'");
        assert_eq!(str_repr("\u{feff}x"), "'\\ufeffx'");
    }

    #[test]
    fn floats_print_as_python_does() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.01, "0.01"),
            (1.5, "1.5"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (123456.0, "123456.0"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(float_repr(f), s, "{f}");
        }
    }

    #[test]
    fn lists_and_none() {
        let v = SettingValue::List(vec![SettingValue::Str("error".into()), SettingValue::Null]);
        assert_eq!(value_repr(&v), "['error', None]");
    }
}
