//! `--events FILE`: the run with the events callback wrapped around the transcript. The file
//! is created private (0600, as ansible keeps what it writes about a run), replacing any file
//! of that name.

use std::io::BufWriter;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use tack_diag::Diagnostic;
use tack_engine::callback::events::EventsCallback;
use tack_engine::{Callback, RunContext, RunStatus};
use tack_playbook::Playbook;

pub fn run(
    ctx: &RunContext<'_>,
    playbooks: &[Playbook],
    inner: impl Callback,
    path: &Path,
) -> Result<RunStatus, Diagnostic> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        // A file that was there keeps its old mode on open: made private like a new one.
        .and_then(|f| {
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            Ok(f)
        })
        .map_err(|e| {
            Diagnostic::new(format!("Unable to write the events file {}: {e}", path.display()))
        })?;
    let mut callback = EventsCallback::new(BufWriter::new(file), inner);
    let status = tack_engine::run(ctx, playbooks, &mut callback)?;
    callback.finish().map_err(|e| {
        Diagnostic::new(format!("Unable to write the events file {}: {e}", path.display()))
    })?;
    Ok(status)
}
