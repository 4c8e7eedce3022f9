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

use std::borrow::Cow;
use std::time::{Duration, Instant};

use tack_agent::Invocation;
use tack_connect::{Decorator, Request};

use tack_links::{Connection, ConnectionError};

use crate::input::ActionInput;
use crate::output::ActionOutput;

/// A link whose uses stop at a deadline.
pub(crate) struct Bounded<'a> {
    inner: &'a dyn Connection,
    deadline: Instant,
}

impl Bounded<'_> {
    /// Whole seconds left, rounded up, for a module that stops itself.
    fn left(&self) -> u64 {
        let left = self.deadline.saturating_duration_since(Instant::now());
        left.as_secs() + u64::from(left.subsec_nanos() > 0)
    }
}

impl Decorator for Bounded<'_> {
    fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
        Ok(self.inner)
    }

    fn before(&self, request: &Request<'_>) -> Result<(), ConnectionError> {
        // Opening the link does nothing on the host, and staged files are always removed.
        if matches!(request, Request::Connect | Request::Unstage { .. }) {
            return Ok(());
        }
        if Instant::now() >= self.deadline {
            return Err(ConnectionError::Exec("the task's timeout ran out".into()));
        }
        Ok(())
    }

    fn invocation<'i>(&self, module: &str, invocation: &'i Invocation) -> Cow<'i, Invocation> {
        if !tack_agent::modules::takes_timeout(module) {
            return Cow::Borrowed(invocation);
        }
        let left = self.left();
        let timeout = Some(invocation.timeout.map_or(left, |t| t.min(left)));
        Cow::Owned(Invocation { timeout, ..invocation.clone() })
    }
}

/// Runs `action` with `input`'s link bounded by the task's `timeout` (when it has one), and
/// ends the task with ansible's timeout when it ran out.
pub(crate) fn bounded(
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
        return crate::module::task_timed_out(input, period, false);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Mutex;

    use tack_agent::ModuleResult;
    use tack_connect::{ExecOutput, JobSpec, StagedFile};

    use super::*;

    /// A link that answers every request, keeping the timeouts modules were given and the
    /// jobs it started.
    #[derive(Default)]
    struct Answering {
        timeouts: Mutex<Vec<Option<u64>>>,
        jobs: Mutex<Vec<String>>,
    }

    impl Connection for Answering {
        fn run_module(
            &self,
            _: &str,
            invocation: &Invocation,
        ) -> Result<ModuleResult, ConnectionError> {
            self.timeouts.lock().unwrap().push(invocation.timeout);
            Ok(ModuleResult::new())
        }

        fn exec_command(&self, _: &str, _: &Path) -> Result<ExecOutput, ConnectionError> {
            Ok(ExecOutput { rc: 0, stdout: Vec::new(), stderr: Vec::new() })
        }

        fn stage(&self, _: &[u8], _: &str, _: bool) -> Result<StagedFile, ConnectionError> {
            Err(ConnectionError::Stage("not here".into()))
        }

        fn unstage(&self, _: StagedFile) -> Result<(), ConnectionError> {
            Ok(())
        }

        fn start_job(&self, job: &JobSpec) -> Result<ModuleResult, ConnectionError> {
            self.jobs.lock().unwrap().push(job.module.clone());
            Ok(ModuleResult::new())
        }
    }

    fn job() -> JobSpec {
        JobSpec {
            module: "command".into(),
            args: Default::default(),
            check_mode: false,
            diff: false,
            environment: Default::default(),
            dir: "~/.ansible_async".into(),
            limit: 10,
            rlimit_nofile: None,
            python: None,
            program: None,
        }
    }

    #[test]
    fn before_the_deadline_a_job_starts_and_a_stoppable_module_gets_what_is_left() {
        let inner = Answering::default();
        let link = Bounded { inner: &inner, deadline: Instant::now() + Duration::from_secs(30) };
        link.start_job(&job()).unwrap();
        assert_eq!(*inner.jobs.lock().unwrap(), ["command"]);
        let long = Invocation { timeout: Some(100), ..Invocation::default() };
        link.run_module("ansible.builtin.command", &long).unwrap();
        link.run_module("stat", &long).unwrap();
        let timeouts = inner.timeouts.lock().unwrap().clone();
        assert!(matches!(timeouts[0], Some(30 | 29)), "{timeouts:?}");
        assert_eq!(timeouts[1], Some(100));
    }

    #[test]
    fn after_the_deadline_nothing_starts_on_the_host() {
        let inner = Answering::default();
        let link = Bounded { inner: &inner, deadline: Instant::now() };
        let ran_out = |r: Result<ModuleResult, ConnectionError>| matches!(r, Err(ConnectionError::Exec(m)) if m == "the task's timeout ran out");
        assert!(ran_out(link.start_job(&job())));
        assert!(ran_out(link.run_module("command", &Invocation::default())));
        assert!(link.exec_command("true", Path::new("/")).is_err());
        assert!(link.connect().is_ok());
        assert!(inner.jobs.lock().unwrap().is_empty());
        assert!(inner.timeouts.lock().unwrap().is_empty());
    }
}
