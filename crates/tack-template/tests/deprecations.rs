//! Reading a deprecated variable (or ansible's `vars` dictionary) prints ansible's
//! deprecation warning, pointing at the template that read it.

use std::sync::{Arc, Mutex};

use tack_diag::Origin;
use tack_template::{Deprecation, Layer, Provenance, Scope, Templar};
use tack_yaml::{Node, Value};

#[test]
fn deprecated_reads_print_ansible_warnings() {
    let shown = Arc::new(Mutex::new(String::new()));
    let sink = shown.clone();
    tack_diag::set_warning_sink(Some(Box::new(move |text: &str| {
        sink.lock().unwrap().push_str(text);
    })));

    let mut layer = Layer::new();
    layer.insert("x", Node::bare(Value::Int(1)), Provenance::Trusted);
    let fact = Deprecation {
        message: "A deprecated fact was read.".into(),
        removed_in: "2.24".into(),
        help: Some("Read it from ansible_facts.".into()),
    };
    layer.insert_deprecated(
        "ansible_os_family",
        Node::bare(Value::Str("Debian".into())),
        Provenance::ManagedHost,
        fact,
    );
    let scope = Scope::new().with_layer(Arc::new(layer));
    let templar = Templar::new();
    let at = Origin::described("<test>");

    let quiet = Node::new(Value::Str("{{ x }}".into()), Some(at.clone()));
    templar.render(&quiet, &scope).unwrap();
    assert!(!shown.lock().unwrap().contains("DEPRECATION"));

    let node = Node::new(Value::Str("{{ vars['x'] }} {{ ansible_os_family }}".into()), Some(at));
    let rendered = templar.render(&node, &scope).unwrap();
    assert_eq!(rendered.value.value, Value::Str("1 Debian".into()));
    tack_diag::set_warning_sink(None);
    let text = shown.lock().unwrap().clone();
    assert!(text.contains("[DEPRECATION WARNING]: The internal \"vars\" dictionary is deprecated. This feature will be removed from ansible-core version 2.24."), "{text}");
    assert!(text.contains("A deprecated fact was read."), "{text}");
    assert!(text.contains("<test>"), "{text}");
}
