//! Why the last undefined value a render made is one, when the engine cannot name it from
//! the template's expression: `undef()`'s hint, a lookup's words, a filter's
//! (`map(attribute=...)`). Per thread, cleared as each top-level render starts.
//!
//! A leaf: filters and lookups set it without reaching into the engine that reads it.

use std::cell::RefCell;

/// What an `undef()` without a hint says (ansible's default hint).
pub(crate) const BARE_UNDEF: &str = "Mandatory variable has not been overridden";

thread_local! {
    static MADE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Notes why the undefined value just made is one.
pub(crate) fn set(message: String) {
    MADE.with(|m| *m.borrow_mut() = Some(message));
}

/// What [`set`] noted last on this thread.
pub(crate) fn get() -> Option<String> {
    MADE.with(|m| m.borrow().clone())
}

/// Forgets it (a new render starts).
pub(crate) fn clear() {
    MADE.with(|m| *m.borrow_mut() = None);
}
