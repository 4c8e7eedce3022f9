//! What a loop keeps of the list its `loop:` template gave, beyond the values: which strings
//! inside each item are the user's when the list as a whole is not (a registered result's
//! items carry the playbook's loop items, which ansible keeps trusted: each of its strings is
//! tagged, where tack's variables trust a value as a whole, see `Binding::with_trusted_at`).
//!
//! Only a list a variable holds (a view over its data) knows that; any list a template
//! builds is made of new values, and a template's new strings are never trusted.

use std::cell::RefCell;

use minijinja::value::Value as JValue;

thread_local! {
    /// While [`capturing`] runs: the last top-level template's value.
    static OFFERED: RefCell<Option<Option<JValue>>> = const { RefCell::new(None) };
}

/// The value a loop's template gave (what it knows of the list is `Templar`'s to say, in
/// `LoopSource::trusted_leaves`: this module stays a leaf of the crate).
pub struct LoopSource(pub(crate) Option<JValue>);

impl LoopSource {
    /// A source that keeps nothing (a list written item by item).
    pub fn none() -> LoopSource {
        LoopSource(None)
    }
}

/// Runs `f` (a render), keeping the value its top-level template gave.
pub(crate) fn capturing<R>(f: impl FnOnce() -> R) -> (R, LoopSource) {
    let outer = OFFERED.with(|o| o.replace(Some(None)));
    let result = f();
    let offered = OFFERED.with(|o| o.replace(outer)).flatten();
    (result, LoopSource(offered))
}

/// A top-level template's value, kept while [`capturing`] runs. Each offer replaces the one
/// before: renders nested in the loop's (a lookup's) finish first, so the last is the loop's
/// own.
pub(crate) fn offer(value: &JValue) {
    OFFERED.with(|o| {
        if let Some(slot) = o.borrow_mut().as_mut() {
            *slot = Some(value.clone());
        }
    });
}
