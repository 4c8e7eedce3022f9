//! Properties of the codec over generated streams: whatever is sent comes back the same, and
//! no byte string (a cut-off stream, random garbage) makes the reader panic or read past a
//! frame it refused.

use proptest::prelude::*;
use serde_json::{Map, Value};
use tack_protocol::{
    ErrorKind, Frame, FrameReader, FrameWriter, HEADER_LEN, Message, ProtocolError, RunModule,
};

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        // Finite floats only: JSON has no NaN or infinity.
        (-1e300f64..1e300).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn args() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(("[a-z_]{1,10}", json()), 0..6).prop_map(|kv| kv.into_iter().collect())
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (any::<u64>(), "[a-z.]{1,20}", args(), any::<bool>(), any::<bool>(), any::<Option<u64>>())
            .prop_map(|(id, module, args, check_mode, diff, timeout)| {
                Frame::Message(Message::RunModule(RunModule {
                    id,
                    module,
                    args,
                    check_mode,
                    diff,
                    environment: Default::default(),
                    // The property's own value: an absent limit and a given one both round-trip.
                    rlimit_nofile: timeout.map(|t| t / 2),
                    timeout,
                }))
            }),
        (any::<u64>(), args())
            .prop_map(|(id, result)| Frame::Message(Message::ModuleResult { id, result })),
        (any::<u64>(), any::<i32>())
            .prop_map(|(id, rc)| Frame::Message(Message::ExecResult { id, rc })),
        (any::<u64>(), ".{0,40}", ".{0,40}")
            .prop_map(|(id, cmd, cwd)| Frame::Message(Message::ExecCommand { id, cmd, cwd })),
        (any::<Option<u64>>(), ".{0,40}").prop_map(|(id, message)| Frame::Message(
            Message::Error { id, kind: ErrorKind::Protocol, message }
        )),
        Just(Frame::Message(Message::Bye)),
        prop::collection::vec(any::<u8>(), 0..2048).prop_map(Frame::Blob),
    ]
}

fn encode(frames: &[Frame]) -> Vec<u8> {
    let mut w = FrameWriter::new(Vec::new());
    for f in frames {
        match f {
            Frame::Message(m) => w.send(m).unwrap(),
            Frame::Blob(b) => w.send_blob(b).unwrap(),
        }
    }
    w.into_inner()
}

proptest! {
    #[test]
    fn frames_round_trip(frames in prop::collection::vec(frame(), 0..8)) {
        let bytes = encode(&frames);
        let mut r = FrameReader::new(&bytes[..]);
        for f in &frames {
            let got = r.recv().unwrap();
            prop_assert_eq!(got.as_ref(), Some(f));
        }
        prop_assert!(r.recv().unwrap().is_none());
    }

    #[test]
    fn a_cut_stream_is_truncated_never_misread(frames in prop::collection::vec(frame(), 1..5), cut in any::<prop::sample::Index>()) {
        let bytes = encode(&frames);
        let cut = cut.index(bytes.len());
        let mut r = FrameReader::new(&bytes[..cut]);
        let mut whole = 0;
        loop {
            match r.recv() {
                Ok(Some(f)) => {
                    prop_assert_eq!(&f, &frames[whole]);
                    whole += 1;
                }
                Ok(None) => break,
                Err(ProtocolError::Truncated { .. }) => break,
                Err(e) => return Err(TestCaseError::fail(format!("{e:?}"))),
            }
        }
        prop_assert!(whole < frames.len());
    }

    #[test]
    fn garbage_never_panics_and_respects_the_limit(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let mut r = FrameReader::with_limit(&bytes[..], 64);
        for _ in 0..bytes.len() / HEADER_LEN + 1 {
            match r.recv() {
                Ok(Some(Frame::Blob(b))) => prop_assert!(b.len() <= 64),
                Ok(Some(Frame::Message(_))) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
}
