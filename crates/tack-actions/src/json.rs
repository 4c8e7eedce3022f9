//! Module arguments and results cross to the agent as JSON: loaded data (`tack_yaml::Node`)
//! to `serde_json` values and back. `!unsafe` strings travel as plain strings (the agent never
//! templates), and what comes back is data a managed host said.

use serde_json::{Map, Number, Value as Json};
use tack_yaml::{Mapping, Node, Value};

/// A rendered argument value as JSON.
pub fn to_json(node: &Node) -> Json {
    match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::Number(Number::from(*i)),
        Value::Float(f) => Number::from_f64(*f).map(Json::Number).unwrap_or(Json::Null),
        Value::Seq(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => Json::Object(map_to_json(m)),
        other => Json::String(tack_yaml::pyrepr::str(other)),
    }
}

/// A mapping as a JSON object (keys as Python's `str()` of them).
pub fn map_to_json(m: &Mapping) -> Map<String, Json> {
    m.iter().map(|(k, v)| (tack_yaml::pyrepr::str(&k.value), to_json(v))).collect()
}

/// A JSON value from the agent as loaded data.
pub fn from_json(json: &Json) -> Node {
    Node::bare(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(f)) if n.is_f64() => Value::Float(f),
            _ => Value::BigInt(n.to_string()),
        },
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::Seq(items.iter().map(from_json).collect()),
        Json::Object(map) => Value::Map(map_from_json(map)),
    })
}

/// A JSON object from the agent as a mapping.
pub fn map_from_json(map: &Map<String, Json>) -> Mapping {
    let mut out = Mapping::new();
    for (k, v) in map {
        out.insert(Node::bare(Value::Str(k.clone())), from_json(v));
    }
    out
}
