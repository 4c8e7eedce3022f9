//! A file staged on the task's host for one sub-task: `copy`, `template`, `assemble` and
//! `script` put their bytes over the host's connection ([`Staged::put`]) and hand the path
//! to the module or command; the file is removed when the [`Staged`] is dropped, as soon as
//! the sub-task that needed it has ended, whether it succeeded, failed or consumed the file.
//!
//! Owns only that lifetime; where and how the bytes are kept is the connection's.

use tack_links::{Connection, ConnectionError, StagedFile};

pub(crate) struct Staged<'a> {
    conn: &'a dyn Connection,
    file: Option<StagedFile>,
}

impl<'a> Staged<'a> {
    /// Stages `bytes` as `name` (the name ansible would give the file; the connection may
    /// choose its own), runnable by its owner when `executable`.
    pub(crate) fn put(
        conn: &'a dyn Connection,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<Self, ConnectionError> {
        let file = conn.stage(bytes, name, executable)?;
        Ok(Staged { conn, file: Some(file) })
    }

    /// Where the module finds the file on the host.
    pub(crate) fn path(&self) -> &str {
        self.file.as_ref().map_or("", |f| f.path())
    }
}

/// The refusal of a controller file the connection could not send, made before it is read.
pub(super) fn too_big(conn: &dyn Connection, path: &std::path::Path) -> Option<String> {
    let limit = conn.stage_limit()?;
    let len = std::fs::metadata(path).ok()?.len();
    (len > limit as u64).then(|| tack_connect::too_big(len, limit))
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let path = file.path().to_string();
            if let Err(e) = self.conn.unstage(file) {
                // The sub-task's own result stands; a file left behind is said out loud.
                tack_diag::warn(&tack_diag::Diagnostic::new(format!(
                    "the staged file {path} could not be removed: {e}"
                )));
            }
        }
    }
}
