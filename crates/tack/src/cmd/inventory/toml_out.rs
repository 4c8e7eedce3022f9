//! `ansible-inventory --toml`'s text: a value written as the `tomli-w` library ansible uses
//! writes it (tables after a table's own keys, `[a.b]` headers only for tables with keys of
//! their own or none at all, arrays one item per line with a trailing comma, inline tables
//! inside arrays, basic strings with `tomli-w`'s escapes, keys bare when they can be).
//!
//! Written here rather than with a TOML crate: those choose their own layout, and the output
//! must be the one ansible prints.

use tack_yaml::{Mapping, Node, Value};

const INDENT: &str = "    ";
/// `tomli-w`'s longest inline table it keeps inside an array of tables.
const MAX_LINE_LENGTH: usize = 100;

/// A value TOML cannot hold, named as Python's `type()` shows it.
#[derive(Debug)]
pub(super) struct NotSerializable(pub String);

/// `tomli_w.dumps(table)`.
pub(super) fn dumps(table: &Mapping) -> Result<String, NotSerializable> {
    let mut out = String::new();
    table_chunks(table, "", false, &mut out)?;
    Ok(out)
}

/// A list of tables that must be written as `[[name]]` sections (some item too long or
/// spanning lines to stay inline).
fn array_of_tables(value: &Value) -> Option<Vec<&Mapping>> {
    let Value::Seq(items) = value else { return None };
    let tables: Vec<&Mapping> = items.iter().filter_map(Node::as_map).collect();
    if items.is_empty() || tables.len() != items.len() {
        return None;
    }
    let all_inline = tables.iter().all(|t| {
        inline_table(t, 0).is_ok_and(|text| {
            let rendered = format!("{INDENT}{text},");
            rendered.chars().count() <= MAX_LINE_LENGTH && !rendered.contains('\n')
        })
    });
    (!all_inline).then_some(tables)
}

fn table_chunks(
    table: &Mapping,
    name: &str,
    inside_array: bool,
    out: &mut String,
) -> Result<(), NotSerializable> {
    let mut literals = Vec::new();
    let mut tables: Vec<(String, &Mapping, bool)> = Vec::new();
    for (key, value) in table.iter() {
        let key = tack_yaml::pyrepr::str(&key.value);
        match &value.value {
            Value::Map(map) => tables.push((key, map, false)),
            other => match array_of_tables(other) {
                Some(items) => tables.extend(items.into_iter().map(|t| (key.clone(), t, true))),
                None => literals.push((key, value)),
            },
        }
    }
    let mut yielded = false;
    if inside_array || (!name.is_empty() && (!literals.is_empty() || tables.is_empty())) {
        yielded = true;
        if inside_array {
            out.push_str(&format!("[[{name}]]\n"));
        } else {
            out.push_str(&format!("[{name}]\n"));
        }
    }
    if !literals.is_empty() {
        yielded = true;
        for (key, value) in literals {
            out.push_str(&format!("{} = {}\n", key_part(&key), literal(&value.value, 0)?));
        }
    }
    for (key, sub, in_array) in tables {
        if yielded {
            out.push('\n');
        } else {
            yielded = true;
        }
        let part = key_part(&key);
        let display = if name.is_empty() { part } else { format!("{name}.{part}") };
        table_chunks(sub, &display, in_array, out)?;
    }
    Ok(())
}

fn key_part(key: &str) -> String {
    let bare =
        !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare { key.to_string() } else { string(key) }
}

fn literal(value: &Value, nest: usize) -> Result<String, NotSerializable> {
    Ok(match value {
        Value::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.is_nan() => "nan".to_string(),
        Value::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.to_string(),
        Value::Float(_) => tack_yaml::pyrepr::repr(value),
        Value::Str(s) => string(s),
        Value::Seq(items) => array(items, nest)?,
        Value::Map(map) => inline_table(map, nest)?,
        Value::BigInt(digits) => digits.clone(),
        Value::Unsafe(text) => string(text),
        // Dates, vaulted text and null have no TOML form tack writes (`tomli-w` refuses
        // null as this does; dates and vaulted values are refused rather than guessed).
        other => {
            return Err(NotSerializable(format!(
                "Object of type '{}' is not TOML serializable",
                other.python_type()
            )));
        }
    })
}

fn array(items: &[Node], nest: usize) -> Result<String, NotSerializable> {
    if items.is_empty() {
        return Ok("[]".to_string());
    }
    let item_indent = INDENT.repeat(nest + 1);
    let closing = INDENT.repeat(nest);
    let mut parts = Vec::new();
    for item in items {
        parts.push(format!("{item_indent}{}", literal(&item.value, nest + 1)?));
    }
    Ok(format!("[\n{},\n{closing}]", parts.join(",\n")))
}

fn inline_table(map: &Mapping, nest: usize) -> Result<String, NotSerializable> {
    if map.is_empty() {
        return Ok("{}".to_string());
    }
    let mut parts = Vec::new();
    for (key, value) in map.iter() {
        let key = tack_yaml::pyrepr::str(&key.value);
        parts.push(format!("{} = {}", key_part(&key), literal(&value.value, nest)?));
    }
    Ok(format!("{{ {} }}", parts.join(", ")))
}

/// A basic string: `"` and `\` escaped, the control characters but tab as `\b \n \f \r` or
/// `\uXXXX`.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push('\t'),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.into()))
    }

    fn map(entries: Vec<(&str, Node)>) -> Mapping {
        let mut m = Mapping::new();
        for (k, v) in entries {
            m.insert(s(k), v);
        }
        m
    }

    #[test]
    fn tables_follow_their_keys_and_arrays_span_lines() {
        let inner = map(vec![
            ("some_int", Node::bare(Value::Int(1))),
            ("some_list", Node::bare(Value::Seq(vec![Node::bare(Value::Int(1))]))),
        ]);
        let host = map(vec![("foo", s("bar")), ("some_dict", Node::bare(Value::Map(inner)))]);
        let hosts = map(vec![("something", Node::bare(Value::Map(host)))]);
        let group = map(vec![("hosts", Node::bare(Value::Map(hosts)))]);
        let top = map(vec![("somegroup", Node::bare(Value::Map(group)))]);
        assert_eq!(
            dumps(&top).unwrap(),
            "[somegroup.hosts.something]\nfoo = \"bar\"\n\n[somegroup.hosts.something.some_dict]\n\
             some_int = 1\nsome_list = [\n    1,\n]\n"
        );
    }

    #[test]
    fn keys_are_quoted_and_strings_escaped_as_tomli_w_does() {
        assert_eq!(key_part("příbor"), "\"příbor\"");
        assert_eq!(key_part("web-1_a"), "web-1_a");
        assert_eq!(string("a\"b\\c\td\u{1}"), "\"a\\\"b\\\\c\td\\u0001\"");
        let top = map(vec![("x", Node::bare(Value::Map(Mapping::new())))]);
        assert_eq!(dumps(&top).unwrap(), "[x]\n");
        let null = map(vec![("x", Node::bare(Value::Null))]);
        assert!(dumps(&null).is_err());
    }
}
