//! The status line a terminal shows while a task runs (no ansible callback has one): hosts
//! done of hosts targeted, failures so far in the run, the `serial` batch, the task's elapsed
//! time, on stderr. It is erased before every line the transcript prints (the callback's, and
//! warnings) and drawn again after, so what the transcript says is what ansible's says, and a
//! transcript piped to a file holds none of it.
//!
//! Owns the line and when it shows ([`enabled`]); it must not change what the callback it
//! wraps prints, nor when.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tack_config::Config;
use tack_report::callback::{Callback, Stats, TaskParams, TaskView};
use tack_report::result::{HostResult, Outcome};

/// Whether the line is drawn: stderr is a terminal that `TERM` names as one with colours (not
/// `dumb`), colour is not turned off (`ANSIBLE_NOCOLOR`, `NO_COLOR`, `nocolor`), and
/// `TACK_PROGRESS` is not `0` (for a terminal session whose every byte must be ansible's: a
/// recording, a screen reader).
pub(crate) fn enabled(config: &Config) -> bool {
    std::env::var_os("TACK_PROGRESS").is_none_or(|v| v != "0")
        && !config.nocolor()
        && std::io::stderr().is_terminal()
        && crate::color::terminal_has_colors()
        && std::env::var_os(tack_server::runner::RUN_ENV).is_none()
}

/// The bar being drawn, shared with the warning channel's sink so a warning erases it too.
type Shared = Arc<Mutex<Option<ProgressBar>>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Option<ProgressBar>> {
    // A panic while drawing leaves at worst a stale bar handle, still safe to use.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A callback wrapped with the status line.
pub(crate) struct Progress<C> {
    inner: C,
    current: Shared,
    /// The task's action is `pause`, which reads the terminal: no line while it waits.
    pausing: bool,
    failures: u64,
    batch: Option<(usize, usize)>,
    /// Undoes the warning sink and the interrupt hook when the run ends.
    _registered: Option<tack_diag::interrupt::Registered>,
}

impl<C: Callback> Progress<C> {
    /// `inner` with the line when `enabled`, else `inner` unchanged.
    pub(crate) fn new(inner: C, enabled: bool) -> Progress<C> {
        let current: Shared = Arc::new(Mutex::new(None));
        let registered = enabled.then(|| {
            let sink = current.clone();
            tack_diag::set_warning_sink(Some(Box::new(move |text: &str| {
                let write = || {
                    let mut stderr = std::io::stderr().lock();
                    let _ = stderr.write_all(text.as_bytes());
                    let _ = stderr.flush();
                };
                tack_diag::interrupt::hold_if_ending();
                match lock(&sink).as_ref() {
                    Some(bar) => bar.suspend(write),
                    None => write(),
                }
            })));
            // Erased before an interrupt's message is printed.
            let on_interrupt = current.clone();
            tack_diag::interrupt::undo_on_interrupt(move || {
                if let Some(bar) = lock(&on_interrupt).take() {
                    bar.finish_and_clear();
                }
            })
        });
        Progress {
            inner,
            current,
            pausing: false,
            failures: 0,
            batch: None,
            _registered: registered,
        }
    }

    /// Runs `f` (which prints) with the line erased, then draws it again.
    fn around<R>(&mut self, f: impl FnOnce(&mut C) -> R) -> R {
        let bar = lock(&self.current).clone();
        match bar {
            Some(bar) => bar.suspend(|| f(&mut self.inner)),
            None => f(&mut self.inner),
        }
    }

    /// Erases the line for good (the task ended, or the run).
    fn clear(&mut self) {
        if let Some(bar) = lock(&self.current).take() {
            bar.finish_and_clear();
        }
    }

    fn message(&self) -> String {
        let mut msg = String::new();
        if self.failures > 0 {
            msg.push_str(&format!(", {} failed", self.failures));
        }
        if let Some((index, count)) = self.batch.filter(|(_, count)| *count > 1) {
            msg.push_str(&format!(", batch {index} of {count}"));
        }
        msg
    }

    fn counted(&mut self, result: &HostResult) {
        let failed = matches!(result.outcome(), Outcome::Failed | Outcome::Unreachable);
        if failed && !result.ignored && !result.ignore_unreachable {
            self.failures += 1;
        }
        if let Some(bar) = lock(&self.current).as_ref() {
            bar.inc(1);
        }
        let msg = self.message();
        if let Some(bar) = lock(&self.current).as_ref() {
            bar.set_message(msg);
        }
    }
}

impl<C> Drop for Progress<C> {
    fn drop(&mut self) {
        if self._registered.is_some() {
            tack_diag::set_warning_sink(None);
        }
        if let Some(bar) = lock(&self.current).take() {
            bar.finish_and_clear();
        }
    }
}

impl<C: Callback> Callback for Progress<C> {
    fn wants_params(&self) -> bool {
        self.inner.wants_params()
    }

    fn task_params(&mut self, task: &TaskView, params: &TaskParams) {
        self.around(|c| c.task_params(task, params));
    }

    fn play_check_mode(&mut self, check_mode: bool) {
        self.inner.play_check_mode(check_mode);
    }

    fn play_start(&mut self, name: &str) {
        self.clear();
        self.inner.play_start(name);
    }

    fn no_hosts_matched(&mut self) {
        self.around(|c| c.no_hosts_matched());
    }

    fn no_hosts_remaining(&mut self) {
        self.around(|c| c.no_hosts_remaining());
    }

    fn task_start(&mut self, task: &TaskView) {
        self.clear();
        let action = task.action.rsplit('.').next().unwrap_or(&task.action);
        self.pausing = action == "pause";
        self.inner.task_start(task);
    }

    fn included(&mut self, file: &str, hosts: &[String], item: Option<&str>) {
        self.around(|c| c.included(file, hosts, item));
    }

    fn handler_start(&mut self, task: &TaskView) {
        self.clear();
        self.pausing = false;
        self.inner.handler_start(task);
    }

    fn host_result(&mut self, task: &TaskView, result: &HostResult) {
        self.around(|c| c.host_result(task, result));
        self.counted(result);
    }

    fn item_result(&mut self, task: &TaskView, result: &HostResult) {
        self.around(|c| c.item_result(task, result));
    }

    fn file_diff(&mut self, task: &TaskView, result: &HostResult) {
        self.around(|c| c.file_diff(task, result));
    }

    fn retry(&mut self, task: &TaskView, result: &HostResult) {
        self.around(|c| c.retry(task, result));
    }

    fn stats(&mut self, stats: &Stats) {
        self.clear();
        self.inner.stats(stats);
    }

    fn playbook_start(&mut self, playbook: &tack_playbook::Playbook, first: bool) {
        self.around(|c| c.playbook_start(playbook, first));
    }

    fn verbose_line(&mut self, level: u8, msg: &str) {
        self.around(|c| c.verbose_line(level, msg));
    }

    fn display(&mut self, text: &str) {
        self.around(|c| c.display(text));
    }

    fn async_note(&mut self, text: &str) {
        self.around(|c| c.async_note(text));
    }

    fn async_event(&mut self, task: &TaskView, event: &str, result: &HostResult) {
        self.inner.async_event(task, event, result);
    }

    fn handler_notified(&mut self, handler: &TaskView, host: &str) {
        self.inner.handler_notified(handler, host);
    }

    fn vars_prompt(&mut self, entry: &tack_yaml::Mapping) {
        self.inner.vars_prompt(entry);
    }

    fn include_result(&mut self, task: &TaskView, result: &HostResult) {
        self.inner.include_result(task, result);
    }

    fn host_start(&mut self, task: &TaskView, host: &str, handler: bool) {
        self.around(|c| c.host_start(task, host, handler));
    }

    fn batch_start(&mut self, index: usize, count: usize) {
        self.batch = Some((index, count));
        self.inner.batch_start(index, count);
    }

    fn task_hosts(&mut self, count: usize) {
        self.inner.task_hosts(count);
        if self._registered.is_none() || self.pausing || count == 0 {
            return;
        }
        self.clear();
        let bar = ProgressBar::with_draw_target(Some(count as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos}/{len} hosts{msg}, {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(self.message());
        bar.enable_steady_tick(Duration::from_millis(200));
        *lock(&self.current) = Some(bar);
    }
}
