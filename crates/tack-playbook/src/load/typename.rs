//! The Python class names ansible's messages print for loaded values. ansible-core 2.21 wraps
//! loaded scalars and containers in "tagged" subclasses, and its messages show them
//! (`got a <class '..._AnsibleTaggedStr'> instead`).

use tack_yaml::{Node, Value};

const TAGGED: &str = "ansible.module_utils._internal._datatag";

/// `type(value)` as ansible prints it for a value loaded from YAML.
pub fn tagged_type_name(node: &Node) -> String {
    let class = match &node.value {
        Value::Null => return "<class 'NoneType'>".into(),
        Value::Bool(_) => return "<class 'bool'>".into(),
        Value::Int(_) | Value::BigInt(_) => "_AnsibleTaggedInt",
        Value::Float(_) => "_AnsibleTaggedFloat",
        Value::Str(_) | Value::Unsafe(_) => "_AnsibleTaggedStr",
        Value::Timestamp(t) if t.time.is_none() => "_AnsibleTaggedDate",
        Value::Timestamp(_) => "_AnsibleTaggedDateTime",
        Value::Seq(_) => "_AnsibleTaggedList",
        Value::Map(_) => "_AnsibleTaggedDict",
        Value::Vault(_) => {
            return "<class 'ansible._internal._datatag._tags.EncryptedString'>".into();
        }
    };
    format!("<class '{TAGGED}.{class}'>")
}
