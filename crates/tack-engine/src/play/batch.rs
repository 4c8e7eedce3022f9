//! What one batch of a play changes as it runs, beside each host's position (the walk) and
//! the handlers' notifications: which hosts are out of it and why, what its includes left
//! failing, and whether it ended the play. The strategy that runs the batch owns it and
//! lends it to what it calls; nothing else keeps batch state.

use std::collections::{BTreeMap, BTreeSet};

use tack_report::result::HostResult;

/// A batch's changing state.
#[derive(Default)]
pub(crate) struct BatchState {
    /// Hosts that failed in an earlier batch of the play, or were ended (ansible's
    /// `_removed_hosts`): carried from batch to batch by the play.
    pub removed: BTreeSet<String>,
    /// Hosts `any_errors_fatal`, `run_once` or `max_fail_percentage` failed in this batch
    /// without a failed result of their own: they end the run failed even if a rescue
    /// catches them, as ansible keeps them in its failed hosts.
    pub forced: BTreeSet<String>,
    /// Hosts found unreachable in this batch (not ignored): they run nothing more in the run.
    pub lost: BTreeSet<String>,
    /// Hosts whose include failed to load its file or role (shown failed, not yet moved).
    pub include_failed: BTreeSet<String>,
    /// Hosts whose include failed as a task fails (a keyword that would not post-validate):
    /// shown, not yet counted (a rescue counts it as rescued, which only the walk knows) nor
    /// moved.
    pub include_task_failed: BTreeMap<String, HostResult>,
    /// Hosts whose include failed to load: ansible keeps them among its failed hosts (out of
    /// `ansible_play_hosts`, `max_fail_percentage`'s count and later plays) even when a rescue
    /// catches the failure, which then leaves the run's exit code alone.
    pub excluded: BTreeSet<String>,
    /// `meta: end_play` ran: no later batch runs.
    pub ended_play: bool,
    /// A handler passed `max_fail_percentage`: the batch ends and the playbook stops.
    pub stopped: bool,
}

impl BatchState {
    /// A batch's state, starting from the hosts earlier batches removed.
    pub(crate) fn new(removed: BTreeSet<String>) -> BatchState {
        BatchState { removed, ..BatchState::default() }
    }
}

/// How one batch ended for the play.
pub(crate) enum BatchEnd {
    Done,
    /// `meta: end_play`: no later batch runs.
    EndPlay,
    /// Every host of the batch failed: the playbook stops.
    Stop,
    /// `max_fail_percentage` was passed: the playbook stops.
    MaxFail,
}
