//! The `ssh` connection against a loopback sshd each test starts for itself
//! (`support::sshd`, scripts/sshd-loopback.sh): the agent is uploaded once and found the
//! next time, a corrupted cached agent is replaced, recorded module cases give the same result
//! over ssh as in-process, a host ansible cannot reach is `Unreachable` in ansible's words
//! (tests/ssh/faults.json, recorded by scripts/record-ssh-argv.py; a host reached through
//! ProxyJump and a config file too), and an agent killed on
//! the host fails its request and is re-opened for the next (or at the next `connect`).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use tack_agent::Invocation;
use tack_connect::{AgentImage, Connection, ConnectionError, InProcess as Local, Ssh, SshTarget};

mod support;
use support::agent::upload_bin;
use support::sshd::Sshd;

fn image() -> AgentImage {
    AgentImage::from_file(upload_bin(), env!("CARGO_PKG_VERSION")).unwrap()
}

fn cached(sshd: &Sshd, image: &AgentImage) -> PathBuf {
    sshd.home().join(".cache/tack").join(image.file_name())
}

/// The files in the agent cache `dir`, but the listener's socket (`<agent>.sock`) and the
/// private name it is bound under before its rename (`.listen-<pid>`): the listener starts
/// beside the first link, at its own pace.
fn agent_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".sock") && !n.starts_with(".listen-"))
        .collect();
    names.sort();
    names
}

fn ping(conn: &dyn Connection) -> Value {
    conn.run_module("ping", &Invocation::default()).unwrap()["ping"].clone()
}

#[test]
fn the_agent_is_uploaded_once_then_found() {
    let sshd = Sshd::start();
    let image = image();
    // An older agent, which the upload removes.
    let cache = sshd.home().join(".cache/tack");
    fs::create_dir_all(&cache).unwrap();
    fs::write(cache.join("agent-0.0.1-0000000000000000"), b"old").unwrap();

    let first = Ssh::connect(&sshd.target(), &image).unwrap();
    assert!(first.uploaded());
    assert_eq!(ping(&first), "pong");
    let path = cached(&sshd, &image);
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o700);
    assert_eq!(fs::metadata(&cache).unwrap().mode() & 0o777, 0o700);
    assert_eq!(fs::read(&path).unwrap(), image.bytes());
    assert_eq!(agent_files(&cache), [image.file_name()], "only the new agent, no temporary file");

    let second = Ssh::connect(&sshd.target(), &image).unwrap();
    assert!(!second.uploaded(), "the cached agent is used");
    assert_eq!(ping(&second), "pong");
    // The upload's private umask stays in its own subshell: both agents have the login's.
    let umask = |c: &Ssh| c.exec_command("umask", &sshd.home()).unwrap().stdout;
    assert_eq!(umask(&first), umask(&second));
    let login = String::from_utf8(umask(&second)).unwrap();
    assert_ne!(login.trim(), "0077", "the login's umask, not the upload's");
    assert_eq!(fs::metadata(&path).unwrap().ino(), meta.ino(), "the file was not rewritten");
    assert_ne!(first.info().unwrap().pid, second.info().unwrap().pid);
}

#[test]
fn a_corrupted_cached_agent_is_replaced() {
    let sshd = Sshd::start();
    let image = image();
    drop(Ssh::connect(&sshd.target(), &image).unwrap());
    let path = cached(&sshd, &image);
    // Still an executable that runs, with one byte more: only the hash tells.
    // (A new file in its place: the old agent may still be exiting, its file busy.)
    let mut bytes = image.bytes().to_vec();
    bytes.push(0);
    corrupt(&path, &bytes);
    let again = Ssh::connect(&sshd.target(), &image).unwrap();
    assert!(again.uploaded(), "the altered agent is replaced");
    assert_eq!(fs::read(&path).unwrap(), image.bytes());
    assert_eq!(ping(&again), "pong");
    // Not executable any more: replaced too.
    corrupt(&path, b"garbage");
    let third = Ssh::connect(&sshd.target(), &image).unwrap();
    assert!(third.uploaded());
    assert_eq!(ping(&third), "pong");
}

fn corrupt(path: &std::path::Path, bytes: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    fs::remove_file(path).unwrap();
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn recorded_cases_give_the_same_result_over_ssh() {
    let sshd = Sshd::start();
    let ssh = Ssh::connect(&sshd.target(), &image()).unwrap();
    let home = sshd.home().display().to_string();
    let (compared, with_result) = support::cases::compare_recorded_cases(&Local, &ssh, Some(&home));
    eprintln!("{compared} recorded module cases compared over ssh, {with_result} with a result");
    assert!(compared >= 100, "only {compared} cases ran");
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["printf out; printf err >&2; exit 3", "pwd", "kill -9 $$"] {
        let here = Local.exec_command(cmd, dir.path()).unwrap();
        assert_eq!(here, ssh.exec_command(cmd, dir.path()).unwrap(), "{cmd}");
    }
}

#[test]
fn unreachable_hosts_are_told_in_ansibles_words() {
    let sshd = Sshd::start();
    let wrong = sshd.dir().join("wrong_key");
    let keygen = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&wrong)
        .status()
        .unwrap();
    assert!(keygen.success());
    let dir = sshd.dir().display().to_string();
    let port = sshd.port.to_string();
    let recorded: Vec<Value> = serde_json::from_str(include_str!("ssh/faults.json")).unwrap();
    let mut unreachable = 0;
    for (i, rec) in recorded.iter().enumerate() {
        let name = rec["case"]["name"].as_str().unwrap();
        let mut target = SshTarget::new("127.0.0.1");
        // A control master per case, as the recorder had: a shared one would answer.
        target.control_path_dir = sshd.control_dir(&format!("case-{i}")).display().to_string();
        for (k, v) in rec["case"]["vars"].as_object().unwrap() {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            let v = v.replace("%D", &dir).replace("%P", &port);
            match k.as_str() {
                "ansible_port" => target.port = Some(v.parse().unwrap()),
                "ansible_ssh_private_key_file" => target.private_key_file = Some(v),
                "ansible_ssh_common_args" => target.ssh_common_args = Some(v),
                other => panic!("the test does not map {other}"),
            }
        }
        let got = Ssh::connect(&target, &image());
        match rec["status"].as_str().unwrap() {
            "SUCCESS" => assert_eq!(ping(&got.unwrap()), "pong", "{name}"),
            "UNREACHABLE!" => {
                let err = got.err().unwrap_or_else(|| panic!("{name} was reached"));
                assert!(matches!(err, ConnectionError::Unreachable { .. }), "{name}: {err:?}");
                // ansible's task result puts its own "Task failed: " before the error.
                let want = rec["msg"].as_str().unwrap().replace("%D", &dir).replace("%P", &port);
                assert_eq!(format!("Task failed: {err}"), want, "{name}");
                unreachable += 1;
            }
            other => panic!("{name}: status {other}"),
        }
    }
    assert_eq!((recorded.len(), unreachable), (5, 3));
}

#[test]
fn an_agent_killed_on_the_host_makes_it_unreachable_and_the_next_request_reopens_the_link() {
    let sshd = Sshd::start();
    let ssh = std::sync::Arc::new(Ssh::connect(&sshd.target(), &image()).unwrap());
    let pid = ssh.info().unwrap().pid;
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill has no memory preconditions; the pid is the agent the sshd started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let mut args = Map::new();
    args.insert("_raw_params".into(), "sleep 3".into());
    let err = ssh.run_module("command", &Invocation { args, ..Invocation::default() }).unwrap_err();
    killer.join().unwrap();
    // ssh's 255 is all the controller sees, as ansible sees it: the host is unreachable.
    let ConnectionError::Unreachable { message } = &err else { panic!("{err:?}") };
    assert_eq!(
        message,
        "Failed to connect to the host via ssh: the link ended (ssh exited with code 255: the \
         agent was killed or the connection dropped)"
    );
    assert!(ssh.info().is_none(), "the dead link is closed");
    assert_eq!(ping(ssh.as_ref()), "pong");
    assert_ne!(ssh.info().unwrap().pid, pid);
}

#[test]
fn connect_opens_anew_a_link_whose_agent_died_while_idle() {
    let sshd = Sshd::start();
    let ssh = Ssh::connect(&sshd.target(), &image()).unwrap();
    let pid = ssh.info().unwrap().pid;
    // SAFETY: kill has no memory preconditions; the pid is the agent the sshd started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    // Until ssh notices the agent is gone the link looks alive, and connect keeps it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        ssh.connect().unwrap();
        if ssh.info().is_some_and(|agent| agent.pid != pid) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "connect never opened the link anew");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(ping(&ssh), "pong");
}

#[test]
fn a_link_that_cannot_be_reopened_is_unreachable() {
    let sshd = Sshd::start();
    let mut target = sshd.target();
    // No control master: a new link needs the server itself.
    target.ssh_args = "-o ControlMaster=no".into();
    let ssh = Ssh::connect(&target, &image()).unwrap();
    let pid = ssh.info().unwrap().pid;
    let stop = std::process::Command::new(
        env!("CARGO_MANIFEST_DIR").to_string() + "/../../scripts/sshd-loopback.sh",
    )
    .arg("stop")
    .arg(sshd.dir())
    .status()
    .unwrap();
    assert!(stop.success());
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    std::thread::sleep(Duration::from_millis(200));
    // The link died while idle: the next request opens it anew, and the server is gone. On a
    // slow machine ssh may not have noticed yet: that request fails as a death, the next
    // opens anew.
    let mut next = ssh.run_module("ping", &Invocation::default()).unwrap_err();
    if matches!(next, ConnectionError::AgentDied { .. }) {
        next = ssh.run_module("ping", &Invocation::default()).unwrap_err();
    }
    let want = format!(
        "Failed to connect to the host via ssh: ssh: connect to host 127.0.0.1 port {}: Connection refused",
        sshd.port
    );
    assert!(
        matches!(&next, ConnectionError::Unreachable { message } if *message == want),
        "{next:?}"
    );
}

#[test]
fn an_agent_for_another_machine_is_refused_before_upload() {
    let sshd = Sshd::start();
    let mut bytes = image().bytes().to_vec();
    // e_machine: aarch64 when the host is x86_64, x86_64 otherwise.
    let other: u16 = if std::env::consts::ARCH == "x86_64" { 0xb7 } else { 0x3e };
    bytes[18..20].copy_from_slice(&other.to_le_bytes());
    let foreign = AgentImage::new(bytes, "0.0.0").unwrap();
    let err = Ssh::connect(&sshd.target(), &foreign).err().expect("refused");
    let want = format!(
        "the host is {} and the agent is built for {}",
        std::env::consts::ARCH,
        foreign.arch()
    );
    assert!(matches!(&err, ConnectionError::AgentImage(m) if *m == want), "{err:?}");
    assert!(!sshd.home().join(".cache/tack").exists(), "nothing was uploaded");
}

#[test]
fn links_connecting_at_once_to_a_fresh_host_all_get_a_whole_agent() {
    let sshd = Sshd::start();
    let image = image();
    let links: Vec<Ssh> = std::thread::scope(|s| {
        let joins: Vec<_> =
            (0..4).map(|_| s.spawn(|| Ssh::connect(&sshd.target(), &image).unwrap())).collect();
        joins.into_iter().map(|j| j.join().unwrap()).collect()
    });
    for link in &links {
        assert_eq!(ping(link), "pong");
    }
    // One destination: one link sends the agent, the others wait and find it.
    assert_eq!(links.iter().filter(|l| l.uploaded()).count(), 1);
    let cache = sshd.home().join(".cache/tack");
    assert_eq!(agent_files(&cache), [image.file_name()], "one agent, no temporary file left");
    assert_eq!(fs::read(cached(&sshd, &image)).unwrap(), image.bytes());
}

fn gzipped(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_gzipped_image_is_unpacked_on_the_host_and_checked_like_any_upload() {
    let sshd = Sshd::start();
    let plain = image();
    // The gzip of other bytes: the host unpacks them (so the gzipped copy is what went),
    // and the checks after refuse them.
    let wrong = plain.clone().with_gzip(gzipped(b"not the agent"));
    let err = Ssh::connect(&sshd.target(), &wrong).map(|_| ()).unwrap_err();
    let ConnectionError::Install { step: "upload", message } = &err else { panic!("{err:?}") };
    assert!(
        message.ends_with(&format!("the upload has 13 bytes, not {}", plain.bytes().len())),
        "{message}"
    );
    let cache = sshd.home().join(".cache/tack");
    assert!(agent_files(&cache).is_empty(), "nothing is left of it");

    let packed = plain.clone().with_gzip(gzipped(plain.bytes()));
    let ssh = Ssh::connect(&sshd.target(), &packed).unwrap();
    assert!(ssh.uploaded());
    assert_eq!(ping(&ssh), "pong");
    assert_eq!(fs::read(cached(&sshd, &plain)).unwrap(), plain.bytes());
}

#[test]
fn ssh_failing_as_ssh_is_tried_again_as_ansible_retries_and_each_try_is_told() {
    let mut target = SshTarget::new("127.0.0.1");
    target.port = Some(1);
    target.retries = 2;
    let dir = tempfile::tempdir().unwrap();
    target.control_path_dir = dir.path().join("cp").display().to_string();
    let notes = tack_connect::Notes::default();
    let err = Ssh::connect_noting(&target, &image(), &notes).map(|_| ()).unwrap_err();
    assert!(matches!(err, ConnectionError::Unreachable { .. }), "{err:?}");
    let said: Vec<(u8, String)> = notes.take();
    assert_eq!(said.len(), 2, "{said:?}");
    for ((level, line), (attempt, pause)) in said.iter().zip([(1, 0), (2, 1)]) {
        assert_eq!(*level, 2);
        let head = format!("ssh_retry: attempt: {attempt}, ssh return code is 255. cmd ([b'ssh', ");
        assert!(line.starts_with(&head), "{line}");
        assert!(line.ends_with(&format!("]...), pausing for {pause} seconds")), "{line}");
    }
}
