//! The agent's side of a link: answers the controller's hello, then runs each request it is
//! sent (a native module through [`crate::run_module`], a command through [`crate::shell`],
//! a file to stage or unstage through [`crate::stage`]) and replies, until `bye` or the end
//! of the stream, when the link's staging directory is removed.
//!
//! Owns the order of the conversation on the agent's side; the bytes are `tack_protocol`'s,
//! and where the streams come from (a process's own stdin/stdout) is the binary's.

use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use tack_protocol::{
    AgentInfo, ErrorKind, FrameReader, FrameWriter, Message, PROTOCOL_VERSION, ProtocolError,
    RunModule, RunPython, Stage as StageRequest,
};

use crate::python::{PythonError, PythonHost, PythonRun};
use crate::stage::Stage;
use crate::{Invocation, run_module, shell};

/// Why the agent stopped before `bye` or a clean end of stream.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    #[error("the controller sent {0} where only hello may come first")]
    NoHello(&'static str),
    #[error("the controller sent {0}, which is not a request")]
    NotARequest(&'static str),
}

/// Serves one link until `bye` or the end of the stream, staging nothing. A broken stream is
/// answered with one `error` message (when it can still be written) before the error is
/// returned.
pub fn serve<R: Read, W: Write>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
) -> Result<(), ServeError> {
    serve_staging(reader, writer, &mut Stage::new(None))
}

/// [`serve`], staging files in `stage`; its directory is removed when the link ends, however
/// it ends.
pub fn serve_staging<R: Read, W: Write>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
    stage: &mut Stage,
) -> Result<(), ServeError> {
    serve_link(reader, writer, stage, None)
}

/// [`serve_staging`], telling the controller at hello where this host's listener is
/// (`tack_agent::listen`), when there is one.
pub fn serve_link<R: Read, W: Write>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
    stage: &mut Stage,
    listen: Option<String>,
) -> Result<(), ServeError> {
    let outcome = converse(reader, writer, stage, listen);
    stage.close();
    if let Err(e) = &outcome {
        let message =
            Message::Error { id: None, kind: ErrorKind::Protocol, message: e.to_string() };
        // The stream may be what broke; the error is returned either way.
        let _ = writer.send(&message);
    }
    outcome
}

fn converse<R: Read, W: Write>(
    reader: &mut FrameReader<R>,
    writer: &mut FrameWriter<W>,
    stage: &mut Stage,
    listen: Option<String>,
) -> Result<(), ServeError> {
    match reader.recv_message()? {
        None => return Ok(()),
        Some(Message::Hello { protocol, max_frame }) => {
            // Ready goes out even on a mismatch, so the controller can name both versions.
            let info = AgentInfo { listen, ..AgentInfo::this_process(env!("CARGO_PKG_VERSION")) };
            writer.send(&Message::Ready(info))?;
            if protocol != PROTOCOL_VERSION {
                return Err(ProtocolError::VersionMismatch {
                    ours: PROTOCOL_VERSION,
                    theirs: protocol,
                }
                .into());
            }
            writer.set_limit(max_frame);
        }
        Some(other) => return Err(ServeError::NoHello(other.name())),
    }
    // The link's payloads and warm Python servers, ended with it.
    let mut python = PythonHost::new();
    // Why a payload sent without a reply could not be stored, told to the run that needs it.
    let mut unstored: std::collections::HashMap<String, PythonError> = Default::default();
    loop {
        match reader.recv_message()? {
            None | Some(Message::Bye) => return Ok(()),
            Some(Message::PutPayload { hash }) => {
                let bytes = reader.recv_blob()?;
                if let Err(e) = python.put_payload(&hash, &bytes) {
                    unstored.insert(hash, e);
                }
            }
            Some(Message::RunPython(request)) => {
                let reply = python_reply(&mut python, &mut unstored, request);
                send_or_refuse(writer, &reply)?;
            }
            Some(Message::RunModule(request)) => {
                let reply = module_reply(request);
                send_or_refuse(writer, &reply)?;
            }
            Some(Message::ExecCommand { id, cmd, cwd }) => exec(writer, id, &cmd, &cwd)?,
            Some(Message::StartJob(request)) => {
                let result = match std::env::current_exe() {
                    Ok(exe) => crate::jobs::start(&exe, &request.job),
                    Err(e) => {
                        let mut failed = serde_json::Map::new();
                        failed.insert("failed".into(), true.into());
                        failed.insert("msg".into(), format!("FATAL ERROR: {e}").into());
                        failed
                    }
                };
                send_or_refuse(writer, &Message::ModuleResult { id: request.id, result })?;
            }
            Some(Message::Stage(request)) => {
                let bytes = reader.recv_blob()?;
                writer.send(&put(stage, request, &bytes))?;
            }
            Some(Message::Unstage { id, path }) => {
                let reply = match stage.remove(&path) {
                    Ok(()) => Message::Unstaged { id },
                    Err(e) => stage_error(id, &e),
                };
                writer.send(&reply)?;
            }
            Some(other) => return Err(ServeError::NotARequest(other.name())),
        }
    }
}

fn module_reply(request: RunModule) -> Message {
    let RunModule { id, module, args, check_mode, diff, environment, timeout, rlimit_nofile } =
        request;
    let invocation = Invocation { args, check_mode, diff, environment, timeout, rlimit_nofile };
    // A module's bug fails its task, not the link: the panic's message has already gone to
    // stderr through the panic hook.
    match catch_unwind(AssertUnwindSafe(|| run_module(&module, &invocation))) {
        Ok(Some(result)) => Message::ModuleResult { id, result },
        Ok(None) => Message::Error {
            id: Some(id),
            kind: ErrorKind::NoSuchModule,
            message: format!("tack has no native module '{module}'"),
        },
        Err(_) => Message::Error {
            id: Some(id),
            kind: ErrorKind::Panicked,
            message: format!("the agent's module '{module}' panicked (see the agent's stderr)"),
        },
    }
}

fn python_reply(
    python: &mut PythonHost,
    unstored: &mut std::collections::HashMap<String, PythonError>,
    request: RunPython,
) -> Message {
    let RunPython { id, hash, fqn, profile, interpreter, params, environment, rlimit_nofile } =
        request;
    let outcome = match unstored.remove(&hash) {
        Some(e) => Err(e),
        None => python.run(&PythonRun {
            hash,
            fqn,
            profile,
            interpreter,
            params,
            environment,
            rlimit_nofile,
        }),
    };
    match outcome {
        Ok(out) => Message::PythonResult {
            id,
            rc: out.rc,
            stdout: out.stdout,
            stderr: out.stderr,
            tag: out.tag,
        },
        Err(e) => Message::Error { id: Some(id), kind: ErrorKind::Python, message: e.to_string() },
    }
}

fn put(stage: &mut Stage, request: StageRequest, bytes: &[u8]) -> Message {
    let StageRequest { id, host, hash, len, executable } = request;
    if bytes.len() as u64 != len {
        let message = format!("the blob is {} bytes where {len} were announced", bytes.len());
        return Message::Error { id: Some(id), kind: ErrorKind::Stage, message };
    }
    match stage.put(&host, &hash, bytes, executable) {
        Ok(path) => match path.into_os_string().into_string() {
            Ok(path) => Message::Staged { id, path },
            Err(path) => {
                let _ = std::fs::remove_file(&path);
                let message = "the staging path is not UTF-8".to_string();
                Message::Error { id: Some(id), kind: ErrorKind::Stage, message }
            }
        },
        Err(e) => stage_error(id, &e),
    }
}

fn stage_error(id: u64, e: &crate::stage::StageError) -> Message {
    Message::Error { id: Some(id), kind: ErrorKind::Stage, message: e.to_string() }
}

/// Sends `reply`, or in its place the `oversize` error for its request when it is over the
/// controller's frame limit.
fn send_or_refuse<W: Write>(
    writer: &mut FrameWriter<W>,
    reply: &Message,
) -> Result<(), ProtocolError> {
    match writer.send(reply) {
        Err(ProtocolError::Oversize { len, limit }) => {
            let id = match reply {
                Message::ModuleResult { id, .. } | Message::PythonResult { id, .. } => Some(*id),
                _ => None,
            };
            writer.send(&Message::Error {
                id,
                kind: ErrorKind::Oversize,
                message: format!(
                    "the result is {len} bytes, over the controller's frame limit of {limit}"
                ),
            })
        }
        other => other,
    }
}

fn exec<W: Write>(
    writer: &mut FrameWriter<W>,
    id: u64,
    cmd: &str,
    cwd: &str,
) -> Result<(), ProtocolError> {
    let out = match shell::run(cmd, Path::new(cwd)) {
        Ok(out) => out,
        Err(e) => {
            let message = format!("could not run the command: {e}");
            return writer.send(&Message::Error { id: Some(id), kind: ErrorKind::Exec, message });
        }
    };
    let limit = writer.limit() as usize;
    if let Some(len) = [out.stdout.len(), out.stderr.len()].into_iter().find(|l| *l > limit) {
        let message = format!(
            "the command's output is {len} bytes, over the controller's frame limit of {limit}"
        );
        return writer.send(&Message::Error { id: Some(id), kind: ErrorKind::Oversize, message });
    }
    writer.send(&Message::ExecResult { id, rc: out.rc })?;
    writer.send_blob(&out.stdout)?;
    writer.send_blob(&out.stderr)
}

#[cfg(test)]
#[path = "serve_tests.rs"]
mod tests;
