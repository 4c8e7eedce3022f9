//! Stopping what this process started when its run ends early: a controller interrupted
//! (SIGINT, SIGTERM) and an agent whose link dropped stop the module processes they started,
//! and everything those started, rather than leave them running as orphans.
//!
//! The processes are found in `/proc`, not tracked as they are spawned: a module's children
//! (a shell's pipeline, a package manager's helpers) were never spawned by tack. What is
//! stopped is every descendant in this process's session. An `async` job starts a session of
//! its own (`crate::jobs`) and is meant to outlive the link, as is anything a module
//! detached the same way (a daemon it started); those are left alone, as ansible leaves them.
//!
//! Owns finding and signalling the processes; it must not decide when a run ends.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ENDING: AtomicBool = AtomicBool::new(false);

/// From now on the process is ending (the controller interrupted): every thread that is
/// about to start a process, or a host's work, stops at [`hold_if_ending`] instead, so the
/// processes [`stop`] ends are not replaced by new ones while it works.
pub fn begin_ending() {
    ENDING.store(true, Ordering::SeqCst);
}

/// Parks the calling thread for good once the process is ending.
pub fn hold_if_ending() {
    while ENDING.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

/// One process as `/proc/<pid>/stat` describes it.
struct Entry {
    parent: i32,
    session: i32,
}

/// Every process's parent and session; unreadable entries (gone already) are skipped.
fn table() -> BTreeMap<i32, Entry> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(parsed) = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
        {
            out.insert(pid, parsed);
        }
    }
    out
}

/// The parent and session of a `/proc/<pid>/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces and parentheses itself: the fields that follow are read
/// after its last `)`.
fn parse_stat(stat: &str) -> Option<Entry> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // state, ppid, pgrp, session
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let _group = fields.next()?;
    let session = fields.next()?.parse().ok()?;
    Some(Entry { parent, session })
}

/// This process's descendants in its own session, parents before their children.
pub fn in_session() -> Vec<i32> {
    // SAFETY: getsid(0) only reads this process's session id.
    let session = unsafe { libc::getsid(0) };
    under(std::process::id() as i32, session)
}

/// The descendants of `root` in `session`, parents before their children.
fn under(root: i32, session: i32) -> Vec<i32> {
    let table = table();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, entry) in &table {
            if entry.parent == parent && entry.session == session && *pid != root {
                found.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    found
}

/// Stops this process's descendants in its session: SIGTERM, and SIGKILL for what is still
/// there after `grace` (a module that ignores SIGTERM, or a process started meanwhile).
/// Returns how many were signalled.
pub fn stop(grace: Duration) -> usize {
    // SAFETY: getsid(0) only reads this process's session id.
    let session = unsafe { libc::getsid(0) };
    stop_under(std::process::id() as i32, session, grace)
}

fn stop_under(root: i32, session: i32, grace: Duration) -> usize {
    let first = under(root, session);
    for pid in &first {
        // SAFETY: kill has no memory preconditions; a process already gone gives ESRCH.
        unsafe { libc::kill(*pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + grace;
    loop {
        // A zombie stays in the table until its parent reaps it; it needs no signal.
        let left: Vec<i32> = under(root, session).into_iter().filter(|p| !is_zombie(*p)).collect();
        if left.is_empty() {
            return first.len();
        }
        if Instant::now() >= deadline {
            return first.len() + kill_until_gone(root, session);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL for every descendant, again until two looks in a row find none (a thread may
/// have been starting one as the first look was taken); how many were killed.
fn kill_until_gone(root: i32, session: i32) -> usize {
    let mut killed = 0;
    let mut quiet = 0;
    for _ in 0..50 {
        let left: Vec<i32> = under(root, session).into_iter().filter(|p| !is_zombie(*p)).collect();
        if left.is_empty() {
            quiet += 1;
            if quiet == 2 {
                break;
            }
        } else {
            quiet = 0;
        }
        for pid in &left {
            // SAFETY: kill has no memory preconditions; a process already gone gives ESRCH.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        killed += left.len();
        std::thread::sleep(Duration::from_millis(20));
    }
    killed
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rfind(')').map(|at| stat[at + 1..].trim_start().starts_with('Z')))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis_of_the_command_name() {
        let entry = parse_stat("4242 (sh (odd) name) S 17 4242 99 0 -1 4194560").unwrap();
        assert_eq!((entry.parent, entry.session), (17, 99));
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn descendants_are_stopped_but_one_in_a_session_of_its_own_is_left() {
        // A shell stands in for this process (stopping this test's own descendants would
        // reach the other tests' children).
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 30 & sleep 30 & sleep 30"])
            .spawn()
            .unwrap();
        let root = shell.id() as i32;
        // SAFETY: getsid(0) only reads this process's session id.
        let session = unsafe { libc::getsid(0) };
        let everything = || {
            let table = table();
            table.iter().filter(|(_, e)| e.parent == root).map(|(p, _)| *p).collect::<Vec<_>>()
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while everything().len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let children = everything();
        let found = under(root, session);
        assert_eq!(found.len(), 2, "the two sleeps in the session: {found:?} of {children:?}");
        let detached: Vec<i32> = children.into_iter().filter(|p| !found.contains(p)).collect();
        assert_eq!(detached.len(), 1, "{detached:?}");
        stop_under(root, session, Duration::from_secs(2));
        assert!(shell.wait().is_ok(), "the shell ends once its foreground child is stopped");
        // SAFETY: signal 0 only checks the process exists.
        assert_eq!(unsafe { libc::kill(detached[0], 0) }, 0, "the detached one still runs");
        // SAFETY: as above, ending it.
        unsafe { libc::kill(detached[0], libc::SIGKILL) };
    }
}
