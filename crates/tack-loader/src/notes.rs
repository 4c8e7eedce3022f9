//! The verbose notes ansible prints from deep inside a task's run (`display.vvvv` and
//! `display.vvvvv` of its data loader and lookups: `looking for "x" at "y"`, `File lookup
//! using ... as file`): whoever runs a task, a play's variables or a listing on this thread
//! installs an observer ([`observe`]) that places them among its other lines; without one
//! they go nowhere. This module only carries them; it never prints.

use std::cell::RefCell;

/// What hears a thread's notes: each with the `-v` count it shows from.
type Observer = Box<dyn Fn(u8, String)>;

thread_local! {
    /// The observer of the notes made on this thread, if any.
    static OBSERVER: RefCell<Option<Observer>> = const { RefCell::new(None) };
}

/// Runs `f` with `observer` hearing every note made on this thread (with the `-v` count it
/// shows from), in order; the previous observer is back after.
pub fn observe<R>(observer: impl Fn(u8, String) + 'static, f: impl FnOnce() -> R) -> R {
    /// Puts the previous observer back, even when `f` unwinds.
    struct Restore(Option<Observer>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            OBSERVER.with(|o| *o.borrow_mut() = previous);
        }
    }
    let _restore = Restore(OBSERVER.with(|o| o.borrow_mut().replace(Box::new(observer))));
    f()
}

/// Whether anything hears notes on this thread now (so a note's text need not be made).
pub fn observed() -> bool {
    OBSERVER.with(|o| o.borrow().is_some())
}

/// A note that shows from `-v` count `level`, for the observer (if any).
pub fn note(level: u8, text: String) {
    OBSERVER.with(|o| {
        if let Some(observer) = o.borrow().as_ref() {
            observer(level, text);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn notes_reach_the_innermost_observer_only_while_it_runs() {
        let outer = Rc::new(RefCell::new(Vec::new()));
        let inner = Rc::new(RefCell::new(Vec::new()));
        let (o, i) = (Rc::clone(&outer), Rc::clone(&inner));
        observe(
            move |level, text| o.borrow_mut().push((level, text)),
            || {
                note(5, "a".into());
                observe(
                    move |level, text| i.borrow_mut().push((level, text)),
                    || note(4, "b".into()),
                );
                note(5, "c".into());
            },
        );
        note(5, "unheard".into());
        assert_eq!(*outer.borrow(), [(5, "a".to_string()), (5, "c".to_string())]);
        assert_eq!(*inner.borrow(), [(4, "b".to_string())]);
        assert!(!observed());
    }
}
