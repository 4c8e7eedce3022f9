//! `--events FILE` and `--record DB_URL`: the run with the events callback wrapped around the
//! transcript, its lines written to a file, to the run store, or both.
//!
//! The file is created private (0600, as ansible keeps what it writes about a run), replacing
//! any file of that name. The store is opened, and the run created in it, before any play
//! starts: a store that cannot be opened stops the command before anything connects.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_engine::{RunContext, RunStatus};
use tack_playbook::Playbook;
use tack_report::Callback;
use tack_report::callback::events::EventsCallback;
use tack_server::record::{LineWriter, Recording};
use tack_server::store::NewRun;

/// Where the event lines go.
pub(super) struct Sinks {
    file: Option<(PathBuf, BufWriter<File>)>,
    record: Option<(String, Recording)>,
}

fn events_error(path: &Path, e: &std::io::Error) -> Diagnostic {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Diagnostic::new(format!(
            "Unable to write the events file {}: it is a symbolic link, and tack writes the \
             events file only at the path given (a link would truncate and re-mode the file \
             it points at)",
            path.display()
        ));
    }
    Diagnostic::new(format!("Unable to write the events file {}: {e}", path.display()))
}

fn record_error(url: &str, e: &dyn std::fmt::Display) -> Diagnostic {
    Diagnostic::new(format!("Unable to record the run in {}: {e}", tack_server::store::redact(url)))
}

impl Sinks {
    /// Opens what was asked for: the file, the store (creating the run in it), or both.
    pub(super) fn open(
        events: Option<&Path>,
        record: Option<&str>,
        mode: &str,
        playbooks: &[PathBuf],
    ) -> Result<Sinks, Diagnostic> {
        let file = match events {
            None => None,
            Some(path) => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    // A symbolic link is not followed (issue 24: the run's user may not
                    // have meant the file it points at).
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(path)
                    // A file that was there keeps its old mode on open: made private like a
                    // new one.
                    .and_then(|f| {
                        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
                        Ok(f)
                    })
                    .map_err(|e| events_error(path, &e))?;
                Some((path.to_path_buf(), BufWriter::new(file)))
            }
        };
        // A run `tack serve` claimed and started this process for (`tack_server::runner`).
        let served = match std::env::var(tack_server::runner::RUN_ENV)
            .ok()
            .zip(std::env::var_os(tack_server::runner::DB_FILE_ENV))
        {
            None => None,
            Some((run, file)) => {
                let url = tack_server::runner::take_db_url(Path::new(&file)).map_err(|e| {
                    Diagnostic::new(format!(
                        "Unable to read the run store's address from {}: {e}",
                        Path::new(&file).display()
                    ))
                })?;
                Some((run, url))
            }
        };
        let record = match (record, served) {
            (None, Some((run, url))) => {
                let (id, attempt) = run
                    .rsplit_once(':')
                    .and_then(|(id, n)| Some((id.to_string(), n.parse::<i64>().ok()?)))
                    .ok_or_else(|| {
                        Diagnostic::new(format!(
                            "{} must be ID:ATTEMPT, not {run:?}",
                            tack_server::runner::RUN_ENV
                        ))
                    })?;
                let recording =
                    Recording::attach(&url, &id, attempt).map_err(|e| record_error(&url, &e))?;
                Some((url, recording))
            }
            (None, None) => None,
            (Some(url), _) => {
                let host = crate::cmd::serve::hostname();
                let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
                let run = NewRun {
                    incarnation: None,
                    mode: mode.to_string(),
                    playbook: playbooks
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                    started_by: format!("{user}@{host}"),
                };
                let recording =
                    Recording::start(url, run, &host).map_err(|e| record_error(url, &e))?;
                Some((url.to_string(), recording))
            }
        };
        Ok(Sinks { file, record })
    }

    /// Where a copy of what the run prints goes, when the run is recorded: the store's
    /// transcript, its secrets masked line by line as event lines are.
    pub(super) fn transcript(&self) -> Option<MaskedLines> {
        let (_, recording) = self.record.as_ref()?;
        Some(MaskedLines { to: recording.transcript_writer(), partial: Vec::new() })
    }

    /// Runs the plays with the events callback writing to every sink.
    pub(super) fn run(
        self,
        ctx: &RunContext<'_>,
        playbooks: &[Playbook],
        inner: impl Callback,
    ) -> Result<RunStatus, Diagnostic> {
        let Sinks { file, record } = self;
        let (path, file) = file.unzip();
        let (url, recording) = record.unzip();
        let tee = Tee { file, record: recording.as_ref().map(Recording::writer) };
        let mut callback = EventsCallback::new(tee, inner);
        let outcome = tack_engine::run(ctx, playbooks, &mut callback);
        let written = callback.finish();
        let mut recorded = Ok(());
        if let (Some(url), Some(recording)) = (url, recording) {
            let apply_id = recording.apply_id().to_string();
            let (code, error) = match &outcome {
                Ok(status) => (Some(status.exit_code()), None),
                Err(diag) => (None, Some(diag.brief())),
            };
            recorded = recording.finish(code, error).map_err(|e| record_error(&url, &e));
            if recorded.is_ok() {
                eprintln!("tack: the run is recorded as {apply_id}");
            }
        }
        let status = match outcome {
            Ok(status) => status,
            Err(diag) => {
                // The run's own error is the one to act on; the store's is not lost.
                if let Err(store) = recorded {
                    tack_diag::warn(&store);
                }
                return Err(diag);
            }
        };
        recorded?;
        if let Err(e) = written
            && let Some(path) = path
        {
            return Err(events_error(&path, &e));
        }
        Ok(status)
    }
}

/// The event lines to the file and to the recorder alike.
struct Tee {
    file: Option<BufWriter<File>>,
    record: Option<LineWriter>,
}

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(file) = &mut self.file {
            file.write_all(buf)?;
        }
        // A recorder that stopped reports why when the run ends; the file is still written.
        if let Some(record) = &mut self.record {
            let _ = record.write_all(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(file) = &mut self.file {
            file.flush()?;
        }
        Ok(())
    }
}

/// What the run prints, to its output and (recorded) to the store's transcript.
pub(super) struct Printed<W> {
    pub out: W,
    pub copy: Option<MaskedLines>,
}

impl<W: Write> Write for Printed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        // A recorder that stopped reports why when the run ends; the output goes on.
        if let Some(copy) = &mut self.copy {
            let _ = copy.write_all(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Complete lines, each with the run's secrets masked (`tack_vault::sealed::mask_printed`), to
/// the recorder.
pub(super) struct MaskedLines {
    to: LineWriter,
    partial: Vec<u8>,
}

impl Write for MaskedLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line);
            match tack_vault::sealed::mask_printed(&text) {
                Some(masked) => self.to.write_all(masked.as_bytes())?,
                None => self.to.write_all(&line)?,
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
