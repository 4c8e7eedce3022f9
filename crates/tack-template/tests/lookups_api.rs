//! The lookups' public surface beyond the recorded cases: the refused lookups' messages and
//! the registry (kept apart from `tests/lookups.rs`, which changes the process environment).

use tack_template::{Scope, Templar};

#[test]
fn refused_lookups_say_why() {
    let templar = Templar::new();
    for (name, needle) in [("url", "'url' lookup"), ("inventory_hostnames", "needs the inventory")]
    {
        let err = templar
            .render_str(&format!("{{{{ lookup('{name}', 'x') }}}}"), &Scope::new())
            .expect_err("refused");
        assert!(
            err.message.starts_with(&format!(
                "The lookup plugin '{name}' failed: tack does not implement"
            )),
            "{}",
            err.message
        );
        assert!(err.message.contains(needle), "{}", err.message);
    }
}

#[test]
fn every_required_lookup_is_registered() {
    let names = tack_template::lookups::names();
    for name in [
        "items",
        "list",
        "indexed_items",
        "dict",
        "nested",
        "together",
        "subelements",
        "sequence",
        "random_choice",
        "file",
        "fileglob",
        "first_found",
        "template",
        "env",
        "pipe",
        "lines",
        "password",
        "vars",
        "varnames",
        "unvault",
        "config",
        "ini",
        "csvfile",
    ] {
        assert!(names.contains(&name), "{name} missing");
    }
    assert!(!names.contains(&"flattened"), "flattened is not an ansible.builtin lookup");
}
