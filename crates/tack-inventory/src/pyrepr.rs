//! Python's `str()` and `repr()` of variable values, as `ansible-inventory --graph --vars`
//! prints them (`{port = 22}`, `{users = ['a', 'b']}`, `{flag = True}`).
//!
//! Vault values print as `********`: tack never shows decrypted plaintext (ansible prints it
//! here); the caller checks that every such value can be decrypted before printing, so a
//! missing or wrong password fails as it does in ansible.

use tack_yaml::{Timestamp, Value, python_float_repr};

/// What a vault value shows instead of its plaintext.
pub const VAULT_MASK: &str = "********";

/// `str(value)`.
pub fn str_of(value: &Value) -> String {
    match value {
        Value::Str(s) | Value::Unsafe(s) => s.clone(),
        Value::Vault(_) => VAULT_MASK.to_string(),
        Value::Timestamp(t) => timestamp_str(t),
        other => repr(other),
    }
}

/// `repr(value)`.
pub fn repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(digits) => digits.clone(),
        Value::Float(x) => python_float_repr(*x),
        Value::Str(s) | Value::Unsafe(s) => repr_str(s),
        Value::Vault(_) => repr_str(VAULT_MASK),
        Value::Timestamp(t) => timestamp_repr(t),
        Value::Seq(items) => {
            let parts: Vec<String> = items.iter().map(|n| repr(&n.value)).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Map(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", repr(&k.value), repr(&v.value)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// Whether Python's `str.isprintable` holds for a character, for the characters that occur in
/// practice: controls, separators other than the space, format characters and surrogates are
/// not printable.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    !(u < 0x20
        || (0x7f..=0xa0).contains(&u)
        || u == 0xad
        || (0x2000..=0x200f).contains(&u)
        || (0x2028..=0x202f).contains(&u)
        || (0x205f..=0x206f).contains(&u)
        || u == 0x3000
        || u == 0xfeff
        || u == 0x1680
        || (0xfff9..=0xfffb).contains(&u)
        || (0xe000..=0xf8ff).contains(&u))
}

/// `repr(str)`: single quotes unless the text has a single quote and no double quote.
pub fn repr_str(s: &str) -> String {
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
            c if !is_printable(c) => {
                let u = c as u32;
                if u < 0x100 {
                    out.push_str(&format!("\\x{u:02x}"));
                } else if u < 0x10000 {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\U{u:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn timestamp_str(t: &Timestamp) -> String {
    let date = format!("{:04}-{:02}-{:02}", t.year, t.month, t.day);
    let Some(time) = &t.time else { return date };
    let mut s = format!("{date} {:02}:{:02}:{:02}", time.hour, time.minute, time.second);
    if time.microsecond != 0 {
        s.push_str(&format!(".{:06}", time.microsecond));
    }
    if let Some(offset) = time.utc_offset_minutes {
        let sign = if offset < 0 { '-' } else { '+' };
        let abs = offset.unsigned_abs();
        s.push_str(&format!("{sign}{:02}:{:02}", abs / 60, abs % 60));
    }
    s
}

fn timestamp_repr(t: &Timestamp) -> String {
    let Some(time) = &t.time else {
        return format!("datetime.date({}, {}, {})", t.year, t.month, t.day);
    };
    let mut parts = vec![
        t.year.to_string(),
        t.month.to_string(),
        t.day.to_string(),
        time.hour.to_string(),
        time.minute.to_string(),
    ];
    if time.second != 0 || time.microsecond != 0 {
        parts.push(time.second.to_string());
    }
    if time.microsecond != 0 {
        parts.push(time.microsecond.to_string());
    }
    match time.utc_offset_minutes {
        Some(0) => parts.push("tzinfo=datetime.timezone.utc".into()),
        Some(m) => {
            parts.push(format!("tzinfo=datetime.timezone({})", timedelta_repr(i64::from(m) * 60)))
        }
        None => {}
    }
    format!("datetime.datetime({})", parts.join(", "))
}

fn timedelta_repr(seconds: i64) -> String {
    if seconds < 0 {
        let days = seconds.div_euclid(86400);
        let rest = seconds.rem_euclid(86400);
        return format!("datetime.timedelta(days={days}, seconds={rest})");
    }
    format!("datetime.timedelta(seconds={seconds})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tack_yaml::{Mapping, Node};

    fn s(t: &str) -> Node {
        Node::bare(Value::Str(t.into()))
    }

    #[test]
    fn reprs_like_python() {
        // Measured from `ansible-inventory --graph --vars` on INI values.
        let map: Mapping = [(s("a"), Node::bare(Value::Int(1)))].into_iter().collect();
        assert_eq!(str_of(&Value::Map(map)), "{'a': 1}");
        let list = Value::Seq(vec![s("a"), Node::bare(Value::Int(1)), Node::bare(Value::Null)]);
        assert_eq!(str_of(&list), "['a', 1, None]");
        assert_eq!(str_of(&Value::Bool(false)), "False");
        assert_eq!(str_of(&Value::Float(1e5)), "100000.0");
        assert_eq!(str_of(&Value::Str("quoted str".into())), "quoted str");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(repr_str("tab\there\u{1}é"), "'tab\\there\\x01é'");
    }
}
