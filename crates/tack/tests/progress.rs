//! The status line on terminals (issue 25): under tmux, a slow loop on 20 local hosts shows
//! `N/20 hosts` on the pane while it runs and leaves nothing of it behind; the same playbook
//! piped prints the golden transcript recorded from ansible-core byte for byte (the line is
//! only ever drawn on a terminal's stderr).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The golden case the piped run must match (`tests/golden/run/progress-slow-loop`).
fn case() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/run/progress-slow-loop")
}

fn tmux(socket: &Path, args: &[&str]) -> std::process::Output {
    Command::new("tmux").arg("-S").arg(socket).args(args).output().expect("tmux runs")
}

#[test]
fn a_terminal_shows_hosts_done_while_a_task_runs() {
    if Command::new("tmux").arg("-V").output().is_err() {
        // scripts/test.sh installs tmux; a machine without it cannot show a pane.
        panic!("tmux is missing: scripts/test.sh installs it");
    }
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("tmux.sock");
    let done = dir.path().join("done");
    let out = dir.path().join("stdout.txt");
    // stdout to a file, stderr (the status line's) on the pane; a wide pane so the line fits.
    let command = format!(
        "cd {} && TERM=xterm-256color {} playbook -i hosts site.yml -f 1 > {} ; echo $? > {}; \
         sleep 60",
        case().display(),
        env!("CARGO_BIN_EXE_tack"),
        out.display(),
        done.display()
    );
    let started = tmux(
        &socket,
        &["new-session", "-d", "-x", "120", "-y", "20", "-s", "progress", "sh", "-c", &command],
    );
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    while !done.exists() && Instant::now() < deadline {
        let pane = tmux(&socket, &["capture-pane", "-p", "-t", "progress"]);
        let text = String::from_utf8_lossy(&pane.stdout).into_owned();
        if let Some(line) = text.lines().find(|l| l.contains("/20 hosts")) {
            seen.push(line.trim().to_string());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let pane = tmux(&socket, &["capture-pane", "-p", "-t", "progress"]);
    let after = String::from_utf8_lossy(&pane.stdout).into_owned();
    let _ = tmux(&socket, &["kill-server"]);
    assert_eq!(std::fs::read_to_string(&done).unwrap().trim(), "2", "the run's exit code");
    assert!(!seen.is_empty(), "no status line was drawn");
    // The line counts hosts done and failures so far, and says how long the task has run.
    let line = regex::Regex::new(r"^\S (\d+)/20 hosts(, \d+ failed)?, \d+s$").unwrap();
    for s in &seen {
        assert!(line.is_match(s), "unexpected status line {s:?}");
    }
    assert!(
        seen.iter().any(|s| s.contains(" failed")),
        "the failing host was never counted: {seen:?}"
    );
    assert!(!after.contains("/20 hosts"), "the line was left on the pane:\n{after}");
    // What went to stdout is the golden transcript, untouched by the line.
    let transcript = std::fs::read_to_string(&out).unwrap();
    let golden = std::fs::read_to_string(case().join("expected/stdout")).unwrap();
    let case_dir = case().canonicalize().unwrap();
    assert_eq!(
        times(&transcript.replace(case_dir.to_str().unwrap(), "<CASE>")),
        times(&golden),
        "the transcript under a terminal's status line is the golden one"
    );
}

/// The failed item's timings, which vary from run to run.
fn times(text: &str) -> String {
    let fields = regex::Regex::new(r#""(delta|end|start)": "[^"]*""#).unwrap();
    fields.replace_all(text, r#""$1": "<T>""#).into_owned()
}
