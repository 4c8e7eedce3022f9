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
    deprecations_enabled: bool,
    deprecation_hint_shown: bool,
}

static CHANNEL: Mutex<Channel> = Mutex::new(Channel {
    seen: BTreeSet::new(),
    sink: None,
    deprecations_enabled: true,
    deprecation_hint_shown: false,
});

fn channel() -> MutexGuard<'static, Channel> {
    // A panic while printing a warning leaves nothing half-updated worth refusing over.
    CHANNEL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Emits `warning` unless the same text was already emitted by this process.
pub fn warn(warning: &Diagnostic) {
    let text = warning.render_warning();
    emit(&mut channel(), text);
}

/// Emits a `[DEPRECATION WARNING]:` for a feature ansible-core removes in `version`, preceded
/// the first time by ansible's hint on how to silence them; nothing when deprecation warnings
/// are turned off (`deprecation_warnings = False`).
pub fn deprecated(message: &str, version: &str, help: Option<&str>, origin: Option<crate::Origin>) {
    let mut channel = channel();
    if !channel.deprecations_enabled {
        return;
    }
    let mut diag = Diagnostic::at(
        format!("{message} This feature will be removed from ansible-core version {version}."),
        origin,
    );
    diag.help = help.map(str::to_string);
    let text = format!("[DEPRECATION WARNING]: {}", crate::render::block_body(&diag));
    if channel.seen.contains(&text) {
        return;
    }
    if !channel.deprecation_hint_shown {
        channel.deprecation_hint_shown = true;
        let hint = Diagnostic::new(
            "Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.",
        );
        emit(&mut channel, hint.render_warning());
    }
    emit(&mut channel, text);
}

/// Turns deprecation warnings on or off (ansible's `deprecation_warnings` setting).
pub fn set_deprecations_enabled(enabled: bool) {
    channel().deprecations_enabled = enabled;
}

fn emit(channel: &mut Channel, text: String) {
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
