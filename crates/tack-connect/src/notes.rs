//! What a connection has to say while it works, for the run to show at a verbosity:
//! ansible's ssh connection prints `ssh_retry: ...` at `-vv` each time it tries again. A
//! link collects its lines here (on whatever thread opened it, a link opened ahead
//! included), and the run takes them after each use and shows them with the host's task.
//!
//! Owns the buffer only; the words are the connection's, showing them the engine's.

use std::sync::{Arc, Mutex, PoisonError};

/// A shared buffer of `(verbosity, line)`.
#[derive(Debug, Clone, Default)]
pub struct Notes(Arc<Mutex<Vec<(u8, String)>>>);

impl Notes {
    pub fn push(&self, level: u8, line: String) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push((level, line));
    }

    /// The lines since the last take, oldest first.
    pub fn take(&self) -> Vec<(u8, String)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl PartialEq for Notes {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Notes {}
