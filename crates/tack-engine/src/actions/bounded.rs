//! The task's `timeout:` over an action plugin's whole run: every sub-task goes through a
//! [`Bounded`] link that refuses to start one once the deadline has passed and hands the
//! modules that can stop themselves (`command`, `shell`, `copy`'s `validate`) what is left
//! of it; [`bounded`] then ends the task with ansible's `Timed out after <n> second(s).`
//! when the deadline passed or a sub-task said it timed out, whatever the plugin made of
//! it.
//!
//! A sub-task that cannot stop itself (a `stat`, an `apt-get` run, a module through the
//! Python path, a `raw` command) runs to its end first; ansible would interrupt it. Staged
//! files are always removed, deadline or not.

use std::time::{Duration, Instant};

use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};

use super::{ActionInput, ActionOutput};
use crate::connection::{Connection, ConnectionError, ExecOutput, StagedFile};

/// A link whose uses stop at a deadline.
pub(super) struct Bounded<'a> {
    inner: &'a dyn Connection,
    deadline: Instant,
}

impl Bounded<'_> {
    fn check(&self) -> Result<(), ConnectionError> {
        if Instant::now() >= self.deadline {
            return Err(ConnectionError::Exec("the task's timeout ran out".into()));
        }
        Ok(())
    }

    /// Whole seconds left, rounded up, for a module that stops itself.
    fn left(&self) -> u64 {
        let left = self.deadline.saturating_duration_since(Instant::now());
        left.as_secs() + u64::from(left.subsec_nanos() > 0)
    }
}

impl Connection for Bounded<'_> {
    fn connect(&self) -> Result<(), ConnectionError> {
        self.inner.connect()
    }

    fn is_open(&self) -> bool {
        self.inner.is_open()
    }

    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        self.check()?;
        let short = tack_py::ansible::short_name(
            module,
            tack_py::ansible::CoreCollections::BuiltinOrLegacy,
        );
        if !tack_agent::modules::TAKE_TIMEOUT.contains(&short) {
            return self.inner.run_module(module, invocation);
        }
        let left = self.left();
        let mut bounded = invocation.clone();
        bounded.timeout = Some(invocation.timeout.map_or(left, |t| t.min(left)));
        self.inner.run_module(module, &bounded)
    }

    fn exec_command(
        &self,
        cmd: &str,
        cwd: &std::path::Path,
    ) -> Result<ExecOutput, ConnectionError> {
        self.check()?;
        self.inner.exec_command(cmd, cwd)
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        self.check()?;
        self.inner.run_python(payload, run)
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        self.check()?;
        self.inner.stage(bytes, name, executable)
    }

    fn stage_limit(&self) -> Option<usize> {
        self.inner.stage_limit()
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        self.inner.unstage(file)
    }

    fn take_notes(&self) -> Vec<(u8, String)> {
        self.inner.take_notes()
    }

    fn home(&self) -> Result<String, ConnectionError> {
        self.check()?;
        self.inner.home()
    }
}

/// Runs `action` with `input`'s link bounded by the task's `timeout` (when it has one), and
/// ends the task with ansible's timeout when it ran out.
pub(super) fn bounded(
    input: &ActionInput<'_>,
    action: impl FnOnce(&ActionInput<'_>) -> ActionOutput,
) -> ActionOutput {
    let Some(period) = input.timeout.filter(|t| *t > 0) else { return action(input) };
    let deadline = Instant::now() + Duration::from_secs(period);
    let link = Bounded { inner: input.conn, deadline };
    let inner = ActionInput { conn: &link, ..input.clone() };
    let out = action(&inner);
    let said_so = out.data.get("timedout").is_some();
    if said_so || Instant::now() >= deadline {
        return super::module::task_timed_out(input, period, false);
    }
    out
}
