//! The frame codec: [`FrameWriter`] puts messages and blobs on a stream, [`FrameReader`] takes
//! them off, each enforcing its stream's frame limit.
//!
//! Owns the header layout and the limits; what a message means is `message`'s.

use std::io::{self, Read, Write};

use crate::error::{FramePart, ProtocolError};
use crate::message::Message;

/// Kind byte plus big-endian `u32` length.
pub const HEADER_LEN: usize = 5;

/// The frame limit a stream gets unless told otherwise: room for a module result several
/// times the size of a full `setup` run, far below what would hurt a host to allocate.
pub const DEFAULT_MAX_FRAME: u32 = 64 << 20;

/// What a frame's payload is. The values are control characters so that text printed onto a
/// stream by mistake (a shell's banner, a stray `echo`) is caught at its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    /// A [`Message`] as JSON text.
    Message = 0x01,
    /// Raw bytes, announced by the message before them.
    Blob = 0x02,
}

impl FrameKind {
    fn from_byte(b: u8) -> Result<Self, ProtocolError> {
        match b {
            0x01 => Ok(FrameKind::Message),
            0x02 => Ok(FrameKind::Blob),
            other => Err(ProtocolError::UnknownKind(other)),
        }
    }
}

/// One frame as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Message(Message),
    Blob(Vec<u8>),
}

impl Frame {
    /// How a frame is named in an [`ProtocolError::Unexpected`].
    pub fn describe(&self) -> String {
        match self {
            Frame::Message(m) => m.name().to_string(),
            Frame::Blob(b) => format!("a blob of {} bytes", b.len()),
        }
    }
}

/// Writes frames to `W`, one `write_all` per message frame, flushed after every frame (the
/// peer is waiting for it).
pub struct FrameWriter<W> {
    inner: W,
    limit: u32,
    buf: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(inner: W) -> Self {
        Self::with_limit(inner, DEFAULT_MAX_FRAME)
    }

    /// A writer that refuses frames over `limit` (the peer's, learnt at hello) rather than
    /// sending what the peer would refuse.
    pub fn with_limit(inner: W, limit: u32) -> Self {
        FrameWriter { inner, limit, buf: Vec::with_capacity(4096) }
    }

    pub fn set_limit(&mut self, limit: u32) {
        self.limit = limit;
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    pub fn send(&mut self, message: &Message) -> Result<(), ProtocolError> {
        encode_message(message, &mut self.buf, self.limit)?;
        self.inner.write_all(&self.buf)?;
        self.inner.flush()?;
        Ok(())
    }

    pub fn send_blob(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        let header = header(FrameKind::Blob, bytes.len(), self.limit)?;
        // Two writes rather than a copy of a possibly large blob into the buffer.
        self.inner.write_all(&header)?;
        self.inner.write_all(bytes)?;
        self.inner.flush()?;
        Ok(())
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

/// Encodes `message` as one whole frame into `out` (cleared first).
pub fn encode_message(
    message: &Message,
    out: &mut Vec<u8>,
    limit: u32,
) -> Result<(), ProtocolError> {
    out.clear();
    out.extend_from_slice(&[0; HEADER_LEN]);
    serde_json::to_writer(&mut *out, message).map_err(ProtocolError::BadMessage)?;
    let head = header(FrameKind::Message, out.len() - HEADER_LEN, limit)?;
    out[..HEADER_LEN].copy_from_slice(&head);
    Ok(())
}

fn header(kind: FrameKind, len: usize, limit: u32) -> Result<[u8; HEADER_LEN], ProtocolError> {
    let len32 = u32::try_from(len)
        .ok()
        .filter(|l| *l <= limit)
        .ok_or(ProtocolError::Oversize { len: len as u64, limit })?;
    let mut h = [0; HEADER_LEN];
    h[0] = kind as u8;
    h[1..].copy_from_slice(&len32.to_be_bytes());
    Ok(h)
}

/// Reads frames from `R`. Wrap an unbuffered stream (a pipe) in a `BufReader`: a frame is
/// read as a header then a payload.
pub struct FrameReader<R> {
    inner: R,
    limit: u32,
    buf: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, DEFAULT_MAX_FRAME)
    }

    pub fn with_limit(inner: R, limit: u32) -> Self {
        FrameReader { inner, limit, buf: Vec::new() }
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// The next frame; `None` when the stream ends cleanly between frames.
    pub fn recv(&mut self) -> Result<Option<Frame>, ProtocolError> {
        let Some(kind) = self.read_payload()? else {
            return Ok(None);
        };
        Ok(Some(match kind {
            FrameKind::Message => Frame::Message(
                serde_json::from_slice(&self.buf).map_err(ProtocolError::BadMessage)?,
            ),
            FrameKind::Blob => Frame::Blob(std::mem::take(&mut self.buf)),
        }))
    }

    /// The next frame, which must be a message; `None` at a clean end of stream.
    pub fn recv_message(&mut self) -> Result<Option<Message>, ProtocolError> {
        match self.recv()? {
            None => Ok(None),
            Some(Frame::Message(m)) => Ok(Some(m)),
            Some(other) => {
                Err(ProtocolError::Unexpected { expected: "a message", got: other.describe() })
            }
        }
    }

    /// The blob a message announced: it must be the next frame.
    pub fn recv_blob(&mut self) -> Result<Vec<u8>, ProtocolError> {
        match self.recv()? {
            None => Err(ProtocolError::Closed("an announced blob")),
            Some(Frame::Blob(b)) => Ok(b),
            Some(other) => {
                Err(ProtocolError::Unexpected { expected: "a blob", got: other.describe() })
            }
        }
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads one frame's payload into `self.buf`.
    fn read_payload(&mut self) -> Result<Option<FrameKind>, ProtocolError> {
        let mut head = [0u8; HEADER_LEN];
        let got = read_full(&mut self.inner, &mut head)?;
        if got == 0 {
            return Ok(None);
        }
        // The kind is judged on the first byte alone, so garbage is named as such even when
        // it is shorter than a header.
        let kind = FrameKind::from_byte(head[0])?;
        if got < HEADER_LEN {
            return Err(ProtocolError::Truncated {
                part: FramePart::Header,
                needed: HEADER_LEN as u64,
                got: got as u64,
            });
        }
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        if len > self.limit {
            return Err(ProtocolError::Oversize { len: u64::from(len), limit: self.limit });
        }
        self.buf.clear();
        // Grown as bytes arrive, not reserved from the header: a lying length costs nothing.
        self.buf.reserve(len.min(1 << 16) as usize);
        let got = (&mut self.inner).take(u64::from(len)).read_to_end(&mut self.buf)?;
        if got < len as usize {
            return Err(ProtocolError::Truncated {
                part: FramePart::Payload,
                needed: u64::from(len),
                got: got as u64,
            });
        }
        Ok(Some(kind))
    }
}

/// Fills `buf` unless the stream ends first; how many bytes arrived.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
