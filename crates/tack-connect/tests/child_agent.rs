//! `ChildAgent` against `InProcess`: recorded module cases give the same result
//! dictionary through the agent binary as in-process; and every way an agent can fail (killed
//! mid-task, garbage on its stdout, a wrong protocol version, death before hello) is the
//! typed `ConnectionError` that says so.
//!
//! The agent binary is the workspace's own `tack-agent`, built by cargo for this test
//! (`TACK_AGENT_BIN` names another). The fake agents are shell scripts replaying bytes.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Map;
use tack_agent::Invocation;
use tack_connect::{AgentCommand, ChildAgent, Connection, ConnectionError, InProcess as Local};
use tack_protocol::{AgentInfo, FrameWriter, Message, PROTOCOL_VERSION, ProtocolError};

mod support;
use support::agent::agent_bin;

#[test]
fn recorded_cases_give_the_same_result_through_the_agent() {
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    let (compared, with_result) = support::cases::compare_recorded_cases(&Local, &agent, None);
    eprintln!(
        "{compared} recorded module cases compared through the agent, {with_result} with a result"
    );
    assert!(compared >= 100, "only {compared} cases ran");
}

#[test]
fn commands_give_the_same_output_through_the_agent() {
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["printf out; printf err >&2; exit 3", "pwd", "kill -9 $$", "cat; echo done"] {
        let here = Local.exec_command(cmd, dir.path()).unwrap();
        let there = agent.exec_command(cmd, dir.path()).unwrap();
        assert_eq!(here, there, "{cmd}");
    }
    let gone = agent.exec_command("pwd", Path::new("/nonexistent/dir")).unwrap();
    assert_eq!(gone, Local.exec_command("pwd", Path::new("/nonexistent/dir")).unwrap());
}

#[test]
fn nothing_a_command_does_with_the_agents_stdio_touches_the_link() {
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    // The shell's parent is the agent: its descriptor 1 must be its stderr, its 0 /dev/null.
    let cmd = "echo corrupt > /proc/$PPID/fd/1; readlink /proc/$PPID/fd/0";
    let out = agent.exec_command(cmd, Path::new("/")).unwrap();
    assert_eq!(out.stdout, b"/dev/null\n");
    let inv = Invocation::default();
    assert_eq!(agent.run_module("ping", &inv).unwrap()["ping"], "pong");
}

#[test]
fn an_unknown_module_is_named_and_the_link_goes_on() {
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    let err = agent.run_module("community.general.nope", &Invocation::default()).unwrap_err();
    assert!(matches!(&err, ConnectionError::NoSuchModule(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        Local.run_module("community.general.nope", &Invocation::default()).unwrap_err().to_string()
    );
    assert!(agent.run_module("ping", &Invocation::default()).is_ok());
}

/// An `async` job outlives the link that started it: the agent's own executable runs it
/// detached, and its job file says how it ended.
#[test]
fn a_job_started_through_the_agent_outlives_its_link() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = Map::new();
    args.insert("_raw_params".into(), "sleep 1; echo done".into());
    args.insert("_uses_shell".into(), true.into());
    let job = tack_connect::JobSpec {
        module: "command".into(),
        args,
        check_mode: false,
        diff: false,
        environment: Default::default(),
        dir: dir.path().display().to_string(),
        limit: 30,
        rlimit_nofile: None,
        python: None,
        program: None,
    };
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    let started = agent.start_job(&job).unwrap();
    assert_eq!(started["started"], true, "{started:?}");
    let jid = started["ansible_job_id"].as_str().unwrap().to_string();
    assert_eq!(started["results_file"], dir.path().join(&jid).display().to_string());
    drop(agent);
    let status = ChildAgent::spawn(agent_bin()).unwrap();
    let mut args = Map::new();
    args.insert("jid".into(), jid.clone().into());
    args.insert("_async_dir".into(), dir.path().display().to_string().into());
    let invocation = Invocation { args, ..Invocation::default() };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let result = loop {
        let result = status.run_module("async_status", &invocation).unwrap();
        if result.get("finished") == Some(&serde_json::Value::Bool(true)) {
            break result;
        }
        assert!(std::time::Instant::now() < deadline, "the job never finished: {result:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(result["stdout"], "done", "{result:?}");
    assert_eq!(result["rc"], 0);
}

#[test]
fn hello_reports_the_agent() {
    let agent = ChildAgent::spawn(agent_bin()).unwrap();
    let info = agent.info().unwrap();
    assert_eq!(info.protocol, PROTOCOL_VERSION);
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(info.arch, std::env::consts::ARCH);
    assert_ne!(info.pid, std::process::id());
}

#[test]
fn an_agent_killed_mid_task_fails_that_task_and_the_next_gets_a_new_agent() {
    let agent = std::sync::Arc::new(ChildAgent::spawn(agent_bin()).unwrap());
    let pid = agent.info().unwrap().pid;
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill has no memory preconditions; the pid is our own child's.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let mut args = Map::new();
    args.insert("_raw_params".into(), "sleep 3".into());
    let inv = Invocation { args, ..Invocation::default() };
    let err = agent.run_module("command", &inv).unwrap_err();
    killer.join().unwrap();
    let ConnectionError::AgentDied { pid: died, during, how, .. } = &err else { panic!("{err:?}") };
    assert_eq!((*died, during.as_str()), (pid, "running module 'command'"));
    assert_eq!(how, "it was killed by signal 9 (SIGKILL)");
    assert_eq!(
        err.to_string(),
        format!(
            "the agent (pid {pid}) died while running module 'command': it was killed by signal 9 (SIGKILL)"
        )
    );
    assert!(agent.info().is_none(), "the dead link is closed");
    assert_eq!(agent.run_module("ping", &Invocation::default()).unwrap()["ping"], "pong");
    assert_ne!(agent.info().unwrap().pid, pid);
}

/// A fake agent: a script that prints `bytes` on its stdout, then `tail` of shell. It is run
/// by `/bin/sh` rather than exec'd: a file just written can be "busy" for exec while another
/// test thread's fork still holds its descriptor.
fn fake_agent(dir: &Path, bytes: &[u8], tail: &str) -> AgentCommand {
    let data = dir.join("replay.bin");
    fs::write(&data, bytes).unwrap();
    let script = dir.join("agent.sh");
    let text = format!("cat '{}'\n{tail}\n", data.display());
    fs::write(&script, text).unwrap();
    AgentCommand::new("/bin/sh").args([script])
}

fn frames(messages: &[Message]) -> Vec<u8> {
    let mut w = FrameWriter::new(Vec::new());
    for m in messages {
        w.send(m).unwrap();
    }
    w.into_inner()
}

fn ready(protocol: u32) -> Message {
    Message::Ready(AgentInfo { protocol, ..AgentInfo::this_process("0.0.0") })
}

#[test]
fn garbage_instead_of_hello_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_agent(dir.path(), b"Welcome to the host!\n", "cat >/dev/null");
    let err = ChildAgent::spawn_command(fake).err().expect("refused");
    assert!(
        matches!(&err, ConnectionError::Hello { source: ProtocolError::UnknownKind(b'W'), .. }),
        "{err:?}"
    );
}

#[test]
fn garbage_after_hello_breaks_the_link_with_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = frames(&[ready(PROTOCOL_VERSION)]);
    bytes.extend_from_slice(b"Last login: today\n");
    let agent =
        ChildAgent::spawn_command(fake_agent(dir.path(), &bytes, "cat >/dev/null")).unwrap();
    let err = agent.run_module("ping", &Invocation::default()).unwrap_err();
    assert!(
        matches!(&err, ConnectionError::Protocol { source: ProtocolError::UnknownKind(b'L'), during, .. } if during == "running module 'ping'"),
        "{err:?}"
    );
    assert!(agent.info().is_none(), "the broken link is closed");
}

#[test]
fn a_reply_to_another_request_breaks_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = Message::ModuleResult { id: 99, result: Map::new() };
    let bytes = frames(&[ready(PROTOCOL_VERSION), wrong]);
    let agent =
        ChildAgent::spawn_command(fake_agent(dir.path(), &bytes, "cat >/dev/null")).unwrap();
    let err = agent.run_module("ping", &Invocation::default()).unwrap_err();
    assert!(
        matches!(&err, ConnectionError::Protocol { source: ProtocolError::Unexpected { .. }, .. }),
        "{err:?}"
    );
}

#[test]
fn an_agent_that_dies_inside_a_frame_died() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = frames(&[ready(PROTOCOL_VERSION)]);
    bytes.extend_from_slice(&[0x01, 0, 0, 0, 50, b'{']);
    let agent =
        ChildAgent::spawn_command(fake_agent(dir.path(), &bytes, "head -c 5 >/dev/null; exit 5"))
            .unwrap();
    let err = agent.run_module("ping", &Invocation::default()).unwrap_err();
    let ConnectionError::AgentDied { how, .. } = &err else { panic!("{err:?}") };
    assert_eq!(how, "it exited with code 5");
}

#[test]
fn a_protocol_version_mismatch_is_refused_at_hello() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_agent(dir.path(), &frames(&[ready(PROTOCOL_VERSION + 1)]), "cat >/dev/null");
    let err = ChildAgent::spawn_command(fake).err().expect("refused");
    assert!(
        matches!(&err, ConnectionError::Hello { source: ProtocolError::VersionMismatch { theirs, .. }, .. } if *theirs == PROTOCOL_VERSION + 1),
        "{err:?}"
    );
}

#[test]
fn an_agent_that_dies_before_hello_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_agent(dir.path(), b"", "echo 'tack-agent: no space left' >&2; exit 7");
    let err = ChildAgent::spawn_command(fake).err().expect("refused");
    assert!(
        matches!(&err, ConnectionError::Hello { source: ProtocolError::Closed(_), .. }),
        "{err:?}"
    );
    assert!(err.to_string().ends_with("its stderr ended with: tack-agent: no space left"), "{err}");
    let missing = ChildAgent::spawn(dir.path().join("no-such-agent")).err().expect("refused");
    assert!(matches!(missing, ConnectionError::Spawn { .. }), "{missing:?}");
}
