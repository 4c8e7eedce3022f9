//! The run loop: playbooks, plays and batches as ansible-core 2.21.5 runs them. It decides
//! what runs where and in what order (host `order`, `serial` batches, the `linear`, `free`
//! and `host_pinned` strategies, handlers, dynamic includes, `meta` tasks, `run_once`,
//! `any_errors_fatal`, `max_fail_percentage`), the variables each host sees at each task,
//! each task's run on each host (`when`, loops, `until`, the action, `changed_when`/
//! `failed_when`, `register`), and the plan's gate (`tack plan`).
//!
//! What an action does is `tack_actions`'; how a host is reached is `tack_links`'; results and
//! the transcript are `tack_report`'s. The loop never reads a managed host's state except
//! through an action's result, and prints only through the [`tack_report::Callback`] it is
//! given (and `tack_diag`'s warning channel).
//!
//! One entry point, [`run`] (with [`check`], what `run` refuses before anything starts, for
//! the commands that only load).

mod context;
pub mod fact_cache;
mod handlers;
mod include;
mod meta;
mod plan;
mod play;
mod refuse;
mod run;
mod strategy;
mod task;
mod vars;
mod verbose;

pub use context::{
    ANSIBLE_VERSION, ExternalStrategy, Gathering, HostState, RunContext, RunFacts, RunStatus,
};
pub use fact_cache::{CachePlugin, FactCache, FactCacheConfig};
pub use plan::pending::Pending;
pub use play::start_at::StartAt;
pub use run::{check, run};
pub use vars::read_notes::gathering_notes as vars_file_notes;
pub use vars::read_notes::load_lines as vars_file_load_lines;
pub use verbose::check as check_verbosity;
pub use verbose::check_listing as check_listing_verbosity;
