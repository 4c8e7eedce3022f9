//! The link to one host ([`Connection`]) every other module of this crate implements or
//! wraps, what a command run over it gives back, and its typed errors.

use std::path::Path;
use tack_agent::python::{PythonOutput, PythonRun};

use tack_agent::{Invocation, ModuleResult};

use crate::{SshError, StagedFile};
use tack_protocol::JobSpec;

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
        /// The command's exit code, when it exited by itself.
        code: Option<i32>,
    },
    /// The host could not be reached over SSH (ssh exited 255, or ended before the agent's
    /// hello), in ansible's words: `Failed to connect to the host via ssh: <ssh's stderr>`.
    /// ansible's `AnsibleConnectionFailure`: the host is `UNREACHABLE!`.
    #[error("{message}")]
    Unreachable { message: String },
    /// No `ssh` command line could be made for the host.
    #[error(transparent)]
    Ssh(#[from] SshError),
    /// The controller has no agent to upload, or the one it has cannot run on the host.
    #[error("{0}")]
    AgentImage(String),
    /// The host was reached, but checking or installing its agent failed.
    #[error("could not install the agent on the host ({step}): {message}")]
    Install { step: &'static str, message: String },
    /// Privilege escalation failed before the become user's shell ran (`Missing sudo
    /// password`, `Incorrect sudo password`, or what the become program said). The task
    /// fails; the host stays reachable.
    #[error("{message}")]
    Become { message: String, code: Option<i32>, stderr: String },
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
    /// A connection plugin written in Python could not be loaded or raised an error (not a
    /// connection failure, which is [`ConnectionError::Unreachable`]): its own words.
    #[error("{0}")]
    Plugin(String),
    /// A file could not be staged on the host, or removed from its staging (the message
    /// says which and why).
    #[error("{0}")]
    Stage(String),
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

/// A link to one host. A link that wraps another implements [`Decorator`](crate::Decorator) instead, which
/// forwards every method: a method added here is added to `decorate`'s forwarding too.
pub trait Connection: Send + Sync {
    /// Opens the link if it is not open (a connection that needs none does nothing): what
    /// fails here with [`ConnectionError::Unreachable`] makes the host unreachable, before
    /// the task has done anything there.
    fn connect(&self) -> Result<(), ConnectionError> {
        Ok(())
    }

    /// Whether [`Connection::connect`] has been tried: `false` only for a link opened on
    /// first use that has not been used yet (the run opens those ahead of the task's
    /// workers).
    fn is_open(&self) -> bool {
        true
    }

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

    /// Puts `bytes` in this link's private staging on the host, for one sub-task: `name` is
    /// the name the controller would give the file (a connection may choose its own), and an
    /// `executable` file is runnable by its owner. Over an agent's link, a file larger than
    /// [`STAGE_LIMIT`](crate::STAGE_LIMIT) is refused before anything is sent.
    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError>;

    /// Writes `bytes` as the file `path` on the host (in a directory the caller made
    /// private), created as the host's shell creates files and then made readable, writable
    /// and (when `executable`) runnable by its owner, as ansible's put and `chmod u+rwx`
    /// leave a file: one ansible leaves where the user finds it (`keep_remote_files`' module
    /// files). Staged, copied into place by the host's shell, then unstaged, unless a
    /// connection can do better.
    fn place(&self, bytes: &[u8], path: &str, executable: bool) -> Result<(), ConnectionError> {
        let name = Path::new(path).file_name().map_or("file".into(), |n| n.to_string_lossy());
        let staged = self.stage(bytes, &name, false)?;
        let quoted = tack_py::shlex::quote(path);
        let mode = if executable { "u+rwx" } else { "u+rw" };
        let cmd = format!(
            "cat {} > {quoted} && chmod {mode} {quoted}",
            tack_py::shlex::quote(staged.path())
        );
        let copied = self.exec_command(&cmd, Path::new("/"));
        // The staged copy goes whatever became of the copy.
        let unstaged = self.unstage(staged);
        let out = copied?;
        if out.rc != 0 {
            return Err(ConnectionError::Exec(format!(
                "could not write {path} on the host: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        unstaged
    }

    /// The largest file [`Connection::stage`] takes, when it has a limit: an action asks
    /// before it reads a file it could not send.
    fn stage_limit(&self) -> Option<usize> {
        None
    }

    /// Removes a staged file (one the module consumed is fine): the sub-task has ended.
    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError>;

    /// Starts `job` as a detached `async` job on the host (`tack_agent::jobs`): what the job
    /// said once its module started, or why it could not start.
    fn start_job(&self, job: &JobSpec) -> Result<ModuleResult, ConnectionError> {
        let _ = job;
        Err(ConnectionError::Exec("this connection cannot start async jobs".into()))
    }

    /// The lines the connection has to show since the last call ([`Notes`](crate::Notes)): `-vv`'s
    /// `ssh_retry` among them.
    fn take_notes(&self) -> Vec<(u8, String)> {
        Vec::new()
    }

    /// The home directory of the user the link runs as on the host, for a `~` in a path the
    /// controller must name there: ansible's `_remote_expand_user` asks the shell for
    /// `~<user>`, the password database's home, whatever the session's `$HOME` says.
    fn home(&self) -> Result<String, ConnectionError> {
        let out = self.exec_command("eval echo \"~$(id -un)\"", Path::new("/"))?;
        let home = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.rc != 0 || home.is_empty() {
            return Err(ConnectionError::Exec(format!(
                "the host did not say its home directory (echo ~user exited {})",
                out.rc
            )));
        }
        Ok(home)
    }
}
