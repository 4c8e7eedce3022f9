//! How the controller reaches a host (DESIGN.md layer 5): a [`Connection`] runs a module or a
//! command there and returns what came back. [`ChildAgent`] runs a `tack-agent` process with
//! `tack_protocol` frames over its stdin/stdout; the SSH connection runs the same agent at the
//! far end of an `ssh` process. (The engine's in-process `local` connection implements the
//! same trait.)
//!
//! A connection carries arguments and results; it never decides anything about the task, and
//! it knows nothing of playbooks, variables or output.

mod child;
mod in_process;

pub use child::ChildAgent;
pub use in_process::InProcess;

use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};

/// Why a module or command could not be run on a host.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error("tack has no native module '{0}'")]
    NoSuchModule(String),
    #[error("could not run the command on the host: {0}")]
    Exec(String),
    /// A Python-path module could not be run (see `tack_agent::python`).
    #[error("could not run the module through ansible-core's Python code: {0}")]
    Python(String),
    #[error("could not start the agent {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the agent {program} did not answer hello: {source}{stderr}", stderr = said(stderr))]
    Hello {
        program: String,
        #[source]
        source: tack_protocol::ProtocolError,
        stderr: String,
    },
    /// The agent's process ended (or closed its link) while a request was in flight.
    #[error("the agent (pid {pid}) died while {during}: {how}{stderr}", stderr = said(stderr))]
    AgentDied { pid: u32, during: String, how: String, stderr: String },
    /// The agent sent something that is not the protocol; the link is closed.
    #[error("the agent (pid {pid}) broke the protocol while {during}: {source}")]
    Protocol {
        pid: u32,
        during: String,
        #[source]
        source: tack_protocol::ProtocolError,
    },
    /// The agent answered the request with an error (a module that panicked, a result over
    /// the frame limit); the link stays open.
    #[error("the agent could not answer while {during}: {message}")]
    Agent { during: String, kind: tack_protocol::ErrorKind, message: String },
}

/// The tail of an agent's stderr, as a clause of an error message.
fn said(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!("; its stderr ended with: {stderr}") }
}

/// What a command run through the host's shell gave back (`exec_command`).
#[derive(Debug, Clone, PartialEq, Eq)]
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

    /// Runs a module through ansible-core's own code from the payload `run.hash` names,
    /// whose bytes are `payload` (sent to the host once per link, before its first run).
    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        let _ = (payload, run);
        Err(ConnectionError::Python("this connection does not carry the Python path".into()))
    }
}
