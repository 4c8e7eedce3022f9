//! What a run reports, and nothing of how it runs: a host's result for a task as ansible's
//! `TaskResult` carries it ([`result`]), the marks a plan puts on results it could not know
//! ([`plan_mark`]), what `no_log` leaves of a result when it is shown ([`no_log`]), and the
//! callbacks that turn the run's events into ansible's transcript ([`callback`]: the
//! [`Callback`] trait, the recap's [`Stats`], ansible's `default` and `minimal` stdout
//! callbacks, the `--events` JSON lines and the plan's outputs).
//!
//! The run loop (`tack-engine`) decides and hands results down; this crate only reads them.
//! It never runs a task, never touches a host, and prints only to the writer a callback is
//! given (and `tack_diag`'s warning channel).

pub mod callback;
pub mod no_log;
pub mod plan_mark;
pub mod result;

pub use callback::{Callback, Stats, TaskParams, TaskView};
pub use result::{HostResult, Outcome};
