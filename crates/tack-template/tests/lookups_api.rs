//! The lookups' public surface beyond the recorded cases: the refused lookups' messages and
//! the registry (kept apart from `tests/lookups.rs`, which changes the process environment).

use tack_template::{Scope, Templar};

#[test]
fn the_url_lookup_is_refused_by_name() {
    let templar = Templar::new();
    let err = templar.render_str("{{ lookup('url', 'x') }}", &Scope::new()).expect_err("refused");
    assert!(
        err.message.starts_with("The lookup plugin 'url' failed: tack does not implement"),
        "{}",
        err.message
    );
    assert!(err.message.contains("'url' lookup"), "{}", err.message);
}

#[test]
fn every_required_lookup_is_registered() {
    let names = tack_template::lookups::names();
    for name in [
        "items",
        "inventory_hostnames",
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
