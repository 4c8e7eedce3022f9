//! What a run reports, as ansible's callback hooks report it: a [`Callback`] receives the
//! run's events in order; [`Stats`] counts each host's outcomes for the recap with ansible's
//! rules. The default stdout callback lives in [`default`].
//!
//! Callbacks only report: they never change a result or decide what runs next.

pub mod color;
mod custom;
pub mod default;
pub mod diff;
pub mod events;
pub mod minimal;
pub mod plan_json;
mod plan_lines;
pub mod result_style;
pub mod tree;
pub mod verbose;

use std::collections::BTreeMap;

use crate::result::HostResult;

/// The task a result belongs to, as a callback needs it.
#[derive(Debug, Clone)]
pub struct TaskView {
    /// The name the banner shows (`role : name`, or the action when unnamed).
    pub name: String,
    /// The action as written (`debug`, `ansible.builtin.debug`).
    pub action: String,
    /// The task loops (`loop:` or `with_*`).
    pub looped: bool,
    /// The task's source position, for error blocks.
    pub origin: Option<tack_diag::Origin>,
    /// The task's `check_mode` as loaded (its own or an ancestor's, else `--check`): the
    /// banner's `[CHECK MODE]` marker.
    pub check_mode: bool,
}

/// A task's input as the hosts it targets receive it (seed 000, steps 1-3): rendered for
/// each host in its own context and compared with the first host's (hosts by name).
#[derive(Debug, Clone)]
pub struct TaskParams {
    /// The first host's input, for showing: every secret value (a `!vault` value read, a
    /// `no_log` task's or a module's `no_log` option) replaced by `********`, then every
    /// top-level key whose value differs between hosts by `<per-host>` (a masked value stays
    /// masked). A looped task's input is the list of its items' arguments.
    pub shown: tack_yaml::Node,
    /// Every host received the same input.
    pub shared: bool,
    /// The hosts whose input was rendered, by name (a host whose `when` is false, or whose
    /// arguments fail to render, receives none).
    pub hosts: Vec<String>,
    /// Hosts whose input held a secret: what their results say may repeat it.
    pub sealed_hosts: Vec<String>,
    /// Where the hosts' inputs differ (`shared` false), each host's own input, its secret
    /// values masked (seed 000's planned feature: what a host received can be read back);
    /// empty where every host received the same.
    pub per_host: Vec<(String, tack_yaml::Node)>,
}

/// What replaces a secret value wherever a task's input or result is shown.
pub const MASK: &str = "********";
/// What replaces a top-level input value that differs between hosts (seed 000).
pub const PER_HOST: &str = "<per-host>";

/// The run's events, in the order ansible's callbacks receive them.
pub trait Callback {
    /// Whether the callback shows [`TaskParams`]; computing them renders every task's
    /// arguments once more, so only callbacks that show them ask.
    fn wants_params(&self) -> bool {
        false
    }
    /// The task's rendered input, right after its start (`task_start` or `handler_start`).
    fn task_params(&mut self, _task: &TaskView, _params: &TaskParams) {}
    /// Whether the play about to start runs in check mode (its `check_mode`, else
    /// `--check`), just before [`Callback::play_start`]: the banner's `[CHECK MODE]` marker.
    fn play_check_mode(&mut self, check_mode: bool) {
        let _ = check_mode;
    }
    fn play_start(&mut self, name: &str);
    fn no_hosts_matched(&mut self);
    /// `NO MORE HOSTS LEFT`: `max_fail_percentage` ended the play.
    fn no_hosts_remaining(&mut self);
    fn task_start(&mut self, task: &TaskView);
    /// `include_tasks` loaded `file` for `hosts` (for one loop item, when it loops).
    fn included(&mut self, file: &str, hosts: &[String], item: Option<&str>);
    /// A handler about to run (`RUNNING HANDLER`).
    fn handler_start(&mut self, task: &TaskView);
    /// A host's final result for a task (after its loop items, if any).
    fn host_result(&mut self, task: &TaskView, result: &HostResult);
    /// One loop item's result.
    fn item_result(&mut self, task: &TaskView, result: &HostResult);
    /// `v2_on_file_diff`: a result with a `diff`, before its result line (each loop item's
    /// before the item's line).
    fn file_diff(&mut self, task: &TaskView, result: &HostResult) {
        let _ = (task, result);
    }
    /// A bad run that `until`/`retries` runs again.
    fn retry(&mut self, task: &TaskView, result: &HostResult);
    fn stats(&mut self, stats: &Stats);
    /// A playbook about to run (`v2_playbook_on_start` and the executor's notes around it:
    /// the files it imported, and, before the `first`, the callback loader's).
    fn playbook_start(&mut self, playbook: &tack_playbook::Playbook, first: bool);
    /// A line the run shows from `-v` count `level` on (`display.vv(...)` is level 2).
    fn verbose_line(&mut self, level: u8, msg: &str);
    /// A line an action shows while it runs (`pause`'s announcement).
    fn display(&mut self, text: &str);
    /// `v2_runner_on_async_poll`/`_ok`/`_failed`: a note on a job the task waits for.
    fn async_note(&mut self, text: &str) {
        let _ = text;
    }
    /// The same note as ansible's callbacks are handed it: `event` (`poll`, `ok`, `failed`)
    /// and the job's status for the host. Nothing prints it: callback plugins hear it.
    fn async_event(&mut self, task: &TaskView, event: &str, result: &HostResult) {
        let _ = (task, event, result);
    }
    /// `v2_playbook_on_notify`: `handler` newly notified for `host` (at a flush, or at once
    /// while handlers run): `NOTIFIED HANDLER ... for ...` from `-vv`.
    fn handler_notified(&mut self, handler: &TaskView, host: &str) {
        self.verbose_line(2, &format!("NOTIFIED HANDLER {} for {host}", handler.name));
    }
    /// `v2_playbook_on_vars_prompt`: a play's prompt about to be asked (each of the prompt's
    /// entry as rendered). Nothing prints it: callback plugins hear it.
    fn vars_prompt(&mut self, entry: &tack_yaml::Mapping) {
        let _ = entry;
    }
    /// An include task's own result on a host (`{"include": ..., "include_args": ...}`),
    /// which ansible's default callback does not show: callback plugins hear it as
    /// `v2_runner_on_ok`.
    fn include_result(&mut self, task: &TaskView, result: &HostResult) {
        let _ = (task, result);
    }
    /// A host's run of the task was queued (`v2_runner_on_start`): the first `forks` hosts
    /// as the task starts, each later one as an earlier one's result frees its worker.
    fn host_start(&mut self, task: &TaskView, host: &str, handler: bool) {
        let _ = (task, host, handler);
    }
    /// For a progress display (no ansible callback has it): the play's `serial` batch about
    /// to run, `index` counting from 1 of `count`.
    fn batch_start(&mut self, index: usize, count: usize) {
        let _ = (index, count);
    }
    /// For a progress display: how many hosts the task that just started runs on.
    fn task_hosts(&mut self, count: usize) {
        let _ = count;
    }
}

/// One host's counters in the recap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostStats {
    pub ok: u32,
    pub changed: u32,
    pub unreachable: u32,
    pub failures: u32,
    pub skipped: u32,
    pub rescued: u32,
    pub ignored: u32,
    /// `tack plan`: tasks that would run and were not run (their outcome is unknown).
    pub would_run: u32,
    /// `tack plan`: tasks whose input depends on output unavailable until apply (a loop
    /// with known changes and deferred items counts in both).
    pub deferred: u32,
}

/// ansible's `AggregateStats`: the recap's counters by host.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    hosts: BTreeMap<String, HostStats>,
    /// `set_stats` data by host (`_run` for the whole run's), see `custom`.
    pub custom: BTreeMap<String, tack_yaml::Mapping>,
}

impl Stats {
    /// Counts a host's final result for one task as ansible's strategy does: a changed task
    /// also counts as ok; an ignored failure counts as ok and ignored (and changed if it
    /// changed), never as failed; a failure inside a block that has a rescue section counts
    /// as rescued (`rescuing`), not failed.
    pub fn count(&mut self, result: &HostResult, rescuing: bool) {
        let stats = self.hosts.entry(result.host.clone()).or_default();
        if let Some(mark) = result.plan.as_ref().filter(|m| m.unknown())
            && !matches!(
                result.outcome(),
                crate::result::Outcome::Failed | crate::result::Outcome::Unreachable
            )
        {
            // What a plan could not know is counted as such, never as unchanged.
            stats.would_run += u32::from(mark.would_run);
            stats.deferred += u32::from(!mark.deferred.is_empty());
            if result.flag("changed") {
                stats.ok += 1;
                stats.changed += 1;
            }
            return;
        }
        match result.outcome() {
            crate::result::Outcome::Failed if result.ignored => {
                stats.ok += 1;
                stats.ignored += 1;
                if result.flag("changed") {
                    stats.changed += 1;
                }
            }
            crate::result::Outcome::Failed if rescuing => stats.rescued += 1,
            crate::result::Outcome::Failed => stats.failures += 1,
            crate::result::Outcome::Skipped => stats.skipped += 1,
            crate::result::Outcome::Changed => {
                stats.ok += 1;
                stats.changed += 1;
            }
            crate::result::Outcome::Ok => stats.ok += 1,
            crate::result::Outcome::Unreachable if result.ignore_unreachable => {
                stats.ok += 1;
                stats.ignored += 1;
            }
            crate::result::Outcome::Unreachable => stats.unreachable += 1,
        }
    }

    /// A host that ran a task whose result is not counted (a meta task) still appears.
    pub fn touch(&mut self, host: &str) {
        self.hosts.entry(host.to_string()).or_default();
    }

    /// Hosts in the recap's order (sorted by name) with their counters.
    pub fn hosts(&self) -> impl Iterator<Item = (&str, &HostStats)> {
        self.hosts.iter().map(|(h, s)| (h.as_str(), s))
    }

    pub fn get(&self, host: &str) -> Option<&HostStats> {
        self.hosts.get(host)
    }

    /// `tack plan`: how many outcomes, over every host, were deferred.
    pub fn deferred(&self) -> u32 {
        self.hosts.values().map(|s| s.deferred).sum()
    }
}
