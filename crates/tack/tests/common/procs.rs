//! The processes whose command line names a marker: what a stopped run left behind.

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
