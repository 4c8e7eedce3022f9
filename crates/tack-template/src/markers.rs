//! ansible's markers: a value that stands for a failure and fails only where it is used, and
//! which some plugins take instead. Two kinds here: `VaultExceptionMarker`, a `!vault` value
//! the run's secrets cannot decrypt (taken by `unvault`, `type_debug` and the
//! `vault_encrypted` test), and `CapturedExceptionMarker`, a failed filter, lookup or
//! function (taken by `ansible._protomatter.dump_object`). A leaf: the variable views and
//! the plugins' wrappers make markers, the plugins that take them disarm them, the engine
//! asks whether any was left armed; it names none of them.
//!
//! ansible makes a marker at every such failure and fails where anything else uses it. tack
//! fails at the failure itself, and only a render that failed so, and whose text names one
//! of those plugins, runs again with markers made ([`with_markers`]): it stands only if
//! every marker made went to one of them. Every other render pays nothing.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use minijinja::value::{Object, ObjectRepr, Value as JValue};

/// The plugins that take a vault marker, as a render's text names them.
const TAKING_VAULT: &[&str] = &["unvault", "type_debug", "vault_encrypted"];
/// The plugin that takes a captured failure.
const TAKING_CAPTURED: &str = "dump_object";

/// What a marker stands for.
#[derive(Debug)]
enum Stands {
    /// An undecryptable `!vault` value's ciphertext.
    Vault(String),
    /// A failure, kept as the invalid value minijinja makes of an error, with the class of
    /// ansible's exception for it when known.
    Captured(JValue, Option<&'static str>),
}

/// A marker made while a render runs again.
#[derive(Debug)]
pub(crate) struct Marker {
    stands: Stands,
    disarmed: AtomicBool,
}

/// Implements `Object` for a value a template can hold and hand on but never show: its
/// text fails (and, as minijinja's plain objects, it has no items).
macro_rules! opaque_object {
    ($t:ty) => {
        impl minijinja::value::Object for $t {
            fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
                minijinja::value::ObjectRepr::Plain
            }

            fn render(
                self: &std::sync::Arc<Self>,
                _: &mut std::fmt::Formatter<'_>,
            ) -> std::fmt::Result {
                Err(std::fmt::Error)
            }
        }
    };
}
pub(crate) use opaque_object;

opaque_object!(Marker);

thread_local! {
    /// How many renders on this thread make markers.
    static ON: Cell<u32> = const { Cell::new(0) };
    /// The markers made by the innermost of them.
    static MADE: RefCell<Vec<Vec<Arc<Marker>>>> = const { RefCell::new(Vec::new()) };
}

/// Whether a render of `source` that failed (`undecryptable`: reading a `!vault` value)
/// runs again with markers made.
pub(crate) fn retried(source: &str, undecryptable: bool) -> bool {
    source.contains(TAKING_CAPTURED)
        || undecryptable && TAKING_VAULT.iter().any(|name| source.contains(name))
}

/// Whether failures make markers now.
pub(crate) fn on() -> bool {
    ON.with(Cell::get) > 0
}

fn made(stands: Stands) -> JValue {
    let marker = Arc::new(Marker { stands, disarmed: AtomicBool::new(false) });
    MADE.with(|m| {
        if let Some(level) = m.borrow_mut().last_mut() {
            level.push(marker.clone());
        }
    });
    JValue::from_dyn_object(marker)
}

/// A vault marker for `ciphertext`, noted as armed.
pub(crate) fn vault(ciphertext: &str) -> JValue {
    made(Stands::Vault(ciphertext.to_string()))
}

/// A marker for a failure (of ansible's exception `class`, when known), noted as armed.
pub(crate) fn captured(error: minijinja::Error, class: Option<&'static str>) -> JValue {
    made(Stands::Captured(JValue::from(error), class))
}

/// `result`, its failure kept as a marker (of ansible's exception `class`) while markers are
/// made: what a filter, a lookup or a function returns in a render run again.
pub(crate) fn keep(
    result: Result<JValue, minijinja::Error>,
    class: Option<&'static str>,
) -> Result<JValue, minijinja::Error> {
    match result {
        Err(e) if on() => Ok(captured(e, class)),
        ran => ran,
    }
}

/// The error minijinja's invalid value (a failure kept as a value) carries: minijinja keeps
/// it private, iterating over the value reveals it.
pub(crate) fn invalid_error(value: &JValue) -> minijinja::Error {
    let one = JValue::from(vec![value.clone()]);
    match one.try_iter().map(|it| it.checked().find_map(Result::err)) {
        Ok(Some(e)) => e,
        Ok(None) => minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "invalid value"),
        Err(e) => e,
    }
}

/// The class of ansible's exception for a plugin's failure.
pub(crate) const PLUGIN_FAILED: &str = "AnsibleTemplatePluginRuntimeError";

/// The class of ansible's exception for a failure worded `message` (a template's syntax
/// error), when it is known from the words.
pub(crate) fn class_of(message: &str) -> Option<&'static str> {
    message.starts_with("Syntax error in template").then_some("AnsibleTemplateSyntaxError")
}

/// Whether `value` is a marker.
pub(crate) fn is_marker(value: &JValue) -> bool {
    value.downcast_object_ref::<Marker>().is_some()
}

/// The ciphertext of `value` when it is a vault marker, which a plugin that takes such
/// markers has now received.
pub(crate) fn disarm(value: &JValue) -> Option<String> {
    let marker = value.downcast_object_ref::<Marker>()?;
    let Stands::Vault(ciphertext) = &marker.stands else { return None };
    marker.disarmed.store(true, Ordering::Relaxed);
    Some(ciphertext.clone())
}

/// The failure `value` stands for when it is a captured marker (now received by a plugin that
/// takes it), as the invalid value minijinja makes of an error, with its class when known.
pub(crate) fn disarm_captured(value: &JValue) -> Option<(JValue, Option<&'static str>)> {
    let marker = value.downcast_object_ref::<Marker>()?;
    let Stands::Captured(failure, class) = &marker.stands else { return None };
    marker.disarmed.store(true, Ordering::Relaxed);
    Some((failure.clone(), *class))
}

/// Notes every marker inside the containers of `value` as received (`type_debug` of a list
/// holding one names the list, and uses nothing inside it, as ansible's does).
pub(crate) fn disarm_within(value: &JValue) {
    fn walk(value: &JValue, depth: usize) {
        if let Some(marker) = value.downcast_object_ref::<Marker>() {
            marker.disarmed.store(true, Ordering::Relaxed);
            return;
        }
        if depth == 0 {
            return;
        }
        let Ok(items) = value.try_iter() else { return };
        match value.kind() {
            minijinja::value::ValueKind::Seq => items.for_each(|item| walk(&item, depth - 1)),
            minijinja::value::ValueKind::Map => items.for_each(|key| {
                if let Ok(item) = value.get_item(&key) {
                    walk(&item, depth - 1);
                }
            }),
            _ => {}
        }
    }
    if on() {
        walk(value, 32);
    }
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

/// The exception a captured failure's dump holds (`dump_object(marker).exception`): its
/// `message` and its class (what `type_debug` names) and nothing more; storing or showing it
/// is refused, as ansible refuses to store an exception.
#[derive(Debug)]
pub(crate) struct CapturedException {
    pub message: String,
    /// ansible's exception class, when known.
    pub class: Option<&'static str>,
}

impl Object for CapturedException {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        (key.as_str()? == "message").then(|| JValue::from(self.message.as_str()))
    }

    fn render(self: &Arc<Self>, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Err(fmt::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_stands_only_when_every_marker_was_disarmed() {
        assert!(!on());
        let kept = with_markers(|| {
            assert!(on());
            let marker = vault("$ANSIBLE_VAULT;1.1;AES256\n00");
            disarm(&marker)
        });
        assert_eq!(kept, Some(Some("$ANSIBLE_VAULT;1.1;AES256\n00".to_string())));
        let dropped = with_markers(|| {
            let _armed = vault("x");
        });
        assert_eq!(dropped, None);
        let captured_kept = with_markers(|| {
            let failure = minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "boom");
            disarm_captured(&captured(failure, Some(PLUGIN_FAILED))).is_some()
        });
        assert_eq!(captured_kept, Some(true));
        assert!(!on());
    }

    #[test]
    fn each_kind_is_disarmed_only_by_its_own_plugins() {
        assert_eq!(disarm(&JValue::from("text")), None);
        let failure = minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, "boom");
        assert_eq!(disarm(&captured(failure, None)), None);
        assert!(disarm_captured(&vault("x")).is_none());
        assert!(retried("{{ x | unvault('pw') }}", true));
        assert!(!retried("{{ x | unvault('pw') }}", false));
        assert!(retried("{{ x | ansible._protomatter.dump_object }}", false));
        assert!(!retried("{{ x | upper }}", true));
    }
}
