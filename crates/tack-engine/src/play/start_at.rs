//! `--start-at-task`: where each host of the first play with a matching task starts, found
//! as ansible's play iterator finds it (walking the play's tasks as a host that succeeds at
//! every one would, until a task's name or `role : name` equals or `fnmatch`es the
//! pattern). Once one batch matched, every later batch and play runs whole.
//!
//! Moves only the positions of the play's [`Walk`]; prints nothing (the binary reports a
//! pattern that never matched).

use std::cell::Cell;

use tack_playbook::Play;
use tack_playbook::walk::TaskInContext;

use crate::play::walk::Walk;

/// The `--start-at-task` pattern and whether a play has matched it yet.
pub struct StartAt {
    pub pattern: String,
    /// Set once, by the batch that found the task (the run goes on with `&RunContext`).
    done: Cell<bool>,
}

impl StartAt {
    pub fn new(pattern: impl Into<String>) -> StartAt {
        StartAt { pattern: pattern.into(), done: Cell::new(false) }
    }

    /// Whether a play has found the task: from there on every batch and play runs whole.
    pub fn found(&self) -> bool {
        self.done.get()
    }

    /// ansible's test: the task's own name, or its `get_name()` (`role : name`, the action
    /// when unnamed), equal to the pattern or matching it as a shell pattern.
    fn matches(&self, play: &Play, ctx: &TaskInContext<'_>) -> bool {
        let own = ctx.task.name().map(|n| tack_yaml::pyrepr::str(&n.value));
        let base = own.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| ctx.task.action.clone());
        let full = match ctx.task.role {
            Some(role) => format!("{} : {base}", play.role(role).name),
            None => base,
        };
        let fits = |name: &str| {
            name == self.pattern || tack_agent::modules::glob::fnmatch(name, &self.pattern)
        };
        own.as_deref().is_some_and(|n| !n.is_empty() && fits(n)) || fits(&full)
    }

    /// Moves every host of `walk` to the first matching task; when none matches, every
    /// host is done with the batch (it runs nothing, not even fact gathering). Returns
    /// whether a task matched.
    pub(crate) fn seek(&self, play: &Play, walk: &mut Walk<'_>) -> bool {
        let segment = &walk.segments[0];
        let layout = segment.layout();
        let mut cursor = layout.start();
        let found = loop {
            let Some(pos) = cursor.pos else { break false };
            if self.matches(play, &segment.tasks[pos]) {
                break true;
            }
            layout.succeeded(&mut cursor, pos);
        };
        for (_, host_cursor) in walk.cursors.iter_mut() {
            *host_cursor = cursor.clone();
        }
        if found {
            self.done.set(true);
        }
        found
    }
}
