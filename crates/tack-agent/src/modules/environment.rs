//! A task's `environment` as a module sees it: the variables the controller rendered, over
//! the agent's own environment. Modules never set the agent's process environment (that would
//! leak into every later task); they read through [`TaskEnv`] and hand the variables to the
//! child processes they spawn ([`TaskEnv::apply`]).

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
