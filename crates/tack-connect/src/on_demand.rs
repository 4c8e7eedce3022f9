//! A link opened on first use: the run hands out connections for every host it may reach
//! before any of them is contacted, and the first `connect` (or request) on the thread that
//! runs the host's task opens it. A host that could not be reached stays unreachable for
//! the link's life (ansible keeps an unreachable host out of the rest of the run).
//!
//! Owns when the link is opened and what became of it; what the link does once open is the
//! link's, reached through [`Decorator`]'s forwarding.

use std::sync::{Mutex, OnceLock, PoisonError, TryLockError};

use crate::{Connection, ConnectionError, Decorator, Held};

type Open = dyn Fn() -> Result<Box<dyn Connection>, ConnectionError> + Send + Sync;

pub struct OnDemand {
    open: Box<Open>,
    /// Held while the link is being opened: one opening at a time, and the link counts as
    /// tried meanwhile.
    opening: Mutex<()>,
    /// The link once tried: open, or the unreachable host's message for every later use.
    /// A failed open that is not unreachable leaves it unset, to be tried again.
    tried: OnceLock<Tried>,
    /// What the links it opens have to show (their opening's retries among them).
    notes: crate::Notes,
}

enum Tried {
    Open(Box<dyn Connection>),
    Unreachable(String),
}

impl Tried {
    fn link(&self) -> Result<&dyn Connection, ConnectionError> {
        match self {
            Tried::Open(link) => Ok(link.as_ref()),
            Tried::Unreachable(message) => {
                Err(ConnectionError::Unreachable { message: message.clone() })
            }
        }
    }
}

impl OnDemand {
    pub fn new(
        open: impl Fn() -> Result<Box<dyn Connection>, ConnectionError> + Send + Sync + 'static,
    ) -> Self {
        OnDemand {
            open: Box::new(open),
            opening: Mutex::new(()),
            tried: OnceLock::new(),
            notes: Default::default(),
        }
    }

    /// Shows `notes`, which the links `open` makes write to.
    pub fn with_notes(mut self, notes: crate::Notes) -> Self {
        self.notes = notes;
        self
    }
}

impl Decorator for OnDemand {
    fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
        if let Some(tried) = self.tried.get() {
            return tried.link();
        }
        // A panic while opening left nothing behind: the next use opens again.
        let _opening = self.opening.lock().unwrap_or_else(PoisonError::into_inner);
        // Another thread may have opened it while this one waited.
        if let Some(tried) = self.tried.get() {
            return tried.link();
        }
        let tried = match (self.open)() {
            Ok(link) => Tried::Open(link),
            Err(ConnectionError::Unreachable { message }) => Tried::Unreachable(message),
            Err(e) => return Err(e),
        };
        self.tried.get_or_init(|| tried).link()
    }

    fn held(&self) -> Held<'_> {
        // Being opened (the lock taken) counts as tried: `connect` waits for it.
        let opening = matches!(self.opening.try_lock(), Err(TryLockError::WouldBlock));
        match self.tried.get() {
            Some(Tried::Open(link)) => Held::Link(link.as_ref()),
            Some(Tried::Unreachable(_)) => Held::Unopened { tried: true },
            None => Held::Unopened { tried: opening },
        }
    }

    fn notes(&self) -> Vec<(u8, String)> {
        self.notes.take()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::InProcess;

    /// An on-demand link whose opens answer from `answers` in turn (then open), counted.
    fn counted(answers: Vec<ConnectionError>) -> (OnDemand, Arc<AtomicUsize>, crate::Notes) {
        let opens = Arc::new(AtomicUsize::new(0));
        let answers = Mutex::new(answers);
        let notes = crate::Notes::default();
        let (counter, noting) = (Arc::clone(&opens), notes.clone());
        let link = OnDemand::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            noting.push(2, "opening".into());
            match answers.lock().unwrap().pop() {
                Some(e) => Err(e),
                None => Ok(Box::new(InProcess) as Box<dyn Connection>),
            }
        })
        .with_notes(notes.clone());
        (link, opens, notes)
    }

    #[test]
    fn opens_on_first_use_once() {
        let (link, opens, _) = counted(Vec::new());
        assert!(!link.is_open());
        assert_eq!(opens.load(Ordering::SeqCst), 0);
        link.connect().unwrap();
        assert!(link.is_open());
        link.exec_command("true", Path::new("/")).unwrap();
        assert_eq!(opens.load(Ordering::SeqCst), 1);
        assert_eq!(link.take_notes(), [(2, "opening".to_string())]);
        assert!(link.take_notes().is_empty());
    }

    #[test]
    fn an_unreachable_host_stays_so_and_another_failure_is_tried_again() {
        let unreachable = ConnectionError::Unreachable { message: "gone".into() };
        let other = ConnectionError::Exec("no agent".into());
        let (link, opens, _) = counted(vec![unreachable, other]);
        assert!(matches!(link.connect(), Err(ConnectionError::Exec(_))));
        assert!(!link.is_open(), "a failure that is not unreachable is tried again");
        assert!(link.take_notes().len() == 1, "the failed open's notes are shown");
        for _ in 0..2 {
            let e = link.run_module("ping", &Default::default()).unwrap_err();
            assert!(matches!(e, ConnectionError::Unreachable { message } if message == "gone"));
        }
        assert!(link.is_open(), "tried");
        assert_eq!(link.stage_limit(), None);
        assert_eq!(opens.load(Ordering::SeqCst), 2);
    }
}
