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

static DEPRECATIONS_ENABLED: AtomicBool = AtomicBool::new(true);

/// What ansible says before the first deprecation warning it shows.
pub const DEPRECATION_PREAMBLE: &str =
    "Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.";

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
    emit(warning.render_warning(), crate::color::Level::Warn);
}

/// Emits an `[ERROR]:` block for an error the run goes on after (ansible's `Display.error`),
/// each distinct text once.
pub fn error(error: &Diagnostic) {
    emit(error.render(), crate::color::Level::Error);
}

/// Emits a `[DEPRECATION WARNING]:` block as ansible's `Display.deprecated` does: the hint on
/// how to silence them (a warning, so shown once), then the message with "This feature will be
/// removed from ansible-core version X." appended, each distinct text once. Raised while a
/// task runs on a host (under [`recording_deprecations`]), it is kept for that task's result
/// instead, which shows it where ansible's callback shows a result's deprecations.
pub fn deprecate(deprecation: &Diagnostic, removed_in: &str) {
    let mut what = crate::Deprecated::core(deprecation.message.clone(), removed_in);
    what.help = deprecation.help.clone();
    raise(what, deprecation.clone());
}

/// Emits (or keeps for the task's result, as [`deprecate`]) a deprecation of any deprecator:
/// a value tagged `Deprecated` that a template read, shown where that template was written.
pub fn deprecate_with(what: &crate::Deprecated, origin: Option<crate::Origin>) {
    let mut shown = Diagnostic::at(what.msg.clone(), origin);
    shown.help = what.help.clone();
    raise(what.clone(), shown);
}

fn raise(what: crate::Deprecated, mut shown: Diagnostic) {
    shown.message = what.text();
    if let Some(unrecorded) = record_deprecation(RecordedDeprecation { what, shown }) {
        show_recorded(&unrecorded);
    }
}

/// Shows a deprecation [`deprecate`] kept for a task's result (once, and only when
/// `deprecation_warnings` is on).
pub fn show_recorded(deprecation: &RecordedDeprecation) {
    if !DEPRECATIONS_ENABLED.load(Ordering::Relaxed) {
        return;
    }
    warn(&Diagnostic::new(DEPRECATION_PREAMBLE));
    emit(deprecation.shown.render_deprecation(), crate::color::Level::Deprecate);
}

/// Emits a deprecation whose message already says when the feature goes (settings'
/// deprecations word it themselves), with the same preamble and once-only rule as
/// [`deprecate`].
pub fn deprecate_formatted(deprecation: &Diagnostic) {
    if !DEPRECATIONS_ENABLED.load(Ordering::Relaxed) {
        return;
    }
    warn(&Diagnostic::new(DEPRECATION_PREAMBLE));
    emit(deprecation.render_deprecation(), crate::color::Level::Deprecate);
}

/// A deprecation raised while a task ran on a host: ansible's worker keeps each in the task's
/// result (`deprecations`), shown or not (`deprecation_warnings` off, or said before).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedDeprecation {
    /// What is deprecated, by whom, and until when.
    pub what: crate::Deprecated,
    /// What is shown of it: the message with the sentence on when the feature goes, and
    /// where it came from.
    pub shown: Diagnostic,
}

thread_local! {
    /// The open recordings of this thread, innermost last (a loop's item inside its task).
    static RECORDING: std::cell::RefCell<Vec<Vec<RecordedDeprecation>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps `deprecation` in this thread's innermost open recording; without one, hands it back
/// to be shown now.
fn record_deprecation(deprecation: RecordedDeprecation) -> Option<RecordedDeprecation> {
    RECORDING.with(|recording| match recording.borrow_mut().last_mut() {
        Some(open) => {
            open.push(deprecation);
            None
        }
        None => Some(deprecation),
    })
}

/// Runs `f`, returning what it returned and the deprecations [`deprecate`] raised on this
/// thread meanwhile (not shown: the caller's result shows them, [`show_recorded`]).
/// Recordings nest: an inner one keeps its own.
pub fn recording_deprecations<T>(f: impl FnOnce() -> T) -> (T, Vec<RecordedDeprecation>) {
    /// Closes the recording even when `f` unwinds.
    struct Open;
    impl Drop for Open {
        fn drop(&mut self) {
            RECORDING.with(|recording| recording.borrow_mut().pop());
        }
    }
    RECORDING.with(|recording| recording.borrow_mut().push(Vec::new()));
    let open = Open;
    let out = f();
    let recorded =
        RECORDING.with(|recording| recording.borrow_mut().last_mut().map(std::mem::take));
    drop(open);
    (out, recorded.unwrap_or_default())
}

/// ansible's `deprecation_warnings` setting.
pub fn set_deprecations_enabled(enabled: bool) {
    DEPRECATIONS_ENABLED.store(enabled, Ordering::Relaxed);
}

fn emit(text: String, level: crate::color::Level) {
    let mut channel = channel();
    // Seen-ness is the plain text's, as ansible deduplicates before colouring.
    if !channel.seen.insert(text.clone()) {
        return;
    }
    // `Display.display` turns Windows line ends into `\n` after deduplicating.
    let plain = text.replace("\r\n", "\n");
    let logged = match level {
        crate::color::Level::Warn => crate::display_log::Level::Warning,
        crate::color::Level::Error => crate::display_log::Level::Error,
        // `Display.deprecated` displays without a level of its own.
        crate::color::Level::Deprecate => crate::display_log::Level::Info,
    };
    crate::display_log::record(logged, &plain);
    let text = crate::color::paint(&plain, level);
    match channel.sink.as_mut() {
        Some(sink) => sink(&text),
        None => {
            crate::interrupt::hold_if_ending();
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(text.as_bytes());
            let _ = stderr.flush();
        }
    }
}

/// Forgets which texts were shown, so each shows once more: for a process that runs several
/// independent jobs, each of which is a whole ansible run (the run server, tests).
pub fn forget_shown() {
    channel().seen.clear();
}

/// Sends warnings to `sink` instead of stderr (`None` restores stderr).
pub fn set_sink(sink: Option<Sink>) {
    channel().sink = sink;
}
