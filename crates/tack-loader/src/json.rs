//! JSON as ansible's legacy decoder reads data files and inventory script output: Python's
//! `json.loads` (`tack_yaml::pyjson`, the one decoder) with ansible's object hook, which turns
//! `{"__ansible_vault": ...}` into a vault value and `{"__ansible_unsafe": ...}` into an unsafe
//! string, whatever else the object holds.
//!
//! Every node gets the origin it is given (the file, without a position, as ansible tags JSON
//! values).

use tack_diag::Origin;
use tack_yaml::pyjson::{self, JsonLoadError};
use tack_yaml::{Mapping, Node, Value};

pub use tack_yaml::pyjson::JsonSyntaxError;

/// Why a document is not JSON ansible accepts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsonReadError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    /// A `__ansible_vault` or `__ansible_unsafe` marker whose value is not a string.
    #[error("{0}")]
    Marker(String),
}

/// Parses `text` as one JSON document, tagging every node with `origin`.
pub fn parse(text: &str, origin: Option<&Origin>) -> Result<Node, JsonReadError> {
    pyjson::loads_with(text, origin, markers).map_err(|e| match e {
        JsonLoadError::Syntax(e) => JsonReadError::Syntax(e),
        JsonLoadError::Hook(message) => JsonReadError::Marker(message),
    })
}

/// ansible's object hook: a mapping holding `__ansible_unsafe` or `__ansible_vault` is that
/// value.
fn markers(mut map: Mapping) -> Result<Value, String> {
    for (key, make) in [
        ("__ansible_unsafe", Value::Unsafe as fn(String) -> Value),
        ("__ansible_vault", Value::Vault as fn(String) -> Value),
    ] {
        if let Some((_, value)) = map.remove(key) {
            return match value.value {
                Value::Str(s) => Ok(make(s)),
                other => {
                    Err(format!("{key} is <class '{}'> not <class 'str'>", other.python_type()))
                }
            };
        }
    }
    Ok(Value::Map(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The decoder's own cases (errors, numbers, duplicate keys) are in `tack_yaml::pyjson`.

    fn ok(text: &str) -> Value {
        parse(text, None).unwrap().value
    }

    #[test]
    fn ansible_markers() {
        assert_eq!(
            ok("{\"__ansible_vault\": \"$ANSIBLE_VAULT\"}"),
            Value::Vault("$ANSIBLE_VAULT".into())
        );
        assert_eq!(
            ok("{\"__ansible_unsafe\": \"{{ x }}\", \"y\": 1}"),
            Value::Unsafe("{{ x }}".into())
        );
        assert!(matches!(parse("{\"__ansible_vault\": 1}", None), Err(JsonReadError::Marker(_))));
        assert!(matches!(parse("[1,]", None), Err(JsonReadError::Syntax(_))));
    }
}
