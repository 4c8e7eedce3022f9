//! What one task's run on one host gives the strategy: the events the callback hears before
//! the host's final result (loop items, retries, async notes, `-vvv` connection lines, in the
//! order they happened), the final result, and what a rescue needs of a failure.

use tack_yaml::Node;

use tack_report::callback::{Callback, TaskView};
use tack_report::result::HostResult;

/// What the callback hears about a host before its final result, in the order it happened.
pub(crate) enum TaskEvent {
    /// One loop item's result.
    Item(HostResult),
    /// A bad run that `until`/`retries` runs again (`v2_runner_retry`).
    Retry(HostResult),
    /// An `ASYNC POLL`/`ASYNC OK`/`ASYNC FAILED` line of a job the task waits for.
    Async(String),
    /// A line about reaching the host, shown from the `-v` count it carries (`-vvv` for most;
    /// see `tack_links::trace`).
    Transport(u8, String),
}

/// A host's outcome for one task: the retries and per-item results, and the final one.
pub(crate) struct TaskOutcome {
    pub items: Vec<TaskEvent>,
    pub result: HostResult,
    /// The task's effective diff mode (`diff:` on it or its parents, else `--diff`), which
    /// decides whether each loop item's diff is shown.
    pub diff: bool,
    /// `ansible_failed_task` for a rescue, when the task failed (see `failed_task`).
    pub failed_task: Option<Node>,
}

impl TaskOutcome {
    /// An outcome with no events of its own (an include's failure, a gathered result).
    pub(crate) fn of(result: HostResult) -> TaskOutcome {
        TaskOutcome { items: Vec::new(), result, diff: false, failed_task: None }
    }

    /// Whether the callback hears item or retry lines before the result (a deferred banner
    /// comes with the first of them).
    pub(crate) fn has_lines(&self) -> bool {
        self.items.iter().any(|e| matches!(e, TaskEvent::Item(_) | TaskEvent::Retry(_)))
    }

    /// Whether a loop's items were shown (each with its own diff).
    pub(crate) fn has_items(&self) -> bool {
        self.items.iter().any(|e| matches!(e, TaskEvent::Item(_)))
    }

    /// The loop items' results, in order (retries are not results).
    pub(crate) fn item_results(&self) -> impl Iterator<Item = &HostResult> {
        self.items.iter().filter_map(|e| match e {
            TaskEvent::Item(item) => Some(item),
            TaskEvent::Retry(_) | TaskEvent::Async(_) | TaskEvent::Transport(..) => None,
        })
    }

    /// Tells `callback` what happened before the final result, in order: each item (after its
    /// diff, when the task's diff mode is on), retry, async note and `-vvv` connection line.
    pub(crate) fn show_events(&self, view: &TaskView, callback: &mut dyn Callback) {
        for event in &self.items {
            match event {
                TaskEvent::Item(item) => {
                    if self.diff && tack_report::callback::diff::sent_for(item) {
                        callback.file_diff(view, item);
                    }
                    callback.item_result(view, item);
                }
                TaskEvent::Retry(retry) => callback.retry(view, retry),
                TaskEvent::Async(note) => callback.async_note(note),
                // The command a `no_log` task hands the shell may carry its secrets.
                TaskEvent::Transport(_, line) if self.result.no_log && line.contains("> EXEC ") => {
                    let address = line.split_once(' ').map_or(line.as_str(), |(a, _)| a);
                    callback.verbose_line(3, &format!("{address} EXEC (command hidden: no_log)"));
                }
                TaskEvent::Transport(level, line) => callback.verbose_line(*level, line),
            }
        }
    }
}
