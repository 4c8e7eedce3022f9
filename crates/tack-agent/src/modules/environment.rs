//! A task's `environment` as a module sees it: the variables the controller rendered, over
//! the agent's own environment, as ansible's module process has them in `os.environ`.
//! Modules never set the agent's process environment (that would leak into every later
//! task); while one runs, its task's variables are this thread's ([`enter`]), and the module
//! reads them through [`var`], [`temp_dir`] and [`TaskEnv`], and hands them to every child
//! process it spawns ([`command`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use tack_py::path::{Environ, ProcessEnv};

/// The agent's environment with a task's variables laid over it.
pub(super) struct TaskEnv<'a>(pub &'a BTreeMap<String, String>);

impl Environ for TaskEnv<'_> {
    fn var(&self, name: &OsStr) -> Option<OsString> {
        match name.to_str().and_then(|n| self.0.get(n)) {
            Some(value) => Some(OsString::from(value)),
            None => ProcessEnv.var(name),
        }
    }

    fn cwd(&self) -> PathBuf {
        ProcessEnv.cwd()
    }
}

impl TaskEnv<'_> {
    /// Gives the task's variables to a child process (its `PATH` also finds the program).
    pub(super) fn apply(&self, command: &mut std::process::Command) {
        command.envs(self.0);
    }
}

thread_local! {
    /// The environment of the task whose module runs on this thread.
    static CURRENT: RefCell<BTreeMap<String, String>> = const { RefCell::new(BTreeMap::new()) };
    /// The open-files soft limit that task asks for its module's processes.
    static NOFILE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Makes `env` the running module's environment, and `nofile` the open-files soft limit of
/// the processes it starts, until the guard is dropped.
pub(crate) fn enter(env: &BTreeMap<String, String>, nofile: Option<u64>) -> Entered {
    let before = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), env.clone()));
    let nofile_before = NOFILE.with(|n| n.replace(nofile));
    Entered { before, nofile_before }
}

/// Restores the environment of whatever ran before (nothing, on an agent's own thread).
pub(crate) struct Entered {
    before: BTreeMap<String, String>,
    nofile_before: Option<u64>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let before = std::mem::take(&mut self.before);
        CURRENT.with(|c| *c.borrow_mut() = before);
        NOFILE.with(|n| n.set(self.nofile_before));
    }
}

/// Gives a child process the running task's open-files soft limit, as ansible's module
/// process has it (its children inherit it): at most the hard limit, left alone when the
/// task asks for none or the limit already is that.
pub(crate) fn limit(command: &mut std::process::Command) {
    let Some(wanted) = NOFILE.with(std::cell::Cell::get).filter(|n| *n > 0) else { return };
    let wanted = libc::rlim_t::try_from(wanted).unwrap_or(libc::RLIM_INFINITY);
    // SAFETY: the closure runs in the forked child before exec and calls only getrlimit and
    // setrlimit, which are async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, move || {
            let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut current) != 0 {
                return Ok(());
            }
            let soft = wanted.min(current.rlim_max);
            if soft != current.rlim_cur {
                // ansible ignores a platform that refuses; so does this.
                let _ = libc::setrlimit(
                    libc::RLIMIT_NOFILE,
                    &libc::rlimit { rlim_cur: soft, rlim_max: current.rlim_max },
                );
            }
            Ok(())
        });
    }
}

/// The running task's variables (empty outside a module run).
pub(super) fn current() -> BTreeMap<String, String> {
    CURRENT.with(|c| c.borrow().clone())
}

/// A variable as the module's process would read it: the task's, else the agent's own.
pub(super) fn var(name: &str) -> Option<String> {
    CURRENT.with(|c| c.borrow().get(name).cloned()).or_else(|| std::env::var(name).ok())
}

/// Python's `tempfile.gettempdir()` under the task's environment: `TMPDIR`, `TEMP`, `TMP`,
/// else the system's.
pub(super) fn temp_dir() -> PathBuf {
    ["TMPDIR", "TEMP", "TMP"]
        .iter()
        .filter_map(|name| var(name))
        .map(PathBuf::from)
        .find(|dir| dir.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

/// A child process with the task's variables over the agent's environment (its `PATH` also
/// finds the program).
pub(super) fn command(program: impl AsRef<OsStr>) -> std::process::Command {
    crate::descendants::hold_if_ending();
    let mut command = std::process::Command::new(program);
    command.envs(current());
    limit(&mut command);
    crate::session::detach(&mut command);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modules_environment_lasts_while_it_runs_and_reaches_its_children() {
        let env: BTreeMap<String, String> =
            [("TACK_TASK_VAR".to_string(), "from the task".to_string())].into();
        {
            let _entered = enter(&env, None);
            assert_eq!(var("TACK_TASK_VAR").as_deref(), Some("from the task"));
            let out = command("sh").args(["-c", "printf %s \"$TACK_TASK_VAR\""]).output().unwrap();
            assert_eq!(out.stdout, b"from the task");
        }
        assert_eq!(var("TACK_TASK_VAR"), None);
    }

    #[test]
    fn the_temporary_directory_follows_tmpdir() {
        let dir = tempfile::tempdir().unwrap();
        let env: BTreeMap<String, String> =
            [("TMPDIR".to_string(), dir.path().display().to_string())].into();
        let _entered = enter(&env, None);
        assert_eq!(temp_dir(), dir.path());
    }

    #[test]
    fn a_tasks_open_files_limit_reaches_its_children_only() {
        let soft =
            |out: std::process::Output| String::from_utf8_lossy(&out.stdout).trim().to_string();
        let before = soft(command("sh").args(["-c", "ulimit -n"]).output().unwrap());
        {
            let _entered = enter(&BTreeMap::new(), Some(123));
            let out = command("sh").args(["-c", "ulimit -n"]).output().unwrap();
            assert_eq!(soft(out), "123");
        }
        assert_eq!(soft(command("sh").args(["-c", "ulimit -n"]).output().unwrap()), before);
    }
}
