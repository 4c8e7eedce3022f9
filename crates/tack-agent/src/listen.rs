//! The host's listener: a process that outlives the link that started it, for as long as
//! the controller's ssh ControlMaster keeps its connection (ControlPersist), and takes links
//! on a private unix socket beside the agent's executable, forking one agent per link. The
//! controller forwards a socket of its own to it through that master, so that a later link
//! (the next run's, or one re-opened after a drop) reaches an agent with no new ssh session
//! and no shell: on hosts whose login shell reads a heavy `~/.bashrc`, that start-up was
//! most of a converged run.
//!
//! The rules it keeps:
//! - the socket is `<agent executable>.<machine name>.sock`, in the agent's cache (a
//!   directory this user alone may enter), made 0600 under a private name and renamed into
//!   place;
//! - one listener a socket, the newest login's: every link that comes through the shell
//!   starts a listener, which takes the socket over (a new login may have new groups or a
//!   new environment, which the agents of the old one's listener would not have); the one
//!   it replaced notices and ends, its open links served to their end;
//! - it ends when no link has been open for its idle time, when its socket is removed or
//!   replaced by another listener's, or when its executable is no longer the file it runs
//!   from (a newer agent was installed and the older ones removed, or the cached file was
//!   replaced: the next contact's shell checks the file, which the listener would skip);
//!   a link that arrives after that is closed unanswered, and the controller falls back
//!   to the shell;
//! - each link is served by an agent process of its own (`tack-agent --listened`, the
//!   listener's own executable run again with the link's socket as its stdin and stdout),
//!   so each has its own pid and so its own staging directory, removed when its link ends.
//!
//! Owns the socket and the listener's life; serving a link is [`crate::serve`]'s. Never
//! started for a become user's agent: a link to it must go through the become program.

use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::stage::check_private;

/// `tack-agent --listen SECS`: serve the link on stdin/stdout, and make sure this host's
/// listener runs, ending after SECS seconds without a link.
pub const LISTEN_ARG: &str = "--listen";

/// `tack-agent --listener SECS`: the listener itself (started by [`start`], detached).
pub const LISTENER_ARG: &str = "--listener";

/// `tack-agent --listened`: the agent of one link the listener took, on its stdin/stdout.
pub const LISTENED_ARG: &str = "--listened";

/// The longest socket path this listens on: the kernel's `sun_path` holds 108 bytes, and
/// the controller's ssh names it again on its command line.
const MAX_SOCKET_PATH: usize = 100;

/// How often the listener looks at its socket, its executable and its children.
const TICK_MS: libc::c_int = 1000;

/// The socket of the agent at `exe` on this machine, when it can have one: a path ssh's
/// `-L` can name (no `:`, plain UTF-8) that fits a socket address.
pub fn socket_for(exe: &Path) -> Option<PathBuf> {
    socket_on(exe, &crate::modules::hostname::gethostname())
}

/// [`socket_for`] on the machine named `node`. The name is in the path because a home on a
/// shared file system is one cache for many machines, and a socket answers only on the
/// machine that bound it: two machines' listeners must not take each other's place.
pub fn socket_on(exe: &Path, node: &str) -> Option<PathBuf> {
    let text = exe.to_str()?;
    let node: String = node
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .collect();
    let path = format!("{text}.{node}.sock");
    fits_socket(&path).then(|| PathBuf::from(path))
}

/// Whether `path` can name a listener's socket, on the host and on the controller: absolute,
/// with nothing ssh's `-L local:remote` would read as a separator (`:`) or a line break, and
/// short enough for a socket address.
pub fn fits_socket(path: &str) -> bool {
    path.starts_with('/') && !path.contains([':', '\n', '\r']) && path.len() <= MAX_SOCKET_PATH
}

fn euid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// Starts this login's listener, detached, and returns its socket's path; `None` when this
/// agent cannot have one (its cache is not private, or the path is unfit).
pub fn start(idle_secs: u64) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let path = socket_for(&exe)?;
    check_private(path.parent()?, euid()).ok()?;
    let mut cmd = Command::new(&exe);
    cmd.arg(LISTENER_ARG)
        .arg(idle_secs.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent. A session of
    // its own: the link's session ending (its ssh channel closing) does not end the listener.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().ok()?;
    // Reaped when it ends early (a newer login's took over); else it outlives this agent.
    std::thread::spawn(move || child.wait());
    path.to_str().map(str::to_string)
}

/// The socket of the running agent's listener (what a `--listened` agent says at hello).
pub fn this_socket() -> Option<String> {
    socket_for(&std::env::current_exe().ok()?)?.to_str().map(str::to_string)
}

/// The listener's life; its exit code.
pub fn run(idle: Duration) -> i32 {
    let Ok(exe) = std::env::current_exe() else { return 1 };
    let Some(running) = identity_of("/proc/self/exe".as_ref(), true) else { return 1 };
    let same_file = || identity_of(&exe, true) == Some(running);
    if !same_file() {
        return 1;
    }
    let Some(path) = socket_for(&exe) else { return 1 };
    let Some(dir) = path.parent() else { return 1 };
    if check_private(dir, euid()).is_err() {
        return 1;
    }
    let Ok((listener, ours)) = bind(dir, &path) else { return 1 };
    let mut live: Vec<Child> = Vec::new();
    let mut since = Instant::now();
    loop {
        wait_readable(&listener);
        while let Ok((stream, _)) = listener.accept() {
            // Looked at again here, for a file replaced since the last tick; a link left
            // unanswered falls back to the shell, which checks the file.
            if same_file()
                && let Ok(agent) = serve(stream, &exe)
            {
                live.push(agent);
            }
        }
        live.retain_mut(|agent| matches!(agent.try_wait(), Ok(None)));
        if !live.is_empty() {
            since = Instant::now();
        }
        if !same_file() || identity(&path) != Some(ours) {
            return 0;
        }
        if live.is_empty() && since.elapsed() >= idle {
            let _ = std::fs::remove_file(&path);
            return 0;
        }
    }
}

/// Binds a 0600 socket under a private name and renames it into place (atomically
/// replacing a dead listener's), non-blocking; with the identity of the file it made.
fn bind(dir: &Path, path: &Path) -> std::io::Result<(UnixListener, (u64, u64))> {
    let tmp = dir.join(format!(".listen-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    // SAFETY: umask only swaps this process's file creation mask.
    let before = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(&tmp);
    // SAFETY: as above, restoring it.
    unsafe { libc::umask(before) };
    let listener = bound?;
    listener.set_nonblocking(true)?;
    std::fs::rename(&tmp, path)?;
    let ours = identity(path).ok_or_else(|| std::io::Error::other("the socket vanished"))?;
    Ok((listener, ours))
}

/// The socket file's device and inode, read without following a link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    identity_of(path, false)
}

/// A file's device and inode (`follow`: of what a link names; `/proc/self/exe` names the
/// file this process runs, even once it is removed).
fn identity_of(path: &Path, follow: bool) -> Option<(u64, u64)> {
    let meta =
        if follow { std::fs::metadata(path) } else { std::fs::symlink_metadata(path) }.ok()?;
    Some((meta.dev(), meta.ino()))
}

/// Waits up to a tick for a link to arrive.
fn wait_readable(listener: &UnixListener) {
    use std::os::fd::AsRawFd;
    let mut fds = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, for the duration of the call.
    unsafe { libc::poll(&mut fds, 1, TICK_MS) };
}

/// One link: the running executable (`/proc/self/exe`: the very file this listener was
/// started from, whatever the path names now) as a `--listened` agent on the socket.
fn serve(stream: UnixStream, exe: &Path) -> std::io::Result<Child> {
    stream.set_nonblocking(false)?;
    let output = OwnedFd::from(stream.try_clone()?);
    Command::new("/proc/self/exe")
        .arg0(exe)
        .arg(LISTENED_ARG)
        .stdin(Stdio::from(OwnedFd::from(stream)))
        .stdout(Stdio::from(output))
        .stderr(Stdio::null())
        .spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_path_is_one_ssh_and_the_kernel_can_take() {
        let exe = Path::new("/root/.cache/tack/agent-0.1.0-0123456789abcdef");
        assert_eq!(
            socket_on(exe, "web1.example.com"),
            Some(PathBuf::from(
                "/root/.cache/tack/agent-0.1.0-0123456789abcdef.web1.example.com.sock"
            ))
        );
        assert_eq!(
            socket_on(exe, "odd/name:x"),
            Some(PathBuf::from("/root/.cache/tack/agent-0.1.0-0123456789abcdef.odd_name_x.sock"))
        );
        assert_eq!(socket_on(Path::new("/home/a:b/.cache/tack/agent"), "h"), None);
        assert_eq!(socket_on(Path::new("relative/agent"), "h"), None);
        let long = format!("/{}/agent", "d".repeat(MAX_SOCKET_PATH));
        assert_eq!(socket_on(Path::new(&long), "h"), None);
    }
}
