//! An agent's whole conversation written before it starts, and its answers read after it
//! ended: how a link that can only run a command with its standard input given at once (a
//! connection plugin written in Python: `exec_command(cmd, in_data)`) runs tack's modules.
//! The agent runs as `tack-agent --batch` (which does not take the input's end for the
//! controller gone), one process per request.
//!
//! Owns the bytes of one request's conversation and the reading of its reply; where the
//! agent is and how the command runs are the link's.

use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};
use tack_protocol::{
    ErrorKind, FrameReader, FrameWriter, Message, PROTOCOL_VERSION, ProtocolError, RunModule,
    RunPython,
};

use crate::ConnectionError;

/// The argument that makes the agent serve a conversation written in advance.
pub const BATCH_ARG: &str = "--batch";

/// The one request of a conversation's.
const ID: u64 = 1;

/// The input of an agent that runs `module` with `invocation`: hello, the request, bye.
pub fn module_input(module: &str, invocation: &Invocation) -> Result<Vec<u8>, ConnectionError> {
    conversation(|writer| writer.send(&Message::RunModule(run_module(ID, module, invocation))))
}

/// The module's result from what the agent of [`module_input`] wrote.
pub fn module_output(stdout: &[u8], stderr: &[u8]) -> Result<ModuleResult, ConnectionError> {
    match reply(stdout, stderr)? {
        Message::ModuleResult { result, .. } => Ok(result),
        other => Err(broken("module_result", &other)),
    }
}

/// The input of an agent that starts `job` detached (an `async` task), its answer read by
/// [`module_output`].
pub fn job_input(job: &tack_protocol::JobSpec) -> Result<Vec<u8>, ConnectionError> {
    conversation(|writer| {
        writer.send(&Message::StartJob(tack_protocol::StartJob { id: ID, job: job.clone() }))
    })
}

/// The input of an agent that runs the Python-path module `run` from `payload`.
pub fn python_input(payload: &[u8], run: &PythonRun) -> Result<Vec<u8>, ConnectionError> {
    conversation(|writer| {
        writer.send(&Message::PutPayload { hash: run.hash.clone() })?;
        writer.send_blob(payload)?;
        writer.send(&Message::RunPython(run_python(ID, run)))
    })
}

/// What the module of [`python_input`] left.
pub fn python_output(stdout: &[u8], stderr: &[u8]) -> Result<PythonOutput, ConnectionError> {
    match reply(stdout, stderr)? {
        Message::PythonResult { rc, stdout, stderr, tag, .. } => {
            Ok(PythonOutput { rc, stdout, stderr, tag })
        }
        other => Err(broken("python_result", &other)),
    }
}

/// The request that runs `module` with `invocation` (every link's).
pub(crate) fn run_module(id: u64, module: &str, invocation: &Invocation) -> RunModule {
    RunModule {
        id,
        module: module.to_string(),
        args: invocation.args.clone(),
        check_mode: invocation.check_mode,
        diff: invocation.diff,
        environment: invocation.environment.clone(),
        rlimit_nofile: invocation.rlimit_nofile,
        timeout: invocation.timeout,
    }
}

/// The request that runs the Python-path module `run` (every link's).
pub(crate) fn run_python(id: u64, run: &PythonRun) -> RunPython {
    RunPython {
        id,
        hash: run.hash.clone(),
        fqn: run.fqn.clone(),
        profile: run.profile.clone(),
        interpreter: run.interpreter.clone(),
        params: run.params.clone(),
        environment: run.environment.clone(),
        rlimit_nofile: run.rlimit_nofile,
    }
}

fn conversation(
    request: impl FnOnce(&mut FrameWriter<Vec<u8>>) -> Result<(), ProtocolError>,
) -> Result<Vec<u8>, ConnectionError> {
    let mut writer = FrameWriter::new(Vec::new());
    let written = (|| {
        writer.send(&Message::Hello {
            protocol: PROTOCOL_VERSION,
            max_frame: tack_protocol::DEFAULT_MAX_FRAME,
        })?;
        request(&mut writer)?;
        writer.send(&Message::Bye)
    })();
    written
        .map_err(|e| ConnectionError::Exec(format!("the agent's request cannot be sent: {e}")))?;
    Ok(writer.into_inner())
}

/// The agent's reply to the conversation's request, after its `Ready`.
fn reply(stdout: &[u8], stderr: &[u8]) -> Result<Message, ConnectionError> {
    let mut reader = FrameReader::new(stdout);
    let died = |how: String| ConnectionError::AgentDied {
        pid: 0,
        during: "answering a request written in advance".into(),
        how,
        stderr: tail(stderr),
    };
    let broke = |source: ProtocolError| ConnectionError::Protocol {
        pid: 0,
        during: "answering a request written in advance".into(),
        source,
    };
    match reader.recv_message().map_err(broke)? {
        Some(Message::Ready(info)) if info.protocol == PROTOCOL_VERSION => {}
        Some(Message::Ready(info)) => {
            return Err(broke(ProtocolError::VersionMismatch {
                ours: PROTOCOL_VERSION,
                theirs: info.protocol,
            }));
        }
        Some(other) => return Err(broken("ready", &other)),
        None => return Err(died("it wrote nothing".into())),
    }
    match reader.recv_message().map_err(broke)? {
        None => Err(died("it ended before it answered".into())),
        Some(Message::Error { id: Some(ID), kind, message }) => Err(match kind {
            ErrorKind::NoSuchModule => ConnectionError::NoSuchModule(message),
            ErrorKind::Exec => ConnectionError::Exec(message),
            ErrorKind::Python => ConnectionError::Python(message),
            ErrorKind::Stage => ConnectionError::Stage(message),
            kind => ConnectionError::Agent { during: String::new(), kind, message },
        }),
        Some(Message::Error { message, .. }) => Err(died(format!("it gave up: {message}"))),
        Some(message) => Ok(message),
    }
}

fn broken(expected: &'static str, got: &Message) -> ConnectionError {
    ConnectionError::Protocol {
        pid: 0,
        during: "answering a request written in advance".into(),
        source: ProtocolError::Unexpected { expected, got: got.name().to_string() },
    }
}

/// The last lines of what the agent's command said on its stderr.
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The agent's own serving loop answers a conversation written in advance.
    #[test]
    fn an_agent_answers_a_conversation_written_in_advance() {
        let mut invocation = Invocation::default();
        invocation.args.insert("data".into(), serde_json::json!("pong"));
        let input = module_input("ping", &invocation).expect("input");
        let mut reader = FrameReader::new(input.as_slice());
        let mut writer = FrameWriter::new(Vec::new());
        let dir = tempfile::tempdir().expect("tempdir");
        let mut stage = tack_agent::stage::Stage::new(Some(dir.path().to_path_buf()));
        tack_agent::serve::serve_link(&mut reader, &mut writer, &mut stage, None).expect("served");
        let result = module_output(&writer.into_inner(), b"").expect("result");
        assert_eq!(result.get("ping"), Some(&serde_json::json!("pong")));
    }

    #[test]
    fn an_agent_that_wrote_nothing_died() {
        let e = module_output(b"", b"line 1\nexec format error\n").unwrap_err().to_string();
        assert!(e.contains("it wrote nothing") && e.contains("exec format error"), "{e}");
    }
}
