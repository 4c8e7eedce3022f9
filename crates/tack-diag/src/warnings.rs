//! The process's warning channel: `[WARNING]:` blocks go to stderr as they are raised, each
//! distinct text once, as ansible's `Display.warning` does.
//!
//! Warnings are global on purpose: they are raised deep inside loaders that have no output of
//! their own, and ansible prints them the moment they happen. A caller that needs them
//! elsewhere (tests, the run server) installs its own sink with [`set_sink`].

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::Diagnostic;

type Sink = Box<dyn FnMut(&str) + Send>;

struct Channel {
    seen: BTreeSet<String>,
    sink: Option<Sink>,
}

static CHANNEL: Mutex<Channel> = Mutex::new(Channel { seen: BTreeSet::new(), sink: None });

fn channel() -> MutexGuard<'static, Channel> {
    // A panic while printing a warning leaves nothing half-updated worth refusing over.
    CHANNEL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Emits `warning` unless the same text was already emitted by this process.
pub fn warn(warning: &Diagnostic) {
    emit(warning.render_warning());
}

fn emit(text: String) {
    let mut channel = channel();
    if !channel.seen.insert(text.clone()) {
        return;
    }
    match channel.sink.as_mut() {
        Some(sink) => sink(&text),
        None => {
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(text.as_bytes());
            let _ = stderr.flush();
        }
    }
}

static DEPRECATIONS_ENABLED: AtomicBool = AtomicBool::new(true);

/// The `deprecation_warnings` setting.
pub fn set_deprecations_enabled(enabled: bool) {
    DEPRECATIONS_ENABLED.store(enabled, Ordering::Relaxed);
}

/// Emits a `[DEPRECATION WARNING]:` block for a feature ansible-core removes in
/// `removed_in` (preceded, the first time, by ansible's hint on how to silence them), each
/// distinct text once.
pub fn deprecate(deprecation: &Diagnostic, removed_in: &str) {
    if !DEPRECATIONS_ENABLED.load(Ordering::Relaxed) {
        return;
    }
    warn(&Diagnostic::new(
        "Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.",
    ));
    let mut diag = deprecation.clone();
    diag.message = format!(
        "{} This feature will be removed from ansible-core version {removed_in}.",
        diag.message
    );
    emit(format!("[DEPRECATION WARNING]: {}", crate::render::block_body(&diag)));
}

/// Sends warnings to `sink` instead of stderr (`None` restores stderr).
pub fn set_sink(sink: Option<Sink>) {
    channel().sink = sink;
}
