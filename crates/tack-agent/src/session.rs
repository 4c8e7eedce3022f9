//! ansible's worker session isolation (`worker_session_isolation`, on by default): its worker
//! processes start a session of their own, so what a module starts on the local connection
//! has no controlling terminal (`/dev/tty` cannot be opened; a program that would prompt on
//! the terminal fails instead of waiting there). tack runs the local connection's modules in
//! its own process, so it gives every process it starts for them what ansible's worker has
//! instead ([`detach`]): a process group of its own and, with isolation on, no controlling
//! terminal. With isolation off, ansible's worker keeps the terminal in a group of its own.
//!
//! A task's own `ansible_worker_session_isolation` applies to what its action starts on its
//! thread ([`with_isolation`]); the warm Python servers are kept per choice.
//!
//! The process stays in tack's session (it gives the terminal up rather than start a session),
//! so that an interrupted run still finds and stops it (`crate::descendants` stops what is in
//! its session). Owns the process-wide choice and how a child is started under it. On an ssh
//! host the agent already runs without a terminal, and this changes nothing there.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether module processes give up the controlling terminal.
static ISOLATED: AtomicBool = AtomicBool::new(true);

/// The run's `worker_session_isolation` setting.
pub fn set_isolation(isolated: bool) {
    ISOLATED.store(isolated, Ordering::Relaxed);
}

thread_local! {
    /// A task's own `ansible_worker_session_isolation`, while its action runs on this thread
    /// (the local connection's modules start their processes on the task's thread).
    static TASK: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Whether module processes started on this thread give up the controlling terminal: the
/// running task's own choice, else the run's setting.
pub fn isolated() -> bool {
    TASK.with(std::cell::Cell::get).unwrap_or_else(|| ISOLATED.load(Ordering::Relaxed))
}

/// Runs `f` with the processes it starts on this thread isolated as `isolated` says (a task's
/// `ansible_worker_session_isolation`, as ansible's worker for that task would be).
pub fn with_isolation<R>(isolated: bool, f: impl FnOnce() -> R) -> R {
    let before = TASK.with(|t| t.replace(Some(isolated)));
    let out = f();
    TASK.with(|t| t.set(before));
    out
}

/// Starts `command`'s process in a process group of its own, without the controlling
/// terminal when isolation is on.
pub fn detach(command: &mut std::process::Command) {
    std::os::unix::process::CommandExt::process_group(command, 0);
    if !isolated() {
        return;
    }
    // SAFETY: the closure runs in the forked child before exec and calls only open, ioctl
    // and close, which are async-signal-safe; the path is a static C string, nothing is
    // allocated and no lock is touched. Without a controlling terminal the open fails and
    // there is nothing to give up.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, || {
            let fd = libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            if fd >= 0 {
                // Not a session leader: only this process (and what it starts) loses it.
                libc::ioctl(fd, libc::TIOCNOTTY);
                libc::close(fd);
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A detached child leads its own process group, in this process's session, either way.
    #[test]
    fn a_detached_child_leads_its_own_group_in_this_session() {
        for isolated in [true, false] {
            set_isolation(isolated);
            let mut command = std::process::Command::new("/bin/sh");
            command.args(["-c", "echo $$; cut -d' ' -f5,6 /proc/$$/stat"]);
            detach(&mut command);
            let out = command.output().expect("sh runs");
            set_isolation(true);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut lines = text.lines();
            let pid = lines.next().unwrap_or_default().trim().to_string();
            let ids: Vec<String> =
                lines.next().unwrap_or_default().split(' ').map(str::to_string).collect();
            assert_eq!(ids[0], pid, "the child's process group");
            // SAFETY: getsid(0) has no preconditions.
            let own = unsafe { libc::getsid(0) }.to_string();
            assert_eq!(ids[1], own, "the child's session");
        }
    }
}
