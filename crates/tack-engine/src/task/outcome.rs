//! What one task's run on one host gives the strategy: the events the callback hears before
//! the host's final result (loop items, retries, async notes, `-vvv` connection lines, in the
//! order they happened), the final result, and what a rescue needs of a failure.

use tack_yaml::Node;

use tack_report::callback::{Callback, TaskView};
use tack_report::result::HostResult;

/// What the callback hears about a host before its final result, in the order it happened.
#[derive(Clone)]
pub(crate) enum TaskEvent {
    /// One loop item's result.
    Item(HostResult),
    /// A bad run that `until`/`retries` runs again (`v2_runner_retry`).
    Retry(HostResult),
    /// An `ASYNC POLL`/`ASYNC OK`/`ASYNC FAILED` note of a job the task waits for.
    Async(tack_links::JobNote),
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
    /// How many of `items`, from the first, the callback was shown while the task ran (see
    /// [`Live`]); the rest are shown with the result.
    pub shown_live: usize,
}

/// Where a running loop hands each item's (and each retry's) line as it happens, with the
/// task's diff mode, so a long loop shows its progress as ansible's does. Only these lines
/// go out early (with the connection lines the run's verbosity never shows): they are final
/// when made, where a shown `-vvv` or async line may yet be hidden by what the task decides
/// at its end, so a host's lines stop going out live at the first of those.
pub(crate) type Live<'a> = dyn Fn(TaskEvent, bool) + 'a;

/// Shows one line handed out live: an item (after its diff, in diff mode) or a retry.
pub(crate) fn show_live(
    view: &TaskView,
    event: &TaskEvent,
    diff: bool,
    callback: &mut dyn Callback,
) {
    match event {
        TaskEvent::Item(item) => {
            if diff && tack_report::callback::diff::sent_for(item) {
                callback.file_diff(view, item);
            }
            callback.item_result(view, item);
        }
        TaskEvent::Retry(retry) => callback.retry(view, retry),
        // Never handed out live (see `Live`).
        TaskEvent::Async(_) | TaskEvent::Transport(..) => {}
    }
}

/// The events of a running task, each also handed to the live sink while every one so far
/// could be.
pub(crate) struct Shown<'a> {
    pub events: Vec<TaskEvent>,
    live: Option<&'a Live<'a>>,
    diff: bool,
    /// The run's `-v` count (the log's, when it keeps more): a connection line above it is
    /// never shown nor logged, so it does not hold the lines after it back.
    verbosity: i64,
    pub streamed: usize,
    /// The connection the task reaches the host with, given to each item and retry result
    /// (see `HostResult::connection`).
    pub connection: Option<String>,
}

impl<'a> Shown<'a> {
    pub(crate) fn new(live: Option<&'a Live<'a>>, diff: bool, verbosity: i64) -> Shown<'a> {
        Shown { events: Vec::new(), live, diff, verbosity, streamed: 0, connection: None }
    }

    fn goes_live(&self, event: &TaskEvent) -> bool {
        match event {
            TaskEvent::Item(_) | TaskEvent::Retry(_) => true,
            TaskEvent::Transport(level, _) => i64::from(*level) > self.verbosity,
            TaskEvent::Async(_) => false,
        }
    }

    pub(crate) fn push(&mut self, mut event: TaskEvent) {
        if let TaskEvent::Item(r) | TaskEvent::Retry(r) = &mut event
            && r.connection.is_none()
        {
            r.connection = self.connection.clone();
        }
        if let Some(live) = self.live
            && self.streamed == self.events.len()
            && self.goes_live(&event)
        {
            live(event.clone(), self.diff);
            self.streamed += 1;
        }
        self.events.push(event);
    }

    pub(crate) fn extend(&mut self, events: impl IntoIterator<Item = TaskEvent>) {
        for event in events {
            self.push(event);
        }
    }
}

impl TaskOutcome {
    /// An outcome with no events of its own (an include's failure, a gathered result).
    pub(crate) fn of(result: HostResult) -> TaskOutcome {
        TaskOutcome { items: Vec::new(), result, diff: false, failed_task: None, shown_live: 0 }
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
        for event in self.items.iter().skip(self.shown_live) {
            match event {
                TaskEvent::Item(_) | TaskEvent::Retry(_) => {
                    show_live(view, event, self.diff, callback);
                }
                TaskEvent::Async(note) => {
                    callback.async_note(&note.text);
                    let result = tack_actions::json::map_from_json(&note.result);
                    let mut shown = HostResult::new(&self.result.host, result);
                    shown.connection = self.result.connection.clone();
                    callback.async_event(view, note.event, &shown);
                }
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
