//! The `tack-agent` binary as a process: how it ends (bye, end of input, garbage) and that
//! its stdout carries frames and nothing else.

use std::io::Write;
use std::process::{Command, Stdio};

use tack_protocol::{
    DEFAULT_MAX_FRAME, ErrorKind, Frame, FrameReader, FrameWriter, Message, PROTOCOL_VERSION,
};

/// Runs the agent on `input`; its exit code, every frame of its stdout, and its stderr. The
/// input's end closes the link.
fn run_agent(input: &[u8]) -> (Option<i32>, Vec<Frame>, String) {
    run_agent_with(input, false)
}

/// As [`run_agent`]; with `held`, the link stays open until the agent exits (the input ends
/// with `bye`): a closed link stops the commands the agent runs, which would race with them.
fn run_agent_with(input: &[u8], held: bool) -> (Option<i32>, Vec<Frame>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tack-agent"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The agent may stop reading early (garbage); what it did not read is not the point.
    let _ = stdin.write_all(input);
    let open = held.then_some(stdin);
    let out = child.wait_with_output().unwrap();
    drop(open);
    let mut reader = FrameReader::new(&out.stdout[..]);
    let mut frames = Vec::new();
    while let Some(f) = reader.recv().expect("stdout holds only whole frames") {
        frames.push(f);
    }
    (out.status.code(), frames, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn stream(messages: &[Message]) -> Vec<u8> {
    let mut w = FrameWriter::new(Vec::new());
    for m in messages {
        w.send(m).unwrap();
    }
    w.into_inner()
}

fn hello() -> Message {
    Message::Hello { protocol: PROTOCOL_VERSION, max_frame: DEFAULT_MAX_FRAME }
}

fn exec(id: u64, cmd: &str) -> Message {
    Message::ExecCommand { id, cmd: cmd.into(), cwd: "/".into() }
}

#[test]
fn bye_and_end_of_input_are_clean_exits() {
    let (code, frames, _) = run_agent(&stream(&[hello(), Message::Bye, exec(1, "echo no")]));
    assert_eq!(code, Some(0));
    assert_eq!(frames.len(), 1, "only ready: nothing runs after bye");
    let (code, frames, _) = run_agent(&stream(&[hello()]));
    assert_eq!((code, frames.len()), (Some(0), 1));
    let (code, frames, _) = run_agent(b"");
    assert_eq!((code, frames.len()), (Some(0), 0));
}

#[test]
fn output_written_to_the_agents_own_stdout_goes_to_its_stderr() {
    // The link stays open until `bye`: its end would stop the command (watch_link), a race
    // that failed this test under load (rc -15).
    let input =
        stream(&[hello(), exec(1, "echo stray > /proc/$PPID/fd/1; echo mine"), Message::Bye]);
    let (code, frames, stderr) = run_agent_with(&input, true);
    assert_eq!(code, Some(0));
    assert_eq!(frames[1], Frame::Message(Message::ExecResult { id: 1, rc: 0 }));
    assert_eq!(frames[2], Frame::Blob(b"mine\n".to_vec()));
    assert_eq!(stderr, "stray\n");
}

#[test]
fn garbage_gets_an_error_frame_a_diagnostic_and_exit_code_2() {
    let mut input = stream(&[hello()]);
    input.extend_from_slice(b"rm -rf /\n");
    let (code, frames, stderr) = run_agent(&input);
    assert_eq!(code, Some(2));
    assert!(
        matches!(
            &frames[1],
            Frame::Message(Message::Error { id: None, kind: ErrorKind::Protocol, .. })
        ),
        "{frames:?}"
    );
    assert_eq!(
        stderr,
        "tack-agent: unknown frame kind 0x72 (the peer is not speaking the tack protocol)\n"
    );
}
