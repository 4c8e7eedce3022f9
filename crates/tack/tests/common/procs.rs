//! The machine's process table as the tests read it: the processes whose command line names
//! a marker (what a stopped run left behind), and the processes below a given one.
// Each test binary that includes this uses some of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// The command lines naming `marker` (but a `touch` of it, which ends by itself), after
/// giving stopped processes a moment to go.
pub(crate) fn lingering(marker: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found: Vec<String> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(marker) && !c.contains("touch"))
            .collect();
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every process id on this machine.
fn pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// A process's parent, from `/proc/PID/stat` (after the command name, which may hold spaces).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
}

/// The processes `root` started.
pub(crate) fn children(root: i32) -> Vec<i32> {
    pids().into_iter().filter(|pid| parent_of(*pid) == Some(root)).collect()
}

/// Every process below `root` (children, their children, ...).
pub(crate) fn descendants(root: i32) -> Vec<i32> {
    let all: Vec<(i32, Option<i32>)> = pids().into_iter().map(|p| (p, parent_of(p))).collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|(_, pp)| *pp == Some(parent)).map(|(p, _)| *p));
        i += 1;
    }
    found.remove(0);
    found
}
