//! The staging rules of seed 002 through real agents: each agent runs from a private copy
//! of the workspace's `tack-agent` in a cache directory of the test's own (an agent stages
//! beside its executable), and over SSH against a loopback sshd (`support::sshd`).
//!
//! One test per rule: the directory 0700 and files 0600 (0700 for an executable); a
//! directory that is not the agent's alone refused; a file removed when it is unstaged; the
//! whole directory removed when the link ends; a dead agent's directory removed by the next
//! agent of the same host; two links to one host in two directories. `InProcess` stages by
//! the same rules on the controller.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tack_connect::{
    AgentImage, ChildAgent, Connection, ConnectionError, InProcess, STAGE_LIMIT, Ssh,
};

mod support;
use support::agent::{agent_bin, upload_bin};
use support::sshd::Sshd;

/// A cache directory holding a copy of the agent, as `~/.cache/tack` holds one on a host.
struct Cache {
    dir: tempfile::TempDir,
    agent: PathBuf,
}

impl Cache {
    fn new() -> Cache {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        let agent = dir.path().join("agent-test");
        fs::copy(agent_bin(), &agent).unwrap();
        Cache { dir, agent }
    }

    /// Spawns the copy, waiting out `ETXTBSY`: while this thread wrote the copy, another
    /// test's thread may have forked, and its child holds the write descriptor until it
    /// execs, a moment later.
    fn spawn(&self, host: &str) -> ChildAgent {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match ChildAgent::spawn(&self.agent) {
                Ok(agent) => return agent.staging_for(host),
                Err(ConnectionError::Spawn { source, .. })
                    if source.kind() == std::io::ErrorKind::ExecutableFileBusy
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("spawn {}: {e}", self.agent.display()),
            }
        }
    }

    fn stage_dirs(&self) -> Vec<String> {
        stage_dirs(self.dir.path())
    }
}

fn stage_dirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("stage-"))
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o777
}

fn pid(agent: &ChildAgent) -> u32 {
    agent.info().unwrap().pid
}

/// Waits for `cond`, which an agent's exit makes true a moment after its link is dropped.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_directory_is_0700_and_a_file_0600_or_0700_when_executable() {
    let cache = Cache::new();
    let agent = cache.spawn("web1");
    let file = agent.stage(b"secret\n", ".source.txt", false).unwrap();
    let script = agent.stage(b"#!/bin/sh\necho hi\n", "hi.sh", true).unwrap();
    let dir = cache.dir.path().join(format!("stage-web1-{}", pid(&agent)));
    assert_eq!(Path::new(file.path()).parent(), Some(dir.as_path()));
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(Path::new(file.path())), 0o600);
    assert_eq!(mode(Path::new(script.path())), 0o700);
    assert_eq!(fs::read(file.path()).unwrap(), b"secret\n");
    // The name is the agent's: the BLAKE3 hash of the bytes, never the controller's name.
    let hash = blake3::hash(b"secret\n").to_hex();
    assert!(file.path().ends_with(hash.as_str()), "{}", file.path());
    let out = agent.exec_command(script.path(), Path::new("/")).unwrap();
    assert_eq!(out.stdout, b"hi\n");
}

#[test]
fn a_staging_directory_that_is_not_the_agents_alone_is_refused() {
    let cache = Cache::new();
    let agent = cache.spawn("web1");
    let first = agent.stage(b"one", "one", false).unwrap();
    let dir = Path::new(first.path()).parent().unwrap().to_path_buf();
    // Opened to others behind the agent's back: it stages nothing more there.
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let err = agent.stage(b"two", "two", false).unwrap_err();
    assert!(matches!(&err, ConnectionError::Stage(_)), "{err:?}");
    assert!(err.to_string().contains("is not a directory this user alone owns"), "{err}");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "nothing was written");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn a_file_is_removed_when_its_sub_task_unstages_it() {
    let cache = Cache::new();
    let agent = cache.spawn("web1");
    let kept = agent.stage(b"kept", "kept", false).unwrap();
    let file = agent.stage(b"gone", "gone", false).unwrap();
    let path = PathBuf::from(file.path());
    agent.unstage(file).unwrap();
    assert!(!path.exists());
    assert!(Path::new(kept.path()).exists(), "another sub-task's file stays");
    // A file the module consumed (moved into place) is unstaged without complaint.
    let moved = agent.stage(b"moved", "moved", false).unwrap();
    fs::rename(moved.path(), cache.dir.path().join("placed")).unwrap();
    agent.unstage(moved).unwrap();
    assert_eq!(fs::read(cache.dir.path().join("placed")).unwrap(), b"moved");
}

#[test]
fn the_whole_directory_goes_when_the_link_ends() {
    let cache = Cache::new();
    let agent = cache.spawn("web1");
    let left = agent.stage(b"left behind", "left", false).unwrap();
    let dir = Path::new(left.path()).parent().unwrap().to_path_buf();
    drop(agent);
    eventually("the staging directory is removed at bye", || !dir.exists());
    assert!(cache.stage_dirs().is_empty());
}

#[test]
fn a_dead_agents_directory_is_removed_by_the_next_agent_of_the_same_host() {
    let cache = Cache::new();
    let dead = cache.spawn("web1");
    let other_host = cache.spawn("web2");
    dead.stage(b"a", "a", false).unwrap();
    other_host.stage(b"b", "b", false).unwrap();
    let dead_pid = pid(&dead);
    let dead_dir = format!("stage-web1-{dead_pid}");
    // Killed, it cleans nothing up.
    // SAFETY: a plain signal to the agent this test spawned.
    assert_eq!(unsafe { libc::kill(dead_pid as i32, libc::SIGKILL) }, 0);
    // Dropping the link reaps the killed process (a zombie would still count as alive). A
    // request would race the rule that re-opens a link whose agent died while idle.
    drop(dead);
    assert!(!Path::new(&format!("/proc/{dead_pid}")).exists(), "the killed agent is reaped");
    assert!(cache.stage_dirs().contains(&dead_dir), "{:?}", cache.stage_dirs());
    let next = cache.spawn("web1");
    next.stage(b"c", "c", false).unwrap();
    let dirs = cache.stage_dirs();
    assert!(!dirs.contains(&dead_dir), "{dirs:?}");
    assert!(dirs.contains(&format!("stage-web1-{}", pid(&next))));
    assert!(dirs.contains(&format!("stage-web2-{}", pid(&other_host))), "another host's stays");
}

#[test]
fn two_links_to_one_host_never_share_a_directory() {
    let cache = Cache::new();
    let one = cache.spawn("web1");
    let two = cache.spawn("web1");
    let a = one.stage(b"same bytes", "x", false).unwrap();
    let b = two.stage(b"same bytes", "x", false).unwrap();
    let dir = |p: &str| Path::new(p).parent().unwrap().to_path_buf();
    assert_ne!(dir(a.path()), dir(b.path()));
    // One link cannot remove the other's file, and removing its own leaves the other's.
    let b_path = b.path().to_string();
    let a_path = a.path().to_string();
    assert!(one.unstage(b).is_err());
    assert!(Path::new(&b_path).exists());
    one.unstage(a).unwrap();
    assert!(!Path::new(&a_path).exists());
    assert!(Path::new(&b_path).exists());
}

#[test]
fn a_file_over_the_frame_limit_is_refused_before_it_is_sent() {
    let cache = Cache::new();
    let agent = cache.spawn("web1");
    assert_eq!(agent.stage_limit(), Some(STAGE_LIMIT), "an action can ask before it reads");
    assert_eq!(InProcess.stage_limit(), None, "no frame carries a local file");
    let big = vec![0u8; STAGE_LIMIT + 1];
    let err = agent.stage(&big, "big", false).unwrap_err();
    assert!(err.to_string().contains("over the link's frame limit"), "{err}");
    assert!(cache.stage_dirs().is_empty(), "nothing reached the agent");
    assert!(agent.run_module("ping", &Default::default()).is_ok(), "the link goes on");
}

#[test]
fn in_process_staging_is_private_and_removed() {
    let file = InProcess.stage(b"local\n", ".source.txt", false).unwrap();
    let path = PathBuf::from(file.path());
    let dir = path.parent().unwrap().to_path_buf();
    assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("ansible-tmp-"));
    assert!(dir.parent().unwrap().ends_with(".ansible/tmp"), "{}", dir.display());
    assert_eq!(path.file_name().unwrap(), ".source.txt", "named as ansible names it");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&path), 0o600);
    let script = InProcess.stage(b"#!/bin/sh\n", "s.sh", true).unwrap();
    assert_eq!(mode(Path::new(script.path())), 0o700);
    InProcess.unstage(script).unwrap();
    InProcess.unstage(file).unwrap();
    assert!(!dir.exists());
}

#[test]
fn over_ssh_files_are_staged_in_the_hosts_cache_and_removed() {
    let sshd = Sshd::start();
    let image = AgentImage::from_file(upload_bin(), env!("CARGO_PKG_VERSION")).unwrap();
    let one = Ssh::connect(&sshd.target(), &image).unwrap();
    let two = Ssh::connect(&sshd.target(), &image).unwrap();
    let cache = sshd.home().join(".cache/tack");
    let a = one.stage(b"over ssh", ".source", false).unwrap();
    let b = two.stage(b"over ssh", ".source", false).unwrap();
    let host = &sshd.target().host;
    let dir_a = cache.join(format!("stage-{host}-{}", one.info().unwrap().pid));
    let dir_b = cache.join(format!("stage-{host}-{}", two.info().unwrap().pid));
    assert_eq!(Path::new(a.path()).parent(), Some(dir_a.as_path()));
    assert_eq!(Path::new(b.path()).parent(), Some(dir_b.as_path()));
    assert_eq!(mode(&dir_a), 0o700);
    assert_eq!(mode(Path::new(a.path())), 0o600);
    assert_eq!(fs::read(a.path()).unwrap(), b"over ssh");
    let a_path = PathBuf::from(a.path());
    one.unstage(a).unwrap();
    assert!(!a_path.exists());
    drop(one);
    drop(two);
    eventually("both staging directories are removed", || stage_dirs(&cache).is_empty());
}
