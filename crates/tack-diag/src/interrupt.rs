//! What must be put back when a run is interrupted (SIGINT, SIGTERM) before the process ends:
//! a terminal's echo or raw mode, a run record's status. Whoever sets such state up registers
//! how to undo it for as long as it holds; the binary's signal handler runs what is
//! registered, newest first, before it exits.
//!
//! Owns the registry only; it must not catch signals or end the process itself.

use std::sync::Mutex;

type Undo = Box<dyn Fn() + Send>;

static UNDO: Mutex<Vec<(u64, Undo)>> = Mutex::new(Vec::new());
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static SIGNAL: Mutex<String> = Mutex::new(String::new());

static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on the process is ending on a signal: every thread but the one ending it that
/// prints through [`hold_if_ending`] (or a [`Held`] writer) stops there, so nothing the
/// interrupted run would still say (a stopped module's failure, a recap) reaches the output.
pub fn begin_ending() {
    ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Parks the calling thread for good when the process is ending on a signal.
pub fn hold_if_ending() {
    while ENDING.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::park();
    }
}

/// A writer that holds its thread before each write once the process is ending.
pub struct Held<W>(pub W);

impl<W: std::io::Write> std::io::Write for Held<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        hold_if_ending();
        self.0.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        hold_if_ending();
        self.0.flush()
    }
}

/// `undo` runs if the process is interrupted before the returned guard is dropped.
pub fn undo_on_interrupt(undo: impl Fn() + Send + 'static) -> Registered {
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    UNDO.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((id, Box::new(undo)));
    Registered(id)
}

/// Keeps an undo registered; dropping it (the state was put back normally) removes it.
#[must_use = "the undo is removed when this is dropped"]
pub struct Registered(u64);

impl Drop for Registered {
    fn drop(&mut self) {
        UNDO.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|(id, _)| *id != self.0);
    }
}

/// The signal the process is being interrupted by (`SIGINT`), for an undo that records it;
/// empty before [`undo_all`].
pub fn signal_name() -> String {
    SIGNAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}

/// Runs every registered undo, newest first, and forgets them: for the signal handler, which
/// names the signal (`SIGINT`).
pub fn undo_all(signal: &str) {
    *SIGNAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = signal.to_string();
    let undo = std::mem::take(&mut *UNDO.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    for (_, f) in undo.into_iter().rev() {
        f();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn only_what_is_still_registered_is_undone_newest_first() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let (a, b, c) = (order.clone(), order.clone(), order.clone());
        let _first = undo_on_interrupt(move || a.lock().unwrap().push("first"));
        let second = undo_on_interrupt(move || b.lock().unwrap().push("second"));
        let _third = undo_on_interrupt(move || c.lock().unwrap().push("third"));
        drop(second);
        undo_all("SIGINT");
        assert_eq!(signal_name(), "SIGINT");
        assert_eq!(*order.lock().unwrap(), ["third", "first"]);
        undo_all("SIGINT");
        assert_eq!(order.lock().unwrap().len(), 2, "undone once");
    }
}
