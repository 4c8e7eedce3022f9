//! The wire between the controller and `tack-agent`: length-prefixed frames over any byte
//! stream (a child's pipes today, an SSH channel next), carrying JSON [`Message`]s and raw byte
//! blobs.
//!
//! A frame is one kind byte ([`FrameKind`]), a big-endian `u32` payload length, then the
//! payload: a message's JSON text, or a blob's bytes as they are (command output, staged
//! files). A link is a strict request/reply conversation: the controller sends
//! [`Message::Hello`] first and the agent answers [`Message::Ready`] with its protocol
//! version, its own version and its architecture ([`hello`] does both checks); then each
//! request gets exactly one reply carrying the same `id`, with the blobs the reply announces
//! right after it.
//!
//! Every reader has a per-stream frame limit ([`FrameReader::with_limit`]) checked before
//! anything is allocated, so garbage or a hostile peer cannot make the other side allocate
//! more than the limit; a writer can be given the peer's limit so an oversize reply is caught
//! where it is made. Every way a stream can be wrong is a [`ProtocolError`].
//!
//! This crate owns the bytes on the wire and nothing else: it knows no module, runs nothing,
//! spawns nothing, and is blocking `Read`/`Write` code with no runtime of its own so either
//! side can drive it from threads or wrap it in async I/O.

mod error;
mod frame;
mod message;

pub use error::{FramePart, ProtocolError};
pub use frame::{
    DEFAULT_MAX_FRAME, Frame, FrameKind, FrameReader, FrameWriter, HEADER_LEN, encode_message,
};
pub use message::{
    AgentInfo, ErrorKind, JobSpec, Message, PROTOCOL_VERSION, ProgramJob, PythonJob, RunModule,
    RunPython, Stage, StartJob, hello,
};
