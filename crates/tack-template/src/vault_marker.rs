//! ansible's `VaultExceptionMarker`: a `!vault` value the run's secrets cannot decrypt, read
//! where a plugin that takes such values receives it (`unvault`, `type_debug`, the
//! `vault_encrypted` test). A leaf: the variable views make markers, those plugins disarm
//! them, the engine asks whether any was left armed; it names none of them.
//!
//! ansible makes the marker on every such read and fails where anything else uses it. tack
//! fails at the read itself, and only a render that failed so, and whose text names one of
//! those plugins, runs again with markers made ([`with_markers`]): it stands only if every
//! marker made went to one of them. Every other render pays nothing.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use minijinja::value::{Enumerator, Object, ObjectRepr, Value as JValue};

/// The plugins that take a marker, as a render's text names them.
const ACCEPTING: &[&str] = &["unvault", "type_debug", "vault_encrypted"];

/// An undecryptable `!vault` value, read while markers are made.
#[derive(Debug)]
pub(crate) struct VaultMarker {
    ciphertext: String,
    disarmed: AtomicBool,
}

impl Object for VaultMarker {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Err(fmt::Error)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }
}

thread_local! {
    /// How many renders on this thread make markers.
    static ON: Cell<u32> = const { Cell::new(0) };
    /// The markers made by the innermost of them.
    static MADE: RefCell<Vec<Vec<Arc<VaultMarker>>>> = const { RefCell::new(Vec::new()) };
}

/// Whether a failed render of `source` runs again with markers made.
pub(crate) fn accepted_in(source: &str) -> bool {
    ACCEPTING.iter().any(|name| source.contains(name))
}

/// Whether reads make markers now.
pub(crate) fn on() -> bool {
    ON.with(Cell::get) > 0
}

/// A marker for `ciphertext`, noted as armed.
pub(crate) fn made(ciphertext: &str) -> JValue {
    let marker = Arc::new(VaultMarker {
        ciphertext: ciphertext.to_string(),
        disarmed: AtomicBool::new(false),
    });
    MADE.with(|m| {
        if let Some(level) = m.borrow_mut().last_mut() {
            level.push(marker.clone());
        }
    });
    JValue::from_dyn_object(marker)
}

/// Whether `value` is a marker.
pub(crate) fn is_marker(value: &JValue) -> bool {
    value.downcast_object_ref::<VaultMarker>().is_some()
}

/// The ciphertext of `value` when it is a marker, which a plugin that takes markers has now
/// received.
pub(crate) fn disarm(value: &JValue) -> Option<String> {
    let marker = value.downcast_object_ref::<VaultMarker>()?;
    marker.disarmed.store(true, Ordering::Relaxed);
    Some(marker.ciphertext.clone())
}

/// Runs `f` with markers made; its result stands only if every marker made went to a plugin
/// that takes it (`None` otherwise).
pub(crate) fn with_markers<R>(f: impl FnOnce() -> R) -> Option<R> {
    ON.with(|on| on.set(on.get() + 1));
    MADE.with(|m| m.borrow_mut().push(Vec::new()));
    let result = f();
    ON.with(|on| on.set(on.get().saturating_sub(1)));
    let made = MADE.with(|m| m.borrow_mut().pop()).unwrap_or_default();
    made.iter().all(|m| m.disarmed.load(Ordering::Relaxed)).then_some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_stands_only_when_every_marker_was_disarmed() {
        assert!(!on());
        let kept = with_markers(|| {
            assert!(on());
            let marker = made("$ANSIBLE_VAULT;1.1;AES256\n00");
            disarm(&marker)
        });
        assert_eq!(kept, Some(Some("$ANSIBLE_VAULT;1.1;AES256\n00".to_string())));
        let dropped = with_markers(|| {
            let _armed = made("x");
        });
        assert_eq!(dropped, None);
        assert!(!on());
    }

    #[test]
    fn only_a_marker_is_disarmed() {
        assert_eq!(disarm(&JValue::from("text")), None);
        assert!(accepted_in("{{ x | unvault('pw') }}"));
        assert!(!accepted_in("{{ x | upper }}"));
    }
}
