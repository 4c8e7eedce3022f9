//! The messages of a link and the hello that opens it.
//!
//! Owns what each side may say and in which order; how the bytes travel is `frame`'s, and
//! what a module does with its arguments is the agent's.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ProtocolError;
use crate::frame::{FrameReader, FrameWriter};

/// Bumped whenever a message changes shape; both sides must speak the same one.
pub const PROTOCOL_VERSION: u32 = 6;

/// Everything either side says. Requests carry an `id` the reply repeats, so a reply that
/// belongs to another request is caught rather than taken for this one's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Message {
    /// Controller → agent, the first frame of a link: the controller's protocol version and
    /// the largest frame it will read (the agent's writer keeps under it).
    Hello { protocol: u32, max_frame: u32 },
    /// Agent → controller, the answer to `Hello`.
    Ready(AgentInfo),
    /// Controller → agent: run one native module.
    RunModule(RunModule),
    /// Controller → agent: run `cmd` with `/bin/sh -c` in `cwd` (the controller's own
    /// directory when `cwd` is not one), nothing on its standard input.
    ExecCommand { id: u64, cmd: String, cwd: String },
    /// Agent → controller: the module's result dictionary.
    ModuleResult { id: u64, result: Map<String, Value> },
    /// Agent → controller: the command's exit code (minus the signal number when a signal
    /// ended it), followed by two blob frames: its stdout, then its stderr.
    ExecResult { id: u64, rc: i32 },
    /// Either side: a request could not be answered (`id` names it), or the stream itself is
    /// wrong (`id` is `None`, and the sender closes the link after it).
    Error { id: Option<u64>, kind: ErrorKind, message: String },
    /// Controller → agent: the link is done; the agent exits without a reply.
    Bye,
    /// Controller → agent: a Python-path payload named by the BLAKE3 hash of its bytes,
    /// which follow as one blob frame; sent once per link, with no reply (a payload that
    /// could not be stored fails the `run_python` that needs it).
    PutPayload { hash: String },
    /// Controller → agent: run a module from a payload sent earlier on this link.
    RunPython(RunPython),
    /// Agent → controller: what the module's process left, and the host interpreter's
    /// bytecode tag (`cpython-311`: which compiled code it can use; empty when unknown).
    PythonResult {
        id: u64,
        rc: i32,
        stdout: String,
        stderr: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        tag: String,
    },
    /// Controller → agent: keep the blob frame that follows (`len` bytes, whose BLAKE3 hash
    /// is `hash`, hex) in this link's staging directory for `host`, executable by its owner
    /// when `executable`.
    Stage(Stage),
    /// Agent → controller: the blob is at `path`, a name of the agent's choosing.
    Staged { id: u64, path: String },
    /// Controller → agent: remove the staged file at `path` (one this link staged; gone
    /// already is fine).
    Unstage { id: u64, path: String },
    /// Agent → controller: the answer to `Unstage`.
    Unstaged { id: u64 },
    /// Controller → agent: start a module as a detached `async` job (ansible's
    /// `async_wrapper`); the reply is a `ModuleResult` with what the job said once its module
    /// started (`started`, `ansible_job_id`, `results_file`), or why it could not.
    StartJob(StartJob),
}

impl Message {
    /// The message's name on the wire, for errors that say what arrived instead.
    pub fn name(&self) -> &'static str {
        match self {
            Message::Hello { .. } => "hello",
            Message::Ready(_) => "ready",
            Message::RunModule(_) => "run_module",
            Message::ExecCommand { .. } => "exec_command",
            Message::ModuleResult { .. } => "module_result",
            Message::ExecResult { .. } => "exec_result",
            Message::Error { .. } => "error",
            Message::Bye => "bye",
            Message::PutPayload { .. } => "put_payload",
            Message::RunPython(_) => "run_python",
            Message::PythonResult { .. } => "python_result",
            Message::Stage(_) => "stage",
            Message::Staged { .. } => "staged",
            Message::Unstage { .. } => "unstage",
            Message::Unstaged { .. } => "unstaged",
            Message::StartJob(_) => "start_job",
        }
    }
}

/// What an agent says about itself at hello.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub protocol: u32,
    /// The agent's package version (what a cached agent is compared by).
    pub version: String,
    /// `std::env::consts::ARCH` of the agent's build (`x86_64`, `aarch64`).
    pub arch: String,
    /// `std::env::consts::OS` of the agent's build.
    pub os: String,
    pub pid: u32,
    /// The socket of this host's listener (`tack_agent::listen`), when the link asked for
    /// one and it is there: where the controller points its ControlMaster's forward so that
    /// the next link reaches an agent without starting a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
}

impl AgentInfo {
    /// This process, as an agent describes itself.
    pub fn this_process(version: &str) -> Self {
        AgentInfo {
            protocol: PROTOCOL_VERSION,
            version: version.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            os: std::env::consts::OS.to_string(),
            pid: std::process::id(),
            listen: None,
        }
    }
}

/// One module run, as the agent's `Invocation` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunModule {
    pub id: u64,
    pub module: String,
    pub args: Map<String, Value>,
    #[serde(default)]
    pub check_mode: bool,
    #[serde(default)]
    pub diff: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub environment: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// ansible's `python_module_rlimit_nofile`: the open-files soft limit of the processes
    /// the module starts (never above the hard limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rlimit_nofile: Option<u64>,
}

/// A request to start an `async` job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartJob {
    pub id: u64,
    pub job: JobSpec,
}

/// What an `async` job runs: one native module, a module through the Python path
/// (`python`) or a program module (`program`), for at most `limit` seconds, its job file kept under `dir` (`~` is the job's
/// `$HOME`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub module: String,
    pub args: Map<String, Value>,
    #[serde(default)]
    pub check_mode: bool,
    #[serde(default)]
    pub diff: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub environment: BTreeMap<String, String>,
    pub dir: String,
    pub limit: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<Box<PythonJob>>,
    /// A `library/` module that is a program of its own (ansible's old-style, `WANT_JSON`
    /// and binary modules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<Box<ProgramJob>>,
    /// The module's open-files soft limit (see [`RunModule::rlimit_nofile`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rlimit_nofile: Option<u64>,
}

/// A job's module that is a program of its own: the program and its arguments file (both
/// staged on the host, copied by the job before it answers, so the link may remove them),
/// run as `<interpreter> <program> <arguments file>` through `/bin/sh` (the interpreter
/// with the arguments its `#!` line gives; none for a program run as it is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramJob {
    pub program: String,
    pub arguments: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<String>,
}

/// A job's module run through the Python path: its payload (a file staged on the host,
/// which the job copies before it answers, so the link may remove it), the module's import
/// name and serialization profile, the interpreter, and the module's parameters (the JSON
/// text of `{"ANSIBLE_MODULE_ARGS": {...}}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PythonJob {
    pub payload: String,
    pub fqn: String,
    pub profile: String,
    pub interpreter: String,
    pub params: String,
}

/// One module run through the Python path (see `tack_agent::python::PythonRun`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPython {
    pub id: u64,
    pub hash: String,
    pub fqn: String,
    pub profile: String,
    pub interpreter: String,
    /// The JSON text of `{"ANSIBLE_MODULE_ARGS": {...}}`.
    pub params: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub environment: BTreeMap<String, String>,
    /// The module process's open-files soft limit (see [`RunModule::rlimit_nofile`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rlimit_nofile: Option<u64>,
}

/// A file sent to the host, announced before its blob frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub id: u64,
    /// The host as the controller names it: the staging directory is `stage-<host>-<pid>`.
    pub host: String,
    pub hash: String,
    pub len: u64,
    #[serde(default)]
    pub executable: bool,
}

/// Why a request was not answered with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The agent has no native module of that name.
    NoSuchModule,
    /// The command could not be started.
    Exec,
    /// The module panicked; the agent carries on with the next request.
    Panicked,
    /// The reply would be over the controller's frame limit.
    Oversize,
    /// The stream or the order of messages is wrong; the link is closed.
    Protocol,
    /// A Python-path module could not be run (no payload, no interpreter, a dead server).
    Python,
    /// A file could not be staged or unstaged (the directory is not private, the bytes do not
    /// match their hash, the disk is full).
    Stage,
}

/// The controller's side of the handshake: sends `Hello`, reads `Ready`, and checks that the
/// agent speaks [`PROTOCOL_VERSION`]. The agent's own refusal (an `Error` reply) comes back as
/// [`ProtocolError::Unexpected`] with its message.
pub fn hello<R: Read, W: Write>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
) -> Result<AgentInfo, ProtocolError> {
    let sent =
        writer.send(&Message::Hello { protocol: PROTOCOL_VERSION, max_frame: reader.limit() });
    // A peer that exits at once (refusing, or crashing) may close its input before our hello
    // arrives: what it wrote before going is a better account than the broken pipe.
    if let Err(e) = sent
        && !matches!(e, ProtocolError::Io(_))
    {
        return Err(e);
    }
    match reader.recv_message()? {
        None => Err(ProtocolError::Closed("the agent's ready")),
        Some(Message::Ready(info)) if info.protocol == PROTOCOL_VERSION => Ok(info),
        Some(Message::Ready(info)) => {
            Err(ProtocolError::VersionMismatch { ours: PROTOCOL_VERSION, theirs: info.protocol })
        }
        Some(Message::Error { message, .. }) => {
            Err(ProtocolError::Unexpected { expected: "ready", got: format!("error: {message}") })
        }
        Some(other) => {
            Err(ProtocolError::Unexpected { expected: "ready", got: other.name().to_string() })
        }
    }
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
