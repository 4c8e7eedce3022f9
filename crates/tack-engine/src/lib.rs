//! Running plays as ansible-core 2.21.5 runs them: the variables each host sees, `serial`
//! batches and host `order`, the `linear`, `free` and `host_pinned` strategies, the
//! controller actions, each task's result as ansible builds it, and the default callback's
//! transcript with the recap and ansible's exit code.
//!
//! This first engine runs plays of controller actions (`debug`, `set_fact`, `assert`,
//! `fail`, `meta: noop`) with `when`, `loop`, `register`, `ignore_errors`, `changed_when`
//! and `failed_when`; everything else a playbook may use is refused by name before any play
//! starts (`refuse`). It never reads or writes a managed host, and prints only through the
//! [`Callback`] it is given and the warning channel of `tack_diag`.

mod batches;
mod delegate;
mod environment;
mod failed_task;
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
mod iterator;
mod loop_control;
mod meta;
mod module_defaults;
mod no_log;
mod params;
pub mod plan;
pub mod plan_pending;
mod play;
mod prompt;
mod read_notes;
mod refuse;
mod render_cache;
mod reserved;
mod retries;
mod roles;
mod segments;
mod start_at;
mod strategy_free;
mod task;
mod task_link;
mod task_loop;
mod task_name;
pub mod vars;
pub mod verbose;

use std::collections::BTreeMap;

use tack_diag::Diagnostic;
use tack_inventory::Inventory;
use tack_loader::DataLoader;
use tack_playbook::Playbook;
use tack_playbook::tags::TagFilter;
use tack_template::Templar;
use tack_yaml::Mapping;

use tack_report::{Callback, Stats};

pub use read_notes::gathering_notes as vars_file_notes;
pub use read_notes::load_lines as vars_file_load_lines;
pub use start_at::StartAt;
pub use vars::RunFacts;
pub use verbose::check as check_verbosity;
pub use verbose::check_listing as check_listing_verbosity;

/// The ansible-core version tack reproduces (`ansible_version`).
pub const ANSIBLE_VERSION: &str = "2.21.5";

/// What a run needs from the command line and the loaded project.
pub struct RunContext<'a> {
    pub inventory: &'a Inventory,
    pub loader: &'a DataLoader,
    pub templar: &'a Templar,
    pub extra_vars: &'a Mapping,
    pub tags: &'a TagFilter,
    /// Loads the task files `include_tasks` names at run time.
    pub tasks: &'a tack_playbook::Loader<'a>,
    pub facts: RunFacts,
    /// `--start-at-task`.
    pub start_at: Option<StartAt>,
    /// `--force-handlers`: the default of the plays' `force_handlers`.
    pub force_handlers: bool,
    /// The run's links to its hosts.
    pub links: &'a tack_links::Links<'a>,
    /// `tack plan`: the paths on each host an earlier task would change.
    pub pending: plan_pending::Pending,
}

/// A host's state across the plays of a run.
#[derive(Clone, Default)]
pub struct HostState {
    /// The host failed a task (not ignored): it runs nothing more.
    pub failed: bool,
    /// The host could not be reached (not ignored): it runs nothing more.
    pub unreachable: bool,
    /// The facts gathered for the host (kept for the rest of the run, as ansible's in-memory
    /// fact cache keeps them).
    pub facts: Option<std::sync::Arc<tack_template::Layer>>,
    /// Its `set_fact` values and registered results, kept for later plays.
    pub set_facts: Option<std::sync::Arc<tack_template::Layer>>,
    /// What `include_vars` loaded for it, kept for later plays.
    pub included_vars: Option<std::sync::Arc<tack_template::Layer>>,
}

impl HostState {
    /// The host runs nothing more in this run.
    pub fn out(&self) -> bool {
        self.failed || self.unreachable
    }
}

/// How a run ended: ansible-playbook's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    /// A host's final state is failed (exit code 2).
    Failed,
    /// A host could not be reached (exit code 4, over failed hosts).
    Unreachable,
}

impl RunStatus {
    pub fn exit_code(self) -> u8 {
        match self {
            RunStatus::Ok => 0,
            RunStatus::Failed => 2,
            RunStatus::Unreachable => 4,
        }
    }
}

/// Checks every play of `playbooks` against what the engine runs, before anything runs.
pub fn check(playbooks: &[Playbook]) -> Result<(), Diagnostic> {
    for playbook in playbooks {
        for play in &playbook.plays {
            refuse::check_play(play)?;
        }
    }
    Ok(())
}

/// Runs every play of `playbooks` in order, reporting to `callback`. A play that cannot start
/// (its variables or keywords fail to render) ends the run with that error, as in ansible.
pub fn run(
    ctx: &RunContext<'_>,
    playbooks: &[Playbook],
    callback: &mut dyn Callback,
) -> Result<RunStatus, Diagnostic> {
    check(playbooks)?;
    let mut stats = Stats::default();
    let mut states: BTreeMap<String, HostState> = BTreeMap::new();
    let live = tack_inventory::live::LiveInventory::new(ctx.inventory);
    // ansible's exit code is its last batch's: a play broken by `max_fail_percentage` gives
    // the failed hosts' code, over unreachable ones.
    let mut max_fail = false;
    for (n, playbook) in playbooks.iter().enumerate() {
        // ansible loads each playbook when its turn comes; from -vvv its imports' lines come
        // with the gatherings of `vars_files` (see `read_notes`).
        if ctx.facts.verbosity >= 3 && playbook.plays.iter().any(|p| !p.vars_files.is_empty()) {
            let lines = read_notes::load_lines(playbook, ctx.extra_vars, ctx.loader, ctx.templar)?;
            for (level, line) in lines {
                callback.verbose_line(level, &line);
            }
            let shown = Playbook { imported: Vec::new(), ..playbook.clone() };
            callback.playbook_start(&shown, n == 0);
        } else {
            callback.playbook_start(playbook, n == 0);
        }
        for play in &playbook.plays {
            reserved::warn_loaded(play, ctx.extra_vars);
        }
        for play in &playbook.plays {
            let prompted = prompt::answered(ctx, play)?;
            let play = prompted.as_ref().unwrap_or(play);
            match play::run_play(ctx, play, &live, callback, &mut stats, &mut states)? {
                play::PlayEnd::Continue => {}
                play::PlayEnd::AllFailed => break,
                play::PlayEnd::MaxFail => {
                    max_fail = true;
                    break;
                }
            }
        }
        // ansible's executor shows the recap (counted over the whole run) after each
        // playbook, and runs no further playbook once one has failed hosts.
        callback.stats(&stats);
        if max_fail || states.values().any(HostState::out) {
            break;
        }
    }
    Ok(if max_fail {
        RunStatus::Failed
    } else if states.values().any(|s| s.unreachable) {
        RunStatus::Unreachable
    } else if states.values().any(|s| s.failed) {
        RunStatus::Failed
    } else {
        RunStatus::Ok
    })
}
