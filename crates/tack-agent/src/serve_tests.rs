use super::*;
use serde_json::{Map, json};
use tack_protocol::Frame;

fn hello() -> Message {
    Message::Hello { protocol: PROTOCOL_VERSION, max_frame: tack_protocol::DEFAULT_MAX_FRAME }
}

/// Serves `requests` (as one stream), returns the outcome and every frame the agent wrote.
fn conversation(requests: &[Message]) -> (Result<(), ServeError>, Vec<Frame>) {
    let mut w = FrameWriter::new(Vec::new());
    for m in requests {
        w.send(m).unwrap();
    }
    conversation_over(&w.into_inner())
}

fn conversation_over(input: &[u8]) -> (Result<(), ServeError>, Vec<Frame>) {
    let mut reader = FrameReader::new(input);
    let mut writer = FrameWriter::new(Vec::new());
    let outcome = serve(&mut reader, &mut writer);
    let out = writer.into_inner();
    let mut replies = FrameReader::new(&out[..]);
    let mut frames = Vec::new();
    while let Some(f) = replies.recv().unwrap() {
        frames.push(f);
    }
    (outcome, frames)
}

fn ping(id: u64, data: &str) -> Message {
    let mut args = Map::new();
    args.insert("data".into(), data.into());
    Message::RunModule(RunModule {
        id,
        module: "ansible.builtin.ping".into(),
        args,
        check_mode: false,
        diff: false,
        environment: Default::default(),
        timeout: None,
        rlimit_nofile: None,
    })
}

#[test]
fn hello_then_requests_then_bye() {
    let exec = Message::ExecCommand {
        id: 2,
        cmd: "printf out; printf err >&2; exit 3".into(),
        cwd: "/".into(),
    };
    let (outcome, frames) =
        conversation(&[hello(), ping(1, "x"), exec, Message::Bye, ping(9, "never")]);
    outcome.unwrap();
    let Frame::Message(Message::Ready(info)) = &frames[0] else { panic!("{frames:?}") };
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(info.protocol, PROTOCOL_VERSION);
    let result = json!({"ping": "x"}).as_object().cloned().unwrap();
    assert_eq!(frames[1], Frame::Message(Message::ModuleResult { id: 1, result }));
    assert_eq!(frames[2], Frame::Message(Message::ExecResult { id: 2, rc: 3 }));
    assert_eq!(frames[3], Frame::Blob(b"out".to_vec()));
    assert_eq!(frames[4], Frame::Blob(b"err".to_vec()));
    assert_eq!(frames.len(), 5, "nothing answered after bye");
}

#[test]
fn end_of_stream_is_a_clean_stop() {
    let (outcome, frames) = conversation(&[]);
    outcome.unwrap();
    assert!(frames.is_empty());
    let (outcome, frames) = conversation(&[hello(), ping(1, "y")]);
    outcome.unwrap();
    assert_eq!(frames.len(), 2);
}

#[test]
fn unknown_module_is_an_error_reply_and_the_link_goes_on() {
    let mut missing = ping(1, "");
    if let Message::RunModule(r) = &mut missing {
        r.module = "community.general.nope".into();
    }
    let (outcome, frames) = conversation(&[hello(), missing, ping(2, "after")]);
    outcome.unwrap();
    assert_eq!(
        frames[1],
        Frame::Message(Message::Error {
            id: Some(1),
            kind: ErrorKind::NoSuchModule,
            message: "tack has no native module 'community.general.nope'".into()
        })
    );
    assert!(matches!(frames[2], Frame::Message(Message::ModuleResult { id: 2, .. })));
}

#[test]
fn a_request_before_hello_is_refused() {
    let (outcome, frames) = conversation(&[ping(1, "x")]);
    assert!(matches!(outcome, Err(ServeError::NoHello("run_module"))), "{outcome:?}");
    assert!(matches!(
        &frames[..],
        [Frame::Message(Message::Error { id: None, kind: ErrorKind::Protocol, .. })]
    ));
}

#[test]
fn a_reply_sent_as_a_request_is_refused() {
    let (outcome, _) = conversation(&[hello(), Message::ExecResult { id: 1, rc: 0 }]);
    assert!(matches!(outcome, Err(ServeError::NotARequest("exec_result"))), "{outcome:?}");
}

#[test]
fn version_mismatch_still_says_ready_then_stops() {
    let (outcome, frames) =
        conversation(&[Message::Hello { protocol: 99, max_frame: 1 << 20 }, ping(1, "x")]);
    assert!(
        matches!(
            outcome,
            Err(ServeError::Protocol(ProtocolError::VersionMismatch { theirs: 99, .. }))
        ),
        "{outcome:?}"
    );
    assert!(matches!(frames[0], Frame::Message(Message::Ready(_))));
    assert!(matches!(frames[1], Frame::Message(Message::Error { kind: ErrorKind::Protocol, .. })));
    assert_eq!(frames.len(), 2, "the module was not run");
}

#[test]
fn garbage_is_answered_with_a_protocol_error() {
    let mut w = FrameWriter::new(Vec::new());
    w.send(&hello()).unwrap();
    let mut input = w.into_inner();
    input.extend_from_slice(b"garbage\n");
    let (outcome, frames) = conversation_over(&input);
    assert!(
        matches!(outcome, Err(ServeError::Protocol(ProtocolError::UnknownKind(b'g')))),
        "{outcome:?}"
    );
    let Frame::Message(Message::Error { id: None, kind: ErrorKind::Protocol, message }) =
        &frames[1]
    else {
        panic!("{frames:?}")
    };
    assert!(message.contains("0x67"), "{message}");
}

#[test]
fn a_result_over_the_controllers_limit_is_refused_by_name() {
    let small = Message::Hello { protocol: PROTOCOL_VERSION, max_frame: 200 };
    let big = "z".repeat(300);
    let exec = Message::ExecCommand { id: 2, cmd: format!("printf {big}"), cwd: "/".into() };
    let (outcome, frames) = conversation(&[small, ping(1, &big), exec, ping(3, "ok")]);
    outcome.unwrap();
    for (i, id) in [(1, 1), (2, 2)] {
        let Frame::Message(Message::Error { id: got, kind: ErrorKind::Oversize, message }) =
            &frames[i]
        else {
            panic!("{:?}", frames[i])
        };
        assert_eq!(*got, Some(id));
        assert!(message.contains("over the controller's frame limit of 200"), "{message}");
    }
    assert!(matches!(frames[3], Frame::Message(Message::ModuleResult { id: 3, .. })));
}

fn stage_request(id: u64, host: &str, bytes: &[u8]) -> Message {
    Message::Stage(StageRequest {
        id,
        host: host.into(),
        hash: blake3::hash(bytes).to_hex().to_string(),
        len: bytes.len() as u64,
        executable: false,
    })
}

/// Serves `input` staging in `cache`, returns the frames the agent wrote.
fn staging_over(input: &[u8], cache: &Path) -> (Result<(), ServeError>, Vec<Frame>) {
    let mut reader = FrameReader::new(input);
    let mut writer = FrameWriter::new(Vec::new());
    let mut stage = Stage::new(Some(cache.to_path_buf()));
    let outcome = serve_staging(&mut reader, &mut writer, &mut stage);
    let out = writer.into_inner();
    let mut replies = FrameReader::new(&out[..]);
    let mut frames = Vec::new();
    while let Some(f) = replies.recv().unwrap() {
        frames.push(f);
    }
    (outcome, frames)
}

#[test]
fn a_staged_file_is_answered_with_its_path_and_the_directory_goes_at_the_end_of_the_stream() {
    let cache = tempfile::tempdir().unwrap();
    let mut w = FrameWriter::new(Vec::new());
    w.send(&hello()).unwrap();
    w.send(&stage_request(1, "web1", b"bytes")).unwrap();
    w.send_blob(b"bytes").unwrap();
    // No bye: the controller's end of the link just closes.
    let (outcome, frames) = staging_over(&w.into_inner(), cache.path());
    outcome.unwrap();
    let Some(Frame::Message(Message::Staged { id: 1, path })) = frames.get(1).cloned() else {
        panic!("{frames:?}")
    };
    let dir = cache.path().join(format!("stage-web1-{}", std::process::id()));
    assert_eq!(Path::new(&path).parent(), Some(dir.as_path()));
    assert!(!dir.exists(), "the whole directory went with the link");
}

#[test]
fn a_blob_shorter_than_announced_or_not_matching_its_hash_is_refused() {
    let cache = tempfile::tempdir().unwrap();
    let mut w = FrameWriter::new(Vec::new());
    w.send(&hello()).unwrap();
    w.send(&stage_request(1, "web1", b"bytes")).unwrap();
    w.send_blob(b"byte").unwrap();
    let mut wrong = stage_request(2, "web1", b"other");
    if let Message::Stage(s) = &mut wrong {
        s.len = 5;
    }
    w.send(&wrong).unwrap();
    w.send_blob(b"bytes").unwrap();
    w.send(&Message::Unstage { id: 3, path: "/etc/passwd".into() }).unwrap();
    w.send(&Message::Bye).unwrap();
    let (outcome, frames) = staging_over(&w.into_inner(), cache.path());
    outcome.unwrap();
    let kinds: Vec<_> = frames[1..]
        .iter()
        .map(|f| match f {
            Frame::Message(Message::Error { id, kind, message }) => (*id, *kind, message.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds[0].0, Some(1));
    assert!(kinds[0].2.contains("4 bytes where 5 were announced"), "{}", kinds[0].2);
    assert_eq!(kinds[1].0, Some(2));
    assert!(kinds[1].2.contains("do not match their hash"), "{}", kinds[1].2);
    assert_eq!(kinds[2].0, Some(3));
    assert!(kinds[2].2.contains("was not staged by this link"), "{}", kinds[2].2);
    assert!(kinds.iter().all(|k| k.1 == ErrorKind::Stage));
    assert!(Path::new("/etc/passwd").exists());
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "nothing is left");
}
