//! The controller's side of the queue: up to `max_runs` runs at once, each run as a child
//! `tack playbook` (or `tack plan`) in the incarnation's project directory, recording into the
//! same store as the run `tack serve` claimed. A child is the same engine as the command line,
//! and a run that crashes takes nothing else with it.
//!
//! The child learns which run it records from `TACK_SERVE_RUN` (`ID:ATTEMPT`) and the store
//! from a private file `TACK_SERVE_DB_FILE` names, which it reads and removes at once: a
//! database password is never in the process list nor in an environment the run's modules
//! //! inherit (a local host's `command: env` would print it). It gets SIGTERM when the server
//! dies (`PR_SET_PDEATHSIG`), so a killed server leaves no run going on that nobody watches:
//! the run stops the modules it started and marks itself `interrupted` (the next sweep does
//! if it could not). A cancel sends the same SIGTERM, and SIGKILL after a grace period.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::{Notify, Semaphore};

use crate::incarnations::{Incarnation, Mode};
use crate::queue::Claimed;
use crate::store::{RunStatus, Store, StoreError};

/// The environment variables a child reads its run from.
pub const RUN_ENV: &str = "TACK_SERVE_RUN";
pub const DB_FILE_ENV: &str = "TACK_SERVE_DB_FILE";

/// The store's URL from the file the server wrote for this child, removed once read.
pub fn take_db_url(path: &std::path::Path) -> std::io::Result<String> {
    let url = std::fs::read_to_string(path);
    let removed = std::fs::remove_file(path);
    let url = url?;
    removed?;
    Ok(url.trim().to_string())
}

/// Writes `text` for one child (`kind`: what it is, the file's extension), readable by its
/// owner only: the store's URL, the run's extra vars. Neither goes on the child's command
/// line, where any local user's `ps` would read it.
fn write_private(text: &str, apply_id: &str, attempt: i64, kind: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = std::env::temp_dir()
        .join(format!("tack-serve-{}-{apply_id}-{attempt}.{kind}", std::process::id()));
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
    file.write_all(text.as_bytes())?;
    Ok(path)
}

/// How much of a child's stderr is kept to explain a run that ended without recording.
const STDERR_KEPT: usize = 16 * 1024;

pub struct RunnerConfig {
    /// The `tack` binary the children run.
    pub tack_exe: PathBuf,
    pub db_url: String,
    pub max_runs: usize,
    /// This controller's id in the store, and the machine and process it is.
    pub controller: String,
    pub host: String,
    pub pid: i64,
}

/// The arguments of the child command for `spec`, its extra vars in the file `extra_vars`
/// names (see [`write_private`]).
pub fn child_args(spec: &Incarnation, extra_vars: Option<&std::path::Path>) -> Vec<String> {
    let mut args = vec![if spec.mode == Mode::Plan { "plan" } else { "playbook" }.to_string()];
    if let Some(inventory) = &spec.inventory {
        args.extend(["-i".into(), inventory.clone()]);
    }
    if let Some(file) = extra_vars {
        args.push(format!("--extra-vars=@{}", file.display()));
    }
    if let Some(file) = &spec.vault_password_file {
        args.extend(["--vault-password-file".into(), file.clone()]);
    }
    // Joined to their options, so a value that starts with `-` stays a value.
    if let Some(limit) = &spec.limit {
        args.push(format!("--limit={limit}"));
    }
    if let Some(tags) = &spec.tags {
        args.push(format!("--tags={}", tags.joined()));
    }
    if spec.mode == Mode::Check {
        args.push("--check".into());
    }
    // After `--`: a playbook named like an option stays a playbook.
    args.extend(["--".into(), spec.playbook.clone()]);
    args
}

/// Runs the queue until the process ends: heartbeats, sweeps, claims and runs.
pub async fn run_queue(store: Store, config: Arc<RunnerConfig>, wake: Arc<Notify>) {
    let slots = Arc::new(Semaphore::new(config.max_runs.max(1)));
    let mut last_beat = tokio::time::Instant::now() - Duration::from_secs(60);
    loop {
        if last_beat.elapsed() >= Duration::from_secs(3) {
            last_beat = tokio::time::Instant::now();
            if let Err(e) = store.heartbeat(&config.controller, &config.host, config.pid).await {
                eprintln!("tack serve: the store did not take the heartbeat: {e}");
            }
            if let Err(e) = store.sweep_interrupted(&config.host, &config.controller).await {
                eprintln!("tack serve: cannot look for interrupted runs: {e}");
            }
        }
        let Ok(permit) = slots.clone().acquire_owned().await else { return };
        match store.claim(&config.controller).await {
            Ok(Some(claimed)) => {
                let (store, config) = (store.clone(), config.clone());
                tokio::spawn(async move {
                    let id = claimed.apply_id.clone();
                    if let Err(e) = run_one(&store, &config, claimed).await {
                        eprintln!("tack serve: run {id}: {e}");
                    }
                    drop(permit);
                });
                continue;
            }
            Ok(None) => drop(permit),
            Err(e) => {
                drop(permit);
                eprintln!("tack serve: cannot claim a run: {e}");
            }
        }
        // Queued here wakes at once; queued by another controller is seen within the poll.
        let _ = tokio::time::timeout(Duration::from_millis(500), wake.notified()).await;
    }
}

async fn run_one(store: &Store, config: &RunnerConfig, claimed: Claimed) -> Result<(), StoreError> {
    let Claimed { apply_id, attempt, spec } = claimed;
    let db_file = match write_private(&config.db_url, &apply_id, attempt, "url") {
        Ok(path) => path,
        Err(e) => {
            let error = format!("cannot hand the run its store: {e}");
            store.finish_run(&apply_id, attempt, RunStatus::Failed, None, Some(&error)).await?;
            return Ok(());
        }
    };
    let vars = spec.extra_vars.as_ref().filter(|v| !v.is_empty());
    let vars_file = match vars.map(|v| {
        let text = serde_json::Value::Object(v.clone()).to_string();
        write_private(&text, &apply_id, attempt, "vars.json")
    }) {
        None => None,
        Some(Ok(path)) => Some(path),
        Some(Err(e)) => {
            let _ = std::fs::remove_file(&db_file);
            let error = format!("cannot hand the run its extra vars: {e}");
            store.finish_run(&apply_id, attempt, RunStatus::Failed, None, Some(&error)).await?;
            return Ok(());
        }
    };
    let result =
        run_child(store, config, &apply_id, attempt, &spec, &db_file, vars_file.as_deref()).await;
    // Gone already where the child read it; not left behind where it never started.
    let _ = std::fs::remove_file(&db_file);
    if let Some(file) = vars_file {
        let _ = std::fs::remove_file(file);
    }
    result
}

/// How long a cancelled run has to stop what it started before it is killed.
const CANCEL_GRACE: Duration = Duration::from_secs(10);

async fn run_child(
    store: &Store,
    config: &RunnerConfig,
    apply_id: &str,
    attempt: i64,
    spec: &Incarnation,
    db_file: &std::path::Path,
    vars_file: Option<&std::path::Path>,
) -> Result<(), StoreError> {
    let apply_id = apply_id.to_string();
    let mut command = tokio::process::Command::new(&config.tack_exe);
    command
        .args(child_args(spec, vars_file))
        .current_dir(&spec.project_dir)
        .env(RUN_ENV, format!("{apply_id}:{attempt}"))
        .env(DB_FILE_ENV, db_file)
        .env("ANSIBLE_NOCOLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets a flag of the forked child; it allocates
    // nothing and takes no lock, so it is sound between fork and exec.
    unsafe {
        command.pre_exec(|| {
            // SIGTERM, so the run stops what it started (`tack`'s interrupt handling).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            let error = format!("cannot start {}: {e}", config.tack_exe.display());
            store.finish_run(&apply_id, attempt, RunStatus::Failed, None, Some(&error)).await?;
            return Ok(());
        }
    };
    let mut stderr = child.stderr.take();
    let reader = tokio::spawn(async move {
        let mut kept = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_KEPT {
                    kept.drain(..kept.len() - STDERR_KEPT);
                }
            }
        }
        String::from_utf8_lossy(&kept).into_owned()
    });
    // A cancel asks the run to stop (SIGTERM: it stops the modules it started, on this
    // machine and, through their links, on the hosts), and kills it if it has not ended
    // after CANCEL_GRACE.
    let mut cancelled: Option<tokio::time::Instant> = None;
    let exit = loop {
        tokio::select! {
            exit = child.wait() => break exit,
            () = tokio::time::sleep(Duration::from_millis(300)) => {
                match cancelled {
                    None if store.cancel_requested(&apply_id).await.unwrap_or(false) => {
                        cancelled = Some(tokio::time::Instant::now());
                        if let Some(pid) = child.id().and_then(|p| libc::pid_t::try_from(p).ok()) {
                            // SAFETY: kill has no memory preconditions; the child is ours and
                            // not yet reaped, so the pid is still its.
                            unsafe { libc::kill(pid, libc::SIGTERM) };
                        }
                    }
                    Some(at) if at.elapsed() >= CANCEL_GRACE => {
                        let _ = child.start_kill();
                    }
                    _ => {}
                }
            }
        }
    };
    let cancelled = cancelled.is_some();
    let stderr = reader.await.unwrap_or_default();
    if cancelled {
        store.finish_run(&apply_id, attempt, RunStatus::Cancelled, None, Some("cancelled")).await?;
        return Ok(());
    }
    // A child that ended before recording (a playbook that does not load, an option refused)
    // leaves the run running: it failed, and its error is what it printed.
    if store.status(&apply_id).await? == Some(RunStatus::Running) {
        let code = exit.ok().and_then(|s| s.code()).map(i64::from);
        let error = stderr
            .lines()
            .filter(|l| !l.starts_with("tack: the run is recorded as"))
            .collect::<Vec<_>>()
            .join("\n");
        let error = if error.trim().is_empty() { "the run ended without a result" } else { &error };
        store.finish_run(&apply_id, attempt, RunStatus::Failed, code, Some(error)).await?;
    }
    Ok(())
}
