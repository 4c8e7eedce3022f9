//! The process's warning channel: `[WARNING]:` blocks go to stderr as they are raised, each
//! distinct text once, as ansible's `Display.warning` does.
//!
//! Warnings are global on purpose: they are raised deep inside loaders that have no output of
//! their own, and ansible prints them the moment they happen. A caller that needs them
//! elsewhere (tests, the run server) installs its own sink with [`set_sink`].

use std::collections::BTreeSet;
use std::io::Write;
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

/// What ansible says before the first deprecation warning it shows.
pub const DEPRECATION_PREAMBLE: &str =
    "Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.";

/// Emits `warning` unless the same text was already emitted by this process.
pub fn warn(warning: &Diagnostic) {
    emit(warning.render_warning());
}

/// Emits a deprecation warning as ansible's `Display.deprecated` does: preceded by the warning
/// that deprecation warnings can be disabled (itself shown once), each distinct text once.
/// Whether deprecation warnings are enabled at all is the caller's decision (a setting).
pub fn deprecate(deprecation: &Diagnostic) {
    warn(&Diagnostic::new(DEPRECATION_PREAMBLE));
    emit(deprecation.render_deprecation());
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

/// Sends warnings to `sink` instead of stderr (`None` restores stderr).
pub fn set_sink(sink: Option<Sink>) {
    channel().sink = sink;
}
