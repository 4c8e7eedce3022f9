//! The agent process's side of a link: its own session, its stop after a grace period, how
//! its end is described, and the tail of its stderr, read so that it never blocks.
//!
//! Owns no link state; `child` decides when each is used.

use std::io::Read;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of an agent's stderr an error message quotes.
pub(super) const STDERR_TAIL: usize = 2048;

/// How long a closing or dying agent is given to exit before it is killed.
pub(super) const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Puts the command in a session of its own: a become program finds no terminal to ask on.
pub(crate) fn new_session(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

/// Kills `pid` after `secs` unless the returned guard is dropped first (a become program
/// that neither succeeds nor fails must not hang the run).
pub(crate) fn kill_after(pid: u32, secs: u64) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            rx.recv_timeout(Duration::from_secs(secs))
            && let Ok(pid) = libc::pid_t::try_from(pid)
        {
            // SAFETY: kill has no memory preconditions; the child is not reaped before the
            // guard is dropped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    tx
}

/// Waits up to [`EXIT_GRACE`] for the agent to exit (its input is closed by now), then kills
/// it. The exit status when it exited by itself.
pub(super) fn stop(child: &mut Child) -> Option<ExitStatus> {
    let deadline = Instant::now() + EXIT_GRACE;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

pub(super) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("it exited with code {code}");
    }
    let Some(signal) = status.signal() else {
        return format!("it ended ({status})");
    };
    let name = match signal {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGPIPE => " (SIGPIPE)",
        _ => "",
    };
    format!("it was killed by signal {signal}{name}")
}

/// The last [`STDERR_TAIL`] bytes the agent wrote to stderr, read by a thread of its own so
/// the agent never blocks on a full pipe.
pub(super) struct StderrTail {
    tail: Arc<Mutex<Vec<u8>>>,
    /// `None` for a link with no stderr of its own (a socket's).
    thread: Option<JoinHandle<()>>,
}

impl StderrTail {
    /// Reads `stderr` to its end, showing each chunk to `saw` (a become prompt's watch).
    pub(super) fn drain(
        mut stderr: impl Read + Send + 'static,
        mut saw: impl FnMut(&[u8]) + Send + 'static,
    ) -> Self {
        let tail = Arc::new(Mutex::new(Vec::new()));
        let keep = Arc::clone(&tail);
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                saw(&buf[..n]);
                let mut t = keep.lock().unwrap_or_else(PoisonError::into_inner);
                t.extend_from_slice(&buf[..n]);
                let excess = t.len().saturating_sub(STDERR_TAIL);
                t.drain(..excess);
            }
        });
        StderrTail { tail, thread: Some(thread) }
    }

    /// The tail of a link whose agent's stderr does not reach the controller.
    pub(super) fn none() -> Self {
        StderrTail { tail: Default::default(), thread: None }
    }

    /// The tail as text, once the agent's stderr has closed (or after a short wait: a process
    /// the agent started may still hold it open).
    pub(super) fn text(&self) -> String {
        let deadline = Instant::now() + Duration::from_millis(200);
        while self.thread.as_ref().is_some_and(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let t = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&t).trim().to_string()
    }
}
