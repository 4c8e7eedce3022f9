//! Where each host is in a play: one index into the play's flat task list, and how that index
//! moves when a task succeeds or fails, following ansible's `PlayIterator` rules for
//! `block`/`rescue`/`always`: a failure in a block's tasks goes to its `rescue` (else its
//! `always`, else out to the parent block as a failure); a completed `rescue` clears the
//! failure; `always` runs either way, and re-raises a failure it did not clear.
//!
//! Sections whose tasks the tag selection removed count as empty, as in ansible (which filters
//! blocks before iterating).

use std::collections::BTreeSet;

use tack_playbook::walk::BlockSpan;

/// A block section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Section {
    Tasks,
    Rescue,
    Always,
}

/// The play's tasks as the iterator sees them.
pub(crate) struct Layout<'a> {
    pub spans: &'a [BlockSpan],
    /// The innermost block of each task.
    pub innermost: &'a [usize],
    /// Which tasks the tag selection kept.
    pub selected: &'a [bool],
}

/// One host's position.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostCursor {
    /// The next task to run; `None` once the host is done with the play.
    pub pos: Option<usize>,
    /// Blocks with a failure not yet rescued.
    pending: BTreeSet<usize>,
    /// The host left the play through a failure no block rescued.
    pub failed: bool,
    /// Its failures skip every rescue (a host a failed `run_once` task failed: ansible keeps
    /// it among its removed hosts, which run `always` sections but no `rescue`).
    pub no_rescue: bool,
    /// The host runs an `always` section as a failing host (its block failed and nothing
    /// rescued it there): ansible's iterator counts it failed already (`is_failed`), so it
    /// is out of `ansible_play_hosts` while it runs the `always`.
    pub failing: bool,
}

impl HostCursor {
    /// `meta: clear_host_errors` (ansible's `clear_host_errors`, which clears the failure of
    /// every block the host is in, not only the play's): the host goes on as if nothing had
    /// failed, past the `always` it may be in.
    pub(crate) fn clear_errors(&mut self) {
        self.failed = false;
        self.pending.clear();
        self.no_rescue = false;
        self.failing = false;
    }
}

impl Layout<'_> {
    fn range(&self, span: usize, section: Section) -> std::ops::Range<usize> {
        let s = &self.spans[span];
        match section {
            Section::Tasks => s.block.clone(),
            Section::Rescue => s.rescue.clone(),
            Section::Always => s.always.clone(),
        }
    }

    fn has(&self, span: usize, section: Section) -> bool {
        self.range(span, section).any(|i| self.selected[i])
    }

    /// The section of `span` that contains the task or block starting at `index`.
    fn section_of(&self, span: usize, index: usize) -> Section {
        let s = &self.spans[span];
        if s.rescue.contains(&index) {
            Section::Rescue
        } else if s.always.contains(&index) {
            Section::Always
        } else {
            Section::Tasks
        }
    }

    /// The blocks containing task `index`, outermost first.
    fn enclosing(&self, index: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut span = Some(self.innermost[index]);
        while let Some(s) = span {
            chain.push(s);
            span = self.spans[s].parent;
        }
        chain.reverse();
        chain
    }

    /// ansible's `is_any_block_rescuing` at the moment task `index` fails: some enclosing
    /// block is running its tasks and has a rescue section.
    pub(crate) fn rescuing(&self, index: usize) -> bool {
        self.enclosing(index).into_iter().any(|span| {
            self.section_of(span, index) == Section::Tasks && self.has(span, Section::Rescue)
        })
    }

    /// A cursor at the play's first selected task.
    pub(crate) fn start(&self) -> HostCursor {
        HostCursor { pos: self.first_selected(0), ..HostCursor::default() }
    }

    fn first_selected(&self, from: usize) -> Option<usize> {
        (from..self.selected.len()).find(|i| self.selected[*i])
    }

    /// Moves `cursor` past task `index`, which succeeded (or was skipped, or failed ignored).
    pub(crate) fn succeeded(&self, cursor: &mut HostCursor, index: usize) {
        let span = self.innermost[index];
        let section = self.section_of(span, index);
        cursor.pos = self.next_in(cursor, span, section, index + 1);
    }

    /// Moves `cursor` past task `index`, which failed.
    pub(crate) fn failed(&self, cursor: &mut HostCursor, index: usize) {
        let span = self.innermost[index];
        let section = self.section_of(span, index);
        cursor.pos = self.fail_in(cursor, span, section);
    }

    /// The next position from `at`, inside `section` of `span` or after leaving it.
    fn next_in(
        &self,
        cursor: &mut HostCursor,
        span: usize,
        section: Section,
        at: usize,
    ) -> Option<usize> {
        let range = self.range(span, section);
        if let Some(next) = (at..range.end).find(|i| self.selected[*i]) {
            return Some(next);
        }
        match section {
            Section::Tasks => self.enter_always_or_exit(cursor, span),
            Section::Rescue => {
                // A rescue that ran to its end rescued the block.
                cursor.pending.remove(&span);
                cursor.failing = false;
                self.enter_always_or_exit(cursor, span)
            }
            Section::Always => self.exit(cursor, span),
        }
    }

    fn enter_always_or_exit(&self, cursor: &mut HostCursor, span: usize) -> Option<usize> {
        if self.has(span, Section::Always) {
            let start = self.range(span, Section::Always).start;
            return self.next_in(cursor, span, Section::Always, start);
        }
        self.exit(cursor, span)
    }

    /// Leaves `span`: on to what follows it in the parent, or out through a failure.
    fn exit(&self, cursor: &mut HostCursor, span: usize) -> Option<usize> {
        let failing = cursor.pending.remove(&span);
        if !failing {
            cursor.failing = false;
        }
        let end = self.spans[span].end();
        match self.spans[span].parent {
            None if failing => {
                cursor.failed = true;
                None
            }
            None => self.first_selected(end),
            Some(parent) => {
                // The child's sections are contiguous from `block.start`; a child that was
                // entered holds at least one task, so that index is inside the parent's
                // section that holds the child.
                let section = self.section_of(parent, self.spans[span].block.start);
                if failing {
                    self.fail_in(cursor, parent, section)
                } else {
                    self.next_in(cursor, parent, section, end)
                }
            }
        }
    }

    /// ansible's `_set_failed_state` at `span`, failing in `section`.
    fn fail_in(&self, cursor: &mut HostCursor, span: usize, section: Section) -> Option<usize> {
        cursor.pending.insert(span);
        match section {
            Section::Tasks if self.has(span, Section::Rescue) && !cursor.no_rescue => {
                cursor.failing = false;
                let start = self.range(span, Section::Rescue).start;
                self.next_in(cursor, span, Section::Rescue, start)
            }
            Section::Tasks | Section::Rescue => {
                cursor.failing = !self.rescued_above(cursor, span);
                self.enter_always_or_exit(cursor, span)
            }
            Section::Always => {
                cursor.failing = !self.rescued_above(cursor, span);
                self.exit(cursor, span)
            }
        }
    }

    /// Whether a block around `span` will rescue its failure: one whose tasks hold it and
    /// that has a rescue (the host is not failed while it runs the `always` on the way).
    fn rescued_above(&self, cursor: &HostCursor, span: usize) -> bool {
        let mut at = span;
        while let Some(parent) = self.spans[at].parent {
            let section = self.section_of(parent, self.spans[at].block.start);
            if section == Section::Tasks && self.has(parent, Section::Rescue) && !cursor.no_rescue {
                return true;
            }
            at = parent;
        }
        false
    }
}
