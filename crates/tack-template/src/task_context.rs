//! The task a render on this thread belongs to, as ansible's `TaskContext` tells its lookups:
//! only the action's name as written (`first_found` searches `templates/` for a template
//! task, `vars/` for an include_vars one, whatever calls it). Set by the engine around a
//! task's run on a host; renders outside any task see none.

use std::cell::RefCell;

thread_local! {
    static ACTION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with `action` as the running task's action on this thread.
pub fn with_task_action<R>(action: &str, f: impl FnOnce() -> R) -> R {
    let previous = ACTION.with(|a| a.replace(Some(action.to_string())));
    let out = f();
    ACTION.with(|a| *a.borrow_mut() = previous);
    out
}

/// The running task's action, as written, if a task is running on this thread.
pub(crate) fn task_action() -> Option<String> {
    ACTION.with(|a| a.borrow().clone())
}
