//! Python's `str()` and `repr()` of variable values as `ansible-inventory --graph --vars` and
//! its messages show them (`{port = 22}`, `{users = ['a', 'b']}`, `{flag = True}`), through the
//! project's one set of CPython rules in `tack_yaml::pyrepr`.
//!
//! The one difference this module adds: vault values print as `********`. tack never shows
//! decrypted plaintext (ansible prints it here); the caller checks that every such value can be
//! decrypted before printing, so a missing or wrong password fails as it does in ansible.

use tack_yaml::{Node, Value, pyrepr};

/// What a vault value shows instead of its plaintext.
pub const VAULT_MASK: &str = "********";

/// The value with every vault value replaced by the mask.
fn masked(value: &Value) -> Value {
    match value {
        Value::Vault(_) => Value::Str(VAULT_MASK.to_string()),
        Value::Seq(items) => Value::Seq(
            items.iter().map(|n| Node::new(masked(&n.value), n.origin.clone())).collect(),
        ),
        Value::Map(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (k.clone(), Node::new(masked(&v.value), v.origin.clone())))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `str(value)`.
pub fn str_of(value: &Value) -> String {
    pyrepr::str(&masked(value))
}

/// `repr(value)`.
pub fn repr(value: &Value) -> String {
    pyrepr::repr(&masked(value))
}

/// `repr(str)`.
pub fn repr_str(s: &str) -> String {
    pyrepr::str_repr(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tack_yaml::Mapping;

    fn s(t: &str) -> Node {
        Node::bare(Value::Str(t.into()))
    }

    #[test]
    fn graph_values_like_python() {
        // Measured from `ansible-inventory --graph --vars` on INI values.
        let map: Mapping = [(s("a"), Node::bare(Value::Int(1)))].into_iter().collect();
        assert_eq!(str_of(&Value::Map(map)), "{'a': 1}");
        let list = Value::Seq(vec![s("a"), Node::bare(Value::Int(1)), Node::bare(Value::Null)]);
        assert_eq!(str_of(&list), "['a', 1, None]");
        assert_eq!(str_of(&Value::Bool(false)), "False");
        assert_eq!(str_of(&Value::Float(1e5)), "100000.0");
        assert_eq!(str_of(&Value::Str("quoted str".into())), "quoted str");
        assert_eq!(repr_str("it's"), "\"it's\"");
    }

    #[test]
    fn vault_values_are_masked() {
        let vault = Node::bare(Value::Vault("$ANSIBLE_VAULT;1.1;AES256\n6162\n".into()));
        assert_eq!(str_of(&vault.value), VAULT_MASK);
        assert_eq!(str_of(&Value::Seq(vec![vault])), "['********']");
    }
}
