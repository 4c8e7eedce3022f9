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

mod args;
mod batch;
mod batches;
mod context;
mod delegate;
mod env;
mod environment;
mod failed_task;
mod fanout;
mod fatal;
mod flush;
mod force_handlers;
mod forks;
mod free_include;
mod free_passes;
mod gather;
mod handlers;
mod include;
mod include_role;
mod include_tasks;
mod iterator;
mod linear;
mod loop_control;
mod meta;
mod module_defaults;
mod outcome;
mod params;
mod plan;
mod plan_pending;
mod play;
mod prompt;
mod read_notes;
mod reading;
mod refuse;
mod reserved;
mod retries;
mod roles;
mod run;
mod segments;
mod splice;
mod start_at;
mod strategy;
mod strategy_free;
mod task;
mod task_link;
mod task_loop;
mod task_name;
mod vars;
mod verbose;
mod when;

pub use context::{ANSIBLE_VERSION, HostState, RunContext, RunFacts, RunStatus};
pub use plan_pending::Pending;
pub use read_notes::gathering_notes as vars_file_notes;
pub use read_notes::load_lines as vars_file_load_lines;
pub use run::{check, run};
pub use start_at::StartAt;
pub use verbose::check as check_verbosity;
pub use verbose::check_listing as check_listing_verbosity;
