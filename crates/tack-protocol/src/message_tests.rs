use super::*;
use crate::frame::{Frame, FrameReader, FrameWriter};

fn encoded(messages: &[Message]) -> Vec<u8> {
    let mut w = FrameWriter::new(Vec::new());
    for m in messages {
        w.send(m).unwrap();
    }
    w.into_inner()
}

fn ready(protocol: u32) -> Message {
    Message::Ready(AgentInfo { protocol, ..AgentInfo::this_process("0.1.0") })
}

fn run_hello(agent_says: &[Message]) -> (Result<AgentInfo, ProtocolError>, Vec<u8>) {
    let input = encoded(agent_says);
    let mut reader = FrameReader::new(&input[..]);
    let mut writer = FrameWriter::new(Vec::new());
    let got = hello(&mut reader, &mut writer);
    (got, writer.into_inner())
}

#[test]
fn hello_sends_our_version_and_limit_and_takes_ready() {
    let (got, sent) = run_hello(&[ready(PROTOCOL_VERSION)]);
    let info = got.unwrap();
    assert_eq!(info.arch, std::env::consts::ARCH);
    assert_eq!(info.pid, std::process::id());
    let first = FrameReader::new(&sent[..]).recv().unwrap();
    assert_eq!(
        first,
        Some(Frame::Message(Message::Hello {
            protocol: PROTOCOL_VERSION,
            max_frame: crate::DEFAULT_MAX_FRAME
        }))
    );
}

#[test]
fn hello_version_mismatch() {
    let (got, _) = run_hello(&[ready(PROTOCOL_VERSION + 1)]);
    let err = got.unwrap_err();
    assert!(
        matches!(err, ProtocolError::VersionMismatch { ours, theirs }
            if ours == PROTOCOL_VERSION && theirs == PROTOCOL_VERSION + 1),
        "{err:?}"
    );
}

#[test]
fn hello_refused_closed_or_answered_wrongly() {
    let refusal = Message::Error { id: None, kind: ErrorKind::Protocol, message: "no".into() };
    let err = run_hello(&[refusal]).0.unwrap_err();
    assert_eq!(err.to_string(), "expected ready, the peer sent error: no");
    let err = run_hello(&[Message::Bye]).0.unwrap_err();
    assert!(matches!(err, ProtocolError::Unexpected { expected: "ready", .. }), "{err:?}");
    let err = run_hello(&[]).0.unwrap_err();
    assert!(matches!(err, ProtocolError::Closed("the agent's ready")), "{err:?}");
}

#[test]
fn every_message_round_trips() {
    let mut args = Map::new();
    args.insert("cmd".into(), "echo hi".into());
    args.insert("nested".into(), serde_json::json!({"a": [1, 2.5, null, true]}));
    let messages = vec![
        Message::Hello { protocol: 1, max_frame: 1024 },
        ready(1),
        Message::RunModule(RunModule {
            id: 7,
            module: "ansible.builtin.command".into(),
            args: args.clone(),
            check_mode: true,
            diff: false,
            environment: [("LANG".to_string(), "C".to_string())].into(),
            rlimit_nofile: None,
            timeout: Some(30),
        }),
        Message::ExecCommand { id: 8, cmd: "ls".into(), cwd: "/".into() },
        Message::ModuleResult { id: 7, result: args },
        Message::ExecResult { id: 8, rc: -9 },
        Message::Error { id: Some(9), kind: ErrorKind::NoSuchModule, message: "x".into() },
        Message::Bye,
        Message::PutPayload { hash: "af13".into() },
        Message::RunPython(RunPython {
            id: 10,
            hash: "af13".into(),
            fqn: "ansible.modules.getent".into(),
            profile: "legacy".into(),
            interpreter: "/usr/bin/python3".into(),
            params: r#"{"ANSIBLE_MODULE_ARGS": {}}"#.into(),
            environment: [("LANG".to_string(), "C".to_string())].into(),
            rlimit_nofile: None,
        }),
        Message::PythonResult {
            id: 10,
            rc: 1,
            stdout: "{}".into(),
            stderr: "e".into(),
            tag: "cpython-311".into(),
        },
        Message::Error { id: Some(10), kind: ErrorKind::Python, message: "x".into() },
        Message::StartJob(StartJob {
            id: 11,
            job: JobSpec {
                module: "command".into(),
                args: Map::new(),
                check_mode: false,
                diff: true,
                environment: Default::default(),
                dir: "~/.ansible_async".into(),
                limit: 30,
                rlimit_nofile: None,
                python: None,
                program: None,
            },
        }),
    ];
    let bytes = encoded(&messages);
    let mut r = FrameReader::new(&bytes[..]);
    for m in &messages {
        assert_eq!(r.recv_message().unwrap().as_ref(), Some(m));
    }
    assert!(r.recv().unwrap().is_none());
}

#[test]
fn run_module_defaults_leave_out_what_is_empty() {
    let m = Message::RunModule(RunModule {
        id: 1,
        module: "ping".into(),
        args: Map::new(),
        check_mode: false,
        diff: false,
        environment: BTreeMap::new(),
        rlimit_nofile: None,
        timeout: None,
    });
    let text = serde_json::to_string(&m).unwrap();
    assert_eq!(
        text,
        r#"{"run_module":{"id":1,"module":"ping","args":{},"check_mode":false,"diff":false}}"#
    );
    let back: Message =
        serde_json::from_str(r#"{"run_module":{"id":1,"module":"ping","args":{}}}"#).unwrap();
    assert_eq!(back, m);
}

#[test]
fn hello_reads_what_a_peer_said_before_closing_its_input() {
    struct Closed;
    impl std::io::Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let input = encoded(&[ready(PROTOCOL_VERSION + 1)]);
    let err = hello(&mut FrameReader::new(&input[..]), &mut FrameWriter::new(Closed)).unwrap_err();
    assert!(matches!(err, ProtocolError::VersionMismatch { .. }), "{err:?}");
    let err = hello(&mut FrameReader::new(&b""[..]), &mut FrameWriter::new(Closed)).unwrap_err();
    assert!(matches!(err, ProtocolError::Closed(_)), "{err:?}");
}

#[test]
fn staging_messages_keep_their_shape_on_the_wire() {
    let stage = Message::Stage(Stage {
        id: 7,
        host: "web1".into(),
        hash: "ab".repeat(32),
        len: 3,
        executable: true,
    });
    let messages = [
        stage.clone(),
        Message::Staged { id: 7, path: "/c/stage-web1-1/1-ab".into() },
        Message::Unstage { id: 8, path: "/c/stage-web1-1/1-ab".into() },
        Message::Unstaged { id: 8 },
    ];
    let bytes = encoded(&messages);
    let mut reader = FrameReader::new(&bytes[..]);
    for m in &messages {
        assert_eq!(reader.recv_message().unwrap().as_ref(), Some(m));
    }
    let text = serde_json::to_string(&stage).unwrap();
    assert_eq!(
        text,
        format!(
            r#"{{"stage":{{"id":7,"host":"web1","hash":"{}","len":3,"executable":true}}}}"#,
            "ab".repeat(32)
        )
    );
}
