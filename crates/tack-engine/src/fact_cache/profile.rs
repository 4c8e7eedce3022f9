//! A host's facts as ansible-core 2.21's cache-persistence JSON profile writes them: plain JSON
//! where plain JSON says it, and typed objects (`{"__ansible_type": ...}`) for the rest: a
//! vault value (`EncryptedString`), a date or time, and a value carrying tags
//! (`_AnsibleTaggedStr` and its kin, each with its `tags`). What `jsonfile` keeps in its files
//! (inside `{"__payload__": ...}`), and what crosses to a cache plugin written in Python.
//!
//! Of the tags, `Origin` (where a string was written) is kept both ways, as ansible keeps it;
//! `TrustedAsTemplate` is never written nor believed (a cached fact is never a template here),
//! and a value ansible wrote with its vault ciphertext (`VaultedValue`) is read back as that
//! vault value, never as its plaintext.

use std::path::Path;

use tack_diag::Origin;
use tack_yaml::{Mapping, Node, Value};

/// The key of the serialized facts in `jsonfile`'s file.
const PAYLOAD: &str = "__payload__";

/// `jsonfile`'s text for `facts`: `{"__payload__": "<the facts in the profile>"}`.
pub(super) fn encode_file(facts: &Mapping) -> Result<String, tack_yaml::JsonError> {
    let mut outer = Mapping::new();
    outer.insert(str_node(PAYLOAD), str_node(&encode(facts)?));
    tack_yaml::to_json(&Node::bare(Value::Map(outer)), &compact())
}

/// `facts` in the profile's JSON text.
pub(super) fn encode(facts: &Mapping) -> Result<String, tack_yaml::JsonError> {
    // ansible's profile refuses bytes (its run then ends in a traceback; tack warns that the
    // facts were not written, as for any other failed write).
    let bytes = tack_yaml::BytesJson::Refused { type_name: "bytes", profile: "cache_persistence" };
    let options = tack_yaml::JsonOptions { bytes, ..compact() };
    tack_yaml::to_json(&profiled(&Node::bare(Value::Map(facts.clone()))), &options)
}

/// The facts in `jsonfile`'s text, or why the file is no good (in Python's words where the
/// JSON is at fault).
pub(super) fn decode_file(text: &str) -> Result<Mapping, String> {
    let outer = tack_yaml::pyjson::loads(text, None).map_err(|e| e.to_string())?;
    match &outer.value {
        Value::Map(map) => match map.get(PAYLOAD).map(|n| &n.value) {
            Some(Value::Str(payload)) => decode(payload),
            _ => Err(format!("{PAYLOAD:?} is missing")),
        },
        _ => Err("the file does not hold a mapping".into()),
    }
}

/// The facts in the profile's JSON text.
pub(super) fn decode(payload: &str) -> Result<Mapping, String> {
    let inner = tack_yaml::pyjson::loads(payload, None).map_err(|e| e.to_string())?;
    match typed(inner)?.value {
        Value::Map(facts) => Ok(facts),
        _ => Err("the cached facts are not a mapping".into()),
    }
}

fn compact() -> tack_yaml::JsonOptions {
    tack_yaml::JsonOptions::compact()
}

fn str_node(text: &str) -> Node {
    Node::bare(Value::Str(text.into()))
}

/// A typed object of the profile from its fields, in the order given.
fn typed_object(fields: Vec<(&str, Value)>) -> Node {
    let mut map = Mapping::new();
    for (key, value) in fields {
        map.insert(str_node(key), Node::bare(value));
    }
    Node::bare(Value::Map(map))
}

/// `node` with what plain JSON cannot say in the profile's typed objects.
fn profiled(node: &Node) -> Node {
    match &node.value {
        Value::Vault(ciphertext) => typed_object(vec![
            ("value", Value::Str(ciphertext.clone())),
            ("tags", Value::Seq(Vec::new())),
            ("__ansible_type", Value::Str("EncryptedString".into())),
        ]),
        Value::Timestamp(t) => {
            let kind = if t.time.is_some() {
                "AnsibleSerializableDateTime"
            } else {
                "AnsibleSerializableDate"
            };
            typed_object(vec![
                ("iso8601", Value::Str(tack_yaml::timestamp_isoformat(t))),
                ("__ansible_type", Value::Str(kind.into())),
            ])
        }
        Value::Str(text) | Value::Unsafe(text) => match node.origin.as_ref().and_then(origin_tag) {
            Some(tag) => typed_object(vec![
                ("value", Value::Str(text.clone())),
                ("tags", Value::Seq(vec![tag])),
                ("__ansible_type", Value::Str("_AnsibleTaggedStr".into())),
            ]),
            None => str_node(text),
        },
        Value::Seq(items) => Node::bare(Value::Seq(items.iter().map(profiled).collect())),
        Value::Map(map) => {
            let mut out = Mapping::new();
            for (k, v) in map.iter() {
                out.insert(k.clone(), profiled(v));
            }
            Node::bare(Value::Map(out))
        }
        _ => node.clone(),
    }
}

/// ansible's `Origin` tag for a place in a file (other origins are not written).
fn origin_tag(origin: &Origin) -> Option<Node> {
    let path = origin.path.as_ref()?;
    let mut fields = vec![("path", Value::Str(path.to_string_lossy().into_owned()))];
    if origin.line > 0 {
        fields.push(("line_num", Value::Int(i64::from(origin.line))));
    }
    if origin.col > 0 {
        fields.push(("col_num", Value::Int(i64::from(origin.col))));
    }
    fields.push(("__ansible_type", Value::Str("Origin".into())));
    Some(typed_object(fields))
}

/// `node` with the profile's typed objects read as values, inner ones first (as Python's
/// `object_hook` sees them): a tagged value is its value, with its `Origin` as the node's
/// origin; a value ansible wrote with its vault ciphertext (`VaultedValue`) and an
/// `EncryptedString` become the vault value again; a serializable date its timestamp.
fn typed(node: Node) -> Result<Node, String> {
    let value = match node.value {
        Value::Seq(items) => Value::Seq(items.into_iter().map(typed).collect::<Result<_, _>>()?),
        Value::Map(map) => {
            let mut out = Mapping::new();
            for (k, v) in map.iter() {
                out.insert(k.clone(), typed(v.clone())?);
            }
            return typed_map(out, node.origin);
        }
        other => other,
    };
    Ok(Node::new(value, node.origin))
}

fn typed_map(map: Mapping, origin: Option<Origin>) -> Result<Node, String> {
    let Some(kind) = map.get("__ansible_type").and_then(Node::as_str).map(str::to_string) else {
        return Ok(Node::new(Value::Map(map), origin));
    };
    let field = |name: &str| map.get(name).cloned();
    let value = match kind.as_str() {
        "EncryptedString" => match field("value").map(|n| n.value) {
            Some(Value::Str(ciphertext)) => Value::Vault(ciphertext),
            _ => return Err("an EncryptedString without its ciphertext".into()),
        },
        // A tag, only ever inside `tags`.
        "Origin" | "TrustedAsTemplate" | "SourceWasEncrypted" | "VaultedValue" => Value::Map(map),
        "AnsibleSerializableDate" | "AnsibleSerializableDateTime" | "AnsibleSerializableTime" => {
            let iso = map.get("iso8601").and_then(Node::as_str).unwrap_or_default();
            tack_yaml::parse_timestamp(iso)
                .map_or_else(|| Value::Str(iso.to_string()), Value::Timestamp)
        }
        tagged if tagged.starts_with("_AnsibleTagged") => {
            let tags = field("tags").map(|n| n.value);
            let tags: &[Node] = match &tags {
                Some(Value::Seq(tags)) => tags,
                _ => &[],
            };
            let tag = |name: &str| {
                tags.iter()
                    .filter_map(Node::as_map)
                    .find(|t| t.get("__ansible_type").and_then(Node::as_str) == Some(name))
            };
            if let Some(ciphertext) =
                tag("VaultedValue").and_then(|t| t.get("ciphertext")).and_then(Node::as_str)
            {
                return Ok(Node::new(Value::Vault(ciphertext.to_string()), origin));
            }
            let value = field("value").ok_or_else(|| format!("a {tagged} without its value"))?;
            let written = tag("Origin").and_then(origin_of);
            return Ok(Node::new(value.value, written.or(value.origin)));
        }
        other => return Err(format!("an unknown cached type {other:?}")),
    };
    Ok(Node::new(value, origin))
}

/// The place an `Origin` tag names, when it names a file.
fn origin_of(tag: &Mapping) -> Option<Origin> {
    let path = tag.get("path").and_then(Node::as_str)?;
    let number = |key: &str| match tag.get(key).map(|n| &n.value) {
        Some(Value::Int(n)) => u32::try_from(*n).unwrap_or(0),
        _ => 0,
    };
    Some(Origin::new(Path::new(path).into(), number("line_num"), number("col_num")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        str_node(text)
    }

    #[test]
    fn what_ansible_wrote_is_read_with_its_secrets_sealed() {
        // As ansible-core 2.21.5 writes a `cacheable` `set_fact` (tags shortened).
        let payload = r#"{"n": {"value": 3, "tags": [], "__ansible_type": "_AnsibleTaggedInt"}, "l": {"value": [1, {"value": "a", "tags": [{"__ansible_type": "TrustedAsTemplate"}], "__ansible_type": "_AnsibleTaggedStr"}], "tags": [], "__ansible_type": "_AnsibleTaggedList"}, "v": {"value": "secret", "tags": [{"ciphertext": "$ANSIBLE_VAULT;1.1;AES256\nab", "__ansible_type": "VaultedValue"}], "__ansible_type": "_AnsibleTaggedStr"}, "dt": {"value": {"iso8601": "2024-01-02", "__ansible_type": "AnsibleSerializableDate"}, "tags": [], "__ansible_type": "_AnsibleTaggedDate"}, "z": null}"#;
        let mut outer = Mapping::new();
        outer.insert(s("__payload__"), s(payload));
        let text = tack_yaml::to_json(&Node::bare(Value::Map(outer)), &compact()).unwrap();
        let facts = decode_file(&text).unwrap();
        assert_eq!(facts.get("n").unwrap().value, Value::Int(3));
        let list = facts.get("l").unwrap().as_seq().unwrap();
        assert_eq!(list[1].value, Value::Str("a".into()));
        assert_eq!(
            facts.get("v").unwrap().value,
            Value::Vault("$ANSIBLE_VAULT;1.1;AES256\nab".into())
        );
        assert!(matches!(facts.get("dt").unwrap().value, Value::Timestamp(_)));
        assert_eq!(facts.get("z").unwrap().value, Value::Null);
    }

    #[test]
    fn a_string_keeps_where_it_was_written_both_ways() {
        let origin = Origin::new(Path::new("/p/site.yml").into(), 5, 14);
        let mut facts = Mapping::new();
        facts.insert(s("foo"), Node::new(Value::Str("bar".into()), Some(origin.clone())));
        facts.insert(s("plain"), s("x"));
        let text = encode(&facts).unwrap();
        assert_eq!(
            text,
            r#"{"foo": {"value": "bar", "tags": [{"path": "/p/site.yml", "line_num": 5, "col_num": 14, "__ansible_type": "Origin"}], "__ansible_type": "_AnsibleTaggedStr"}, "plain": "x"}"#
        );
        let back = decode(&text).unwrap();
        assert_eq!(back.get("foo").unwrap().origin, Some(origin));
        assert_eq!(back.get("foo").unwrap().value, Value::Str("bar".into()));
        assert_eq!(back.get("plain").unwrap().origin, None);
    }

    #[test]
    fn an_unknown_type_is_refused() {
        let err = decode(r#"{"a": {"__ansible_type": "Pickle"}}"#).unwrap_err();
        assert_eq!(err, "an unknown cached type \"Pickle\"");
    }
}
