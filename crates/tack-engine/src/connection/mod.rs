//! How a task reaches a host: a [`Connection`] runs a module there and returns its result.
//! `local` runs tack's native modules in this process; the SSH connection and the uploaded
//! agent (issue 5) implement the same trait.
//!
//! A connection carries arguments and results; it never decides anything about the task.

use tack_agent::{Invocation, ModuleResult};

/// Why a module could not be run on a host (the host is then unreachable, not failed).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectionError {
    #[error("tack has no native module '{0}'")]
    NoSuchModule(String),
    #[error("could not run the command on the host: {0}")]
    Exec(String),
}

/// What a command run through the host's shell gave back (`exec_command`).
#[derive(Debug, Clone)]
pub struct ExecOutput {
    pub rc: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// A link to one host.
pub trait Connection: Send + Sync {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError>;

    /// Runs `cmd` through the host's `/bin/sh -c`, in `cwd`, with nothing on its standard
    /// input (what `raw` and `script` run, and the shell tests action plugins make).
    fn exec_command(&self, cmd: &str, cwd: &std::path::Path)
    -> Result<ExecOutput, ConnectionError>;
}

/// The `local` connection: the controller itself is the host.
pub struct Local;

impl Connection for Local {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        tack_agent::run_module(module, invocation)
            .ok_or_else(|| ConnectionError::NoSuchModule(module.to_string()))
    }

    fn exec_command(
        &self,
        cmd: &str,
        cwd: &std::path::Path,
    ) -> Result<ExecOutput, ConnectionError> {
        let mut command = std::process::Command::new("/bin/sh");
        command.arg("-c").arg(cmd).stdin(std::process::Stdio::null());
        // ansible's local connection runs in the play's directory; one that is gone leaves
        // the controller's own.
        if cwd.is_dir() {
            command.current_dir(cwd);
        }
        let out = command.output().map_err(|e| ConnectionError::Exec(e.to_string()))?;
        let rc = out.status.code().unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            -out.status.signal().unwrap_or(0)
        });
        Ok(ExecOutput { rc, stdout: out.stdout, stderr: out.stderr })
    }
}
