use super::*;
use crate::error::FramePart;

fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![kind];
    v.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn reader(bytes: &[u8]) -> FrameReader<&[u8]> {
    FrameReader::new(bytes)
}

#[test]
fn empty_stream_is_a_clean_end() {
    assert!(reader(b"").recv().unwrap().is_none());
}

#[test]
fn message_and_blob_come_back_as_sent() {
    let mut w = FrameWriter::new(Vec::new());
    w.send(&Message::Bye).unwrap();
    w.send_blob(b"\x00\xffraw").unwrap();
    w.send_blob(b"").unwrap();
    let bytes = w.into_inner();
    assert_eq!(&bytes[..HEADER_LEN], &[0x01, 0, 0, 0, 5]);
    assert_eq!(&bytes[HEADER_LEN..HEADER_LEN + 5], b"\"bye\"");
    let mut r = reader(&bytes);
    assert_eq!(r.recv().unwrap(), Some(Frame::Message(Message::Bye)));
    assert_eq!(r.recv_blob().unwrap(), b"\x00\xffraw");
    assert_eq!(r.recv_blob().unwrap(), b"");
    assert!(r.recv().unwrap().is_none());
}

#[test]
fn truncated_header() {
    let err = reader(&[0x01, 0, 0]).recv().unwrap_err();
    assert!(
        matches!(err, ProtocolError::Truncated { part: FramePart::Header, needed: 5, got: 3 }),
        "{err:?}"
    );
}

#[test]
fn truncated_payload() {
    let mut bytes = frame(0x01, b"\"bye\"");
    bytes.truncate(bytes.len() - 2);
    let err = reader(&bytes).recv().unwrap_err();
    assert!(
        matches!(err, ProtocolError::Truncated { part: FramePart::Payload, needed: 5, got: 3 }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "the stream ended inside a frame payload: 3 of 5 bytes arrived");
}

#[test]
fn oversize_frame_is_refused_before_reading_it() {
    // The header claims 4 GiB; nothing after it needs to exist.
    let bytes = [0x02, 0xff, 0xff, 0xff, 0xff];
    let err = reader(&bytes).recv().unwrap_err();
    assert!(
        matches!(err, ProtocolError::Oversize { len: 0xffff_ffff, limit: DEFAULT_MAX_FRAME }),
        "{err:?}"
    );
    let small = FrameReader::with_limit(&frame(0x02, b"0123456789A")[..], 10).recv();
    assert!(matches!(small, Err(ProtocolError::Oversize { len: 11, limit: 10 })), "{small:?}");
    // A frame exactly at the limit is fine.
    let exact = FrameReader::with_limit(&frame(0x02, b"0123456789")[..], 10).recv().unwrap();
    assert_eq!(exact, Some(Frame::Blob(b"0123456789".to_vec())));
}

#[test]
fn writer_refuses_what_the_peer_would_refuse() {
    let mut w = FrameWriter::with_limit(Vec::new(), 4);
    let err = w.send_blob(b"12345").unwrap_err();
    assert!(matches!(err, ProtocolError::Oversize { len: 5, limit: 4 }), "{err:?}");
    let err = w.send(&Message::Bye).unwrap_err();
    assert!(matches!(err, ProtocolError::Oversize { len: 5, limit: 4 }), "{err:?}");
    assert!(w.get_mut().is_empty(), "nothing written for a refused frame");
    w.set_limit(5);
    w.send(&Message::Bye).unwrap();
}

#[test]
fn unknown_kind_names_the_byte() {
    let err = reader(b"Welcome to host\n").recv().unwrap_err();
    assert!(matches!(err, ProtocolError::UnknownKind(b'W')), "{err:?}");
    assert!(err.to_string().contains("0x57"), "{err}");
    // Judged on the first byte even when less than a header arrived.
    assert!(matches!(reader(b"x").recv(), Err(ProtocolError::UnknownKind(b'x'))));
    assert!(matches!(reader(&frame(0x03, b"")).recv(), Err(ProtocolError::UnknownKind(3))));
}

#[test]
fn bad_json_message() {
    for payload in [&b"{not json"[..], b"\"no_such_message\"", b"{\"hello\":{\"protocol\":\"1\"}}"]
    {
        let err = reader(&frame(0x01, payload)).recv().unwrap_err();
        assert!(matches!(err, ProtocolError::BadMessage(_)), "{payload:?}: {err:?}");
    }
}

#[test]
fn a_blob_where_a_message_belongs_and_the_reverse() {
    let err = reader(&frame(0x02, b"abc")).recv_message().unwrap_err();
    assert!(
        matches!(&err, ProtocolError::Unexpected { expected: "a message", got } if got == "a blob of 3 bytes"),
        "{err:?}"
    );
    let err = reader(&frame(0x01, b"\"bye\"")).recv_blob().unwrap_err();
    assert!(matches!(err, ProtocolError::Unexpected { expected: "a blob", .. }), "{err:?}");
    assert!(matches!(reader(b"").recv_blob(), Err(ProtocolError::Closed(_))));
}

#[test]
fn io_errors_are_kept() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset"))
        }
    }
    let err = FrameReader::new(Broken).recv().unwrap_err();
    assert!(
        matches!(&err, ProtocolError::Io(e) if e.kind() == io::ErrorKind::ConnectionReset),
        "{err:?}"
    );
}

#[test]
fn interrupted_reads_are_retried() {
    struct Stutter<'a>(&'a [u8], bool);
    impl Read for Stutter<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = !self.1;
            if self.1 {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let n = buf.len().min(1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let bytes = frame(0x01, b"\"bye\"");
    let got = FrameReader::new(Stutter(&bytes, false)).recv().unwrap();
    assert_eq!(got, Some(Frame::Message(Message::Bye)));
}
