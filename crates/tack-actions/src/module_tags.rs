//! The tagged values of a module's result. ansible 2.19+'s module wire profile sends a value a
//! module tagged (`deprecate_value`) as `{"__ansible_type": "_AnsibleTaggedStr", "tags": [...],
//! "value": ...}`; ansible's controller reads it back as the value carrying its tags. Here it
//! becomes its plain value in the result, and its `Deprecated` tags are kept beside the result
//! (`tack_yaml::tagged`), for `register` to keep and a template reading the value to warn.
//! The only tag a module can send is `Deprecated` (the profile allows no other).

use std::sync::Arc;

use tack_yaml::tagged::{DeprecatedAt, PathStep};
use tack_yaml::{Mapping, Node, Value};

/// Replaces each tagged value of `data` with its value; returns the deprecations they carried,
/// by where the values sit.
pub(crate) fn untag(data: &mut Mapping) -> Vec<DeprecatedAt> {
    // Nearly every result has none: a walk that allocates nothing says so first.
    if !data.iter().any(|(_, value)| holds_tagged(value)) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut path = Vec::new();
    for (key, value) in data.iter_values_mut() {
        path.push(PathStep::Key(tack_yaml::pyrepr::str(&key.value)));
        untag_node(value, &mut path, &mut found);
        path.pop();
    }
    found
}

fn untag_node(node: &mut Node, path: &mut Vec<PathStep>, found: &mut Vec<DeprecatedAt>) {
    if let Some(tagged) = node.as_map().filter(|m| is_tagged(m)) {
        let tags = tagged.get("tags").and_then(Node::as_seq).map(<[Node]>::to_vec);
        let value = tagged.get("value").cloned().unwrap_or_else(|| Node::bare(Value::Null));
        *node = value;
        for tag in tags.iter().flatten().filter_map(Node::as_map) {
            if tag.get("__ansible_type").and_then(Node::as_str) == Some("Deprecated") {
                let deprecated = Arc::new(deprecated(tag));
                found.push(DeprecatedAt { path: path.clone(), deprecated });
            }
        }
    }
    match &mut node.value {
        Value::Map(map) => {
            for (key, value) in map.iter_values_mut() {
                path.push(PathStep::Key(tack_yaml::pyrepr::str(&key.value)));
                untag_node(value, path, found);
                path.pop();
            }
        }
        Value::Seq(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(PathStep::Index(i));
                untag_node(item, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

fn holds_tagged(node: &Node) -> bool {
    match &node.value {
        Value::Map(map) => is_tagged(map) || map.iter().any(|(_, v)| holds_tagged(v)),
        Value::Seq(items) => items.iter().any(holds_tagged),
        _ => false,
    }
}

fn is_tagged(map: &Mapping) -> bool {
    map.get("__ansible_type")
        .and_then(Node::as_str)
        .is_some_and(|kind| kind.starts_with("_AnsibleTagged"))
        && map.get("value").is_some()
}

/// A `Deprecated` tag as the profile sends it: `msg`, `help_text`, `date` or `version`, and
/// the `deprecator` (`PluginInfo`: `resolved_name`, `type`).
pub(crate) fn deprecated(tag: &Mapping) -> tack_diag::Deprecated {
    let text =
        |n: Option<&Node>| n.filter(|n| !n.is_null()).map(|n| tack_yaml::pyrepr::str(&n.value));
    let deprecator = tag.get("deprecator").and_then(Node::as_map);
    // A plugin's type comes as its enum's value or as a `PluginType` object holding it.
    let kind = deprecator
        .and_then(|d| d.get("type"))
        .map(|t| t.as_map().and_then(|m| m.get("value")).unwrap_or(t));
    tack_diag::Deprecated {
        msg: text(tag.get("msg")).unwrap_or_default(),
        help: text(tag.get("help_text")),
        version: text(tag.get("version")),
        date: text(tag.get("date")),
        deprecator: tack_diag::Deprecator {
            resolved_name: text(deprecator.and_then(|d| d.get("resolved_name"))),
            kind: text(kind),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: &str) -> Node {
        crate::json::from_json(&serde_json::from_str(json).unwrap())
    }

    #[test]
    fn a_tagged_value_becomes_its_value_and_its_deprecation_is_kept() {
        let mut data = node(
            r#"{"a": 1, "deep": [0, {"x": {"__ansible_type": "_AnsibleTaggedStr", "tags": [
                {"__ansible_type": "Deprecated", "msg": "old", "version": "9.9",
                 "deprecator": {"__ansible_type": "PluginInfo", "resolved_name": "foo.bar",
                                "type": null}}], "value": "v"}}]}"#,
        )
        .as_map()
        .unwrap()
        .clone();
        let found = untag(&mut data);
        assert_eq!(data, node(r#"{"a": 1, "deep": [0, {"x": "v"}]}"#).as_map().unwrap().clone());
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].path,
            vec![PathStep::Key("deep".into()), PathStep::Index(1), PathStep::Key("x".into())]
        );
        assert_eq!(
            found[0].deprecated.text(),
            "old. This feature will be removed from collection 'foo.bar' version 9.9."
        );
    }

    #[test]
    fn a_tagged_container_keeps_its_tagged_items() {
        let mut data = node(
            r#"{"l": {"__ansible_type": "_AnsibleTaggedList", "tags": [
                {"__ansible_type": "Deprecated", "msg": "outer"}],
                "value": [{"__ansible_type": "_AnsibleTaggedInt", "tags": [
                {"__ansible_type": "Deprecated", "msg": "inner"}], "value": 3}]}}"#,
        )
        .as_map()
        .unwrap()
        .clone();
        let found = untag(&mut data);
        assert_eq!(data, node(r#"{"l": [3]}"#).as_map().unwrap().clone());
        let paths: Vec<_> =
            found.iter().map(|f| (f.path.len(), f.deprecated.msg.as_str())).collect();
        assert_eq!(paths, vec![(1, "outer"), (2, "inner")]);
    }
}
