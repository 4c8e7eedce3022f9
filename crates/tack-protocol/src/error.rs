//! Everything that can be wrong with a stream of frames, typed so that a connection can say
//! exactly what happened (and a test can tell one failure from another).

/// Which part of a frame the stream ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramePart {
    Header,
    Payload,
}

impl std::fmt::Display for FramePart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FramePart::Header => "header",
            FramePart::Payload => "payload",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("the stream ended inside a frame {part}: {got} of {needed} bytes arrived")]
    Truncated { part: FramePart, needed: u64, got: u64 },
    #[error("a frame of {len} bytes is over this stream's limit of {limit} bytes")]
    Oversize { len: u64, limit: u32 },
    #[error("unknown frame kind 0x{0:02x} (the peer is not speaking the tack protocol)")]
    UnknownKind(u8),
    #[error("a message frame does not hold a valid message: {0}")]
    BadMessage(#[source] serde_json::Error),
    #[error("protocol version mismatch: this side speaks version {ours}, the peer {theirs}")]
    VersionMismatch { ours: u32, theirs: u32 },
    #[error("expected {expected}, the peer sent {got}")]
    Unexpected { expected: &'static str, got: String },
    #[error("the stream closed while waiting for {0}")]
    Closed(&'static str),
    #[error("the stream failed: {0}")]
    Io(#[from] std::io::Error),
}
