//! The host's listener (`tack_agent::listen`) and the controller's forward to it
//! (`forward.rs`), against a loopback sshd each test starts for itself: a link after the
//! first reaches an agent forked by the listener, through the ControlMaster, with no ssh
//! session of its own; the socket is private; the listener ends when idle or when its
//! socket is gone; a killed listener costs one shell, which starts a new one; and without
//! ControlPersist there is no listener at all.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tack_agent::Invocation;
use tack_connect::{AgentImage, Connection, Ssh};

mod support;
use support::agent::upload_bin;
use support::sshd::Sshd;

fn image() -> AgentImage {
    AgentImage::from_file(upload_bin(), env!("CARGO_PKG_VERSION")).unwrap()
}

fn socket(sshd: &Sshd, image: &AgentImage) -> PathBuf {
    // The sshd is this machine: its listener names the socket after it.
    tack_agent::listen::socket_for(&sshd.home().join(".cache/tack").join(image.file_name()))
        .unwrap()
}

/// A process's parent, from `/proc/<pid>/stat` (the field after the parenthesised name).
fn parent(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(1)?.parse().ok()
}

fn cmdline(pid: u32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .iter()
        .map(|&b| if b == 0 { ' ' } else { b as char })
        .collect()
}

/// The running listeners whose executable is under `home` (not the agent a listener is
/// starting for a link, which has its command line until it runs its own).
fn listeners(home: &Path) -> Vec<u32> {
    let home = home.display().to_string();
    let listening = |pid: u32| {
        let cmd = cmdline(pid);
        cmd.starts_with(&home) && cmd.contains(" --listener ")
    };
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| listening(pid) && !parent(pid).is_some_and(listening))
        .collect()
}

/// The socket and pid of the one listener the first link started, once it has bound.
fn listening(sshd: &Sshd, image: &AgentImage) -> (PathBuf, u32) {
    let sock = socket(sshd, image);
    eventually("the listener binds its socket", Duration::from_secs(5), || sock.exists());
    let [pid] = listeners(&sshd.home())[..] else { panic!("one listener") };
    (sock, pid)
}

fn eventually(what: &str, within: Duration, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn ping(conn: &dyn Connection) -> String {
    conn.run_module("ping", &Invocation::default()).unwrap()["ping"].as_str().unwrap().to_string()
}

#[test]
fn a_second_link_reaches_an_agent_the_listener_forked_with_no_ssh_of_its_own() {
    let sshd = Sshd::start();
    let image = image();
    let first = Ssh::connect(&sshd.target(), &image).unwrap();
    let sock = socket(&sshd, &image);
    assert_eq!(first.info().unwrap().listen.as_deref(), sock.to_str());
    eventually("the listener binds its socket", Duration::from_secs(5), || sock.exists());
    let meta = fs::symlink_metadata(&sock).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.mode() & 0o777, 0o600, "only its user may connect");
    let listener = listeners(&sshd.home());
    assert_eq!(listener.len(), 1, "one listener");

    let second = Ssh::connect(&sshd.target(), &image).unwrap();
    let third = Ssh::connect(&sshd.target(), &image).unwrap();
    assert_eq!((ping(&second), ping(&third)), ("pong".into(), "pong".into()));
    let (a, b) = (second.info().unwrap().pid, third.info().unwrap().pid);
    assert_ne!(a, b, "an agent a link");
    assert_eq!((parent(a), parent(b)), (Some(listener[0]), Some(listener[0])));
    assert!(!second.uploaded());
    // The first link's agent is the sshd session's, not the listener's.
    assert_ne!(parent(first.info().unwrap().pid), Some(listener[0]));
    // An agent forked by the listener stages in a directory of its own, gone with its link.
    let staged = second.stage(b"x", "x", false).unwrap();
    let dir = Path::new(staged.path()).parent().unwrap().to_path_buf();
    assert!(dir.ends_with(format!("stage-127.0.0.1-{a}")), "{}", dir.display());
    drop(second);
    assert!(!dir.exists(), "the directory goes when the link ends");
}

#[test]
fn the_listener_ends_when_idle_and_removes_its_socket() {
    let sshd = Sshd::start();
    let image = image();
    let mut target = sshd.target();
    target.ssh_args = "-C -o ControlMaster=auto -o ControlPersist=2s".into();
    let link = Ssh::connect(&target, &image).unwrap();
    let sock = socket(&sshd, &image);
    eventually("the listener binds its socket", Duration::from_secs(5), || sock.exists());
    // Busy while a link it forked is open.
    let forked = Ssh::connect(&target, &image).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(ping(&forked), "pong");
    assert_eq!(listeners(&sshd.home()).len(), 1, "a listener with a link open stays");
    drop((link, forked));
    eventually("the idle listener ends", Duration::from_secs(8), || {
        listeners(&sshd.home()).is_empty()
    });
    assert!(!sock.exists(), "its socket goes with it");
}

#[test]
fn a_killed_listener_costs_one_shell_which_starts_another() {
    let sshd = Sshd::start();
    let image = image();
    let first = Ssh::connect(&sshd.target(), &image).unwrap();
    let (sock, old) = listening(&sshd, &image);
    // SAFETY: kill has no memory preconditions; the pid is the listener the test started.
    unsafe { libc::kill(old as i32, libc::SIGKILL) };
    eventually("the listener is gone", Duration::from_secs(5), || {
        !listeners(&sshd.home()).contains(&old)
    });
    // The forward's far end is gone: the link runs the shell instead, whose agent starts a
    // new listener (over the dead one's socket).
    let second = Ssh::connect(&sshd.target(), &image).unwrap();
    assert_eq!(ping(&second), "pong");
    assert_ne!(parent(second.info().unwrap().pid), Some(old));
    eventually("a new listener", Duration::from_secs(5), || listeners(&sshd.home()).len() == 1);
    let [new] = listeners(&sshd.home())[..] else { panic!("one listener") };
    eventually("it answers", Duration::from_secs(5), || {
        std::os::unix::net::UnixStream::connect(&sock).is_ok()
    });
    let third = Ssh::connect(&sshd.target(), &image).unwrap();
    assert_eq!(parent(third.info().unwrap().pid), Some(new));
    drop(first);
}

#[test]
fn without_control_persist_there_is_no_listener() {
    let sshd = Sshd::start();
    let image = image();
    let mut target = sshd.target();
    target.ssh_args = "-C -o ControlMaster=auto".into();
    let link = Ssh::connect(&target, &image).unwrap();
    assert_eq!(ping(&link), "pong");
    assert_eq!(link.info().unwrap().listen, None);
    std::thread::sleep(Duration::from_millis(300));
    assert!(listeners(&sshd.home()).is_empty());
    assert!(!socket(&sshd, &image).exists());
}

#[test]
fn a_reset_stops_the_master_and_the_next_link_logs_in_anew() {
    let sshd = Sshd::start();
    let image = image();
    let target = sshd.target();
    let first = Ssh::connect(&target, &image).unwrap();
    let (_, old) = listening(&sshd, &image);
    drop(first);

    let reset = tack_connect::reset_master(&target).unwrap();
    assert_eq!(reset.no_connection, None, "the first link's master was found");
    assert!(reset.stop.is_some() && reset.stop_failed.is_none(), "{reset:?}");
    // A stopped master serves its forwards until it exits: the controller's end is gone at
    // once, so the next link cannot ride the old login's listener in that moment.
    let forwards = fs::read_dir(target.control_dir())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".agent"))
        .count();
    assert_eq!(forwards, 0, "the forward to the old listener is removed");
    // The new login's agent is not the old listener's, and its listener takes over.
    let second = Ssh::connect(&target, &image).unwrap();
    assert_ne!(parent(second.info().unwrap().pid), Some(old));
    eventually("the old listener ends", Duration::from_secs(5), || {
        !listeners(&sshd.home()).contains(&old)
    });
    eventually("a new one listens", Duration::from_secs(5), || listeners(&sshd.home()).len() == 1);
    let [new] = listeners(&sshd.home())[..] else { panic!("one listener") };
    let third = Ssh::connect(&target, &image).unwrap();
    assert_eq!(parent(third.info().unwrap().pid), Some(new));

    // With the master gone, there is nothing to stop.
    drop((second, third));
    let stopped = tack_connect::reset_master(&target).unwrap();
    assert!(stopped.stop.is_some());
    let again = tack_connect::reset_master(&target).unwrap();
    let said = again.no_connection.expect("no master");
    assert!(said.starts_with("Control socket connect("), "{said}");
    assert_eq!(again.stop, None);
}
