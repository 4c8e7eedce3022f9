//! `tack playbook --record DB_URL`: a command-line run kept in the run store beside the runs
//! a server starts. The engine runs as always; its event lines go, through [`LineWriter`], to
//! a thread of this module that stores each one (in its own transaction) while the run goes
//! on, so the run is never held up by the database.
//!
//! The store is opened and the run created before [`Recording::start`] returns: a database
//! that cannot be reached stops the command before anything connects to a host.

use std::io::Write;
use std::thread::JoinHandle;

use tokio::sync::mpsc;

use crate::ingest::Ingest;
use crate::store::{NewRun, RunStatus, Store, StoreError};

enum Target {
    /// A command-line run: stored as running on this controller (`host:pid:...`), which
    /// says it is alive while the run goes on, as a server does, so that when this process
    /// dies the next server or recording run that looks marks the run `interrupted`.
    New {
        run: NewRun,
        host: String,
    },
    Claimed(String, i64),
}

/// How often a command-line run's controller says it is alive (the queue's sweep takes one
/// silent for `crate::queue::STALE_MS` as gone).
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(3);

enum Message {
    Line(String),
    /// A line of what the run printed.
    Transcript(String),
    Finish {
        exit_code: Option<u8>,
        error: Option<String>,
    },
    /// The process is being interrupted (SIGINT, SIGTERM): the run ends `interrupted`, and
    /// `done` hears when that is stored.
    Interrupted {
        signal: String,
        done: std::sync::mpsc::Sender<()>,
    },
}

pub struct Recording {
    sender: mpsc::UnboundedSender<Message>,
    thread: JoinHandle<Result<(), StoreError>>,
    apply_id: String,
    /// Until a command-line run finishes, an interrupt ends it `interrupted` first (a run
    /// the server started is the server's to mark: `cancelled`, or `interrupted` by its
    /// sweep).
    _interrupt: Option<tack_diag::interrupt::Registered>,
}

impl Recording {
    /// Opens the store at `url`, marks `interrupted` the runs of controllers found gone (a
    /// command-line run whose process died, a server that stopped), and stores `run` as
    /// running on this process of machine `host`.
    pub fn start(url: &str, run: NewRun, host: &str) -> Result<Recording, StoreError> {
        Recording::open(url, Target::New { run, host: host.to_string() })
    }

    /// Opens the store at `url` to record run `apply_id`, which `tack serve` queued and
    /// claimed as `attempt` before starting this process.
    pub fn attach(url: &str, apply_id: &str, attempt: i64) -> Result<Recording, StoreError> {
        Recording::open(url, Target::Claimed(apply_id.to_string(), attempt))
    }

    fn open(url: &str, target: Target) -> Result<Recording, StoreError> {
        let served = matches!(target, Target::Claimed(..));
        let (sender, mut receiver) = mpsc::unbounded_channel::<Message>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<String, StoreError>>();
        let url = url.to_string();
        let thread = std::thread::Builder::new()
            .name("tack-record".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                let runtime = match runtime {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(StoreError::Corrupt(format!(
                            "cannot start the recorder: {e}"
                        ))));
                        return Ok(());
                    }
                };
                runtime.block_on(async move {
                    let opened = async {
                        let store = Store::open(&url).await?;
                        let (id, attempt, me) = match target {
                            Target::New { run, host } => {
                                let pid = i64::from(std::process::id());
                                let me = format!("{host}:{pid}:{}", crate::store::new_run_id());
                                store.heartbeat(&me, &host, pid).await?;
                                store.sweep_interrupted(&host, &me).await?;
                                (store.start_run(&run, &me).await?, 1, Some((me, host, pid)))
                            }
                            Target::Claimed(id, attempt) => (id, attempt, None),
                        };
                        Ok::<_, StoreError>((store, id, attempt, me))
                    };
                    let (store, id, attempt, me) = match opened.await {
                        Ok(v) => v,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return Ok(());
                        }
                    };
                    let _ = ready_tx.send(Ok(id.clone()));
                    let mut ingest = Ingest::new(id.clone());
                    let mut printed = 0i64;
                    let mut failed: Option<StoreError> = None;
                    loop {
                        let message = match &me {
                            None => receiver.recv().await,
                            Some((controller, host, pid)) => {
                                match tokio::time::timeout(HEARTBEAT, receiver.recv()).await {
                                    Ok(message) => message,
                                    Err(_) => {
                                        // A store that misses one is asked again next time;
                                        // only a silence past the sweep's limit counts.
                                        let _ = store.heartbeat(controller, host, *pid).await;
                                        continue;
                                    }
                                }
                            }
                        };
                        let Some(message) = message else { break };
                        match message {
                            Message::Line(line) if failed.is_none() => {
                                if let Err(e) = ingest.line(&store, &line).await {
                                    failed = Some(e);
                                }
                            }
                            Message::Line(_) => {}
                            Message::Transcript(line) if failed.is_none() => {
                                printed += 1;
                                if let Err(e) = store.add_transcript_line(&id, printed, &line).await
                                {
                                    failed = Some(e);
                                }
                            }
                            Message::Transcript(_) => {}
                            Message::Finish { exit_code, error } => {
                                let status = match (&failed, exit_code) {
                                    (None, Some(code)) => RunStatus::from_exit_code(code),
                                    _ => RunStatus::Failed,
                                };
                                // A run whose events could not all be kept says so.
                                let lost = failed.as_ref().map(|e| format!("events lost: {e}"));
                                let error = error.or(lost);
                                store
                                    .finish_run(
                                        &id,
                                        attempt,
                                        status,
                                        exit_code.map(i64::from),
                                        error.as_deref(),
                                    )
                                    .await?;
                                break;
                            }
                            Message::Interrupted { signal, done } => {
                                let error = format!("interrupted by {signal}");
                                let stored = store
                                    .finish_run(
                                        &id,
                                        attempt,
                                        RunStatus::Interrupted,
                                        None,
                                        Some(&error),
                                    )
                                    .await;
                                let _ = done.send(());
                                stored?;
                                break;
                            }
                        }
                    }
                    if let Some((controller, ..)) = &me {
                        let _ = store.forget_controller(controller).await;
                    }
                    match failed {
                        Some(e) => Err(e),
                        None => Ok(()),
                    }
                })
            })
            .map_err(|e| StoreError::Corrupt(format!("cannot start the recorder: {e}")))?;
        let apply_id = match ready_rx.recv() {
            Ok(Ok(id)) => id,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => {
                return Err(match thread.join() {
                    Ok(Err(e)) => e,
                    _ => StoreError::Corrupt("the recorder stopped before the run".into()),
                });
            }
        };
        let on_interrupt = sender.clone();
        let interrupt = (!served).then(|| {
            tack_diag::interrupt::undo_on_interrupt(move || {
                let (done, stored) = std::sync::mpsc::channel();
                let signal = tack_diag::interrupt::signal_name();
                if on_interrupt.send(Message::Interrupted { signal, done }).is_ok() {
                    // A store that does not answer soon is left as it is: the next server marks
                    // a run whose process is gone `interrupted` too.
                    let _ = stored.recv_timeout(std::time::Duration::from_secs(5));
                }
            })
        });
        Ok(Recording { sender, thread, apply_id, _interrupt: interrupt })
    }

    pub fn apply_id(&self) -> &str {
        &self.apply_id
    }

    /// Where the events callback writes: each complete line is stored.
    pub fn writer(&self) -> LineWriter {
        LineWriter { sender: self.sender.clone(), partial: Vec::new(), transcript: false }
    }

    /// Where what the run prints is copied (its secrets masked by the caller): each complete
    /// line is stored as the run's transcript.
    pub fn transcript_writer(&self) -> LineWriter {
        LineWriter { sender: self.sender.clone(), partial: Vec::new(), transcript: true }
    }

    /// Ends the run with its exit code (`None` with `error` for a run that stopped on an
    /// error), once every line sent before is stored.
    pub fn finish(self, exit_code: Option<u8>, error: Option<String>) -> Result<(), StoreError> {
        let _ = self.sender.send(Message::Finish { exit_code, error });
        drop(self.sender);
        match self.thread.join() {
            Ok(result) => result,
            Err(_) => Err(StoreError::Corrupt("the recorder stopped unexpectedly".into())),
        }
    }
}

/// A `Write` that hands each complete line to the recorder.
pub struct LineWriter {
    sender: mpsc::UnboundedSender<Message>,
    partial: Vec<u8>,
    /// The lines are the transcript's, not events.
    transcript: bool,
}

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..end]).into_owned();
            let message =
                if self.transcript { Message::Transcript(line) } else { Message::Line(line) };
            self.sender.send(message).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the recorder has stopped")
            })?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
