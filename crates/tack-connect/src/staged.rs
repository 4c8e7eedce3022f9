//! A file staged on a host for one sub-task ([`StagedFile`]), and the controller-side
//! staging [`crate::InProcess`] uses: a fresh private directory under `~/.ansible/tmp`
//! (0700, the file in it 0600, or 0700 when executable), named as ansible's local connection
//! names its own, so that a local host's results read as ansible's do.
//!
//! Owns the handle, the link's size limit and the local directory's life; an agent's staging is `tack_agent::stage`.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::ConnectionError;

/// The largest file a link stages: one blob frame, as the agent's reader takes it.
pub const STAGE_LIMIT: usize = tack_protocol::DEFAULT_MAX_FRAME as usize;

/// A file staged on a host, until [`crate::Connection::unstage`] is given it back.
#[derive(Debug, PartialEq, Eq)]
pub struct StagedFile {
    path: String,
    kind: Kind,
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// A directory of its own on the controller (the `local` connection).
    Local(PathBuf),
    /// A file in an agent's staging directory.
    Agent,
}

impl StagedFile {
    /// Where the module finds the file on the host.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A file a link put on the host by a way of its own (a connection plugin's
    /// `put_file`), removed by that link's own means.
    pub fn elsewhere(path: String) -> Self {
        StagedFile { path, kind: Kind::Agent }
    }

    pub(crate) fn agent(path: String) -> Self {
        StagedFile { path, kind: Kind::Agent }
    }

    /// The path an agent's `unstage` names (`None` for a local file).
    pub(crate) fn agent_path(&self) -> Option<&str> {
        matches!(self.kind, Kind::Agent).then_some(self.path.as_str())
    }
}

/// The refusal of a file over [`STAGE_LIMIT`].
pub(crate) fn check_size(len: usize) -> Result<(), ConnectionError> {
    if len > STAGE_LIMIT {
        return Err(ConnectionError::Stage(too_big(len as u64, STAGE_LIMIT)));
    }
    Ok(())
}

/// The words of a refusal by size: both sizes, and that nothing was sent.
pub fn too_big(len: u64, limit: usize) -> String {
    format!(
        "the file is {len} bytes, over the link's frame limit of {limit} bytes; tack does not \
         send larger files yet"
    )
}

/// Writes `bytes` as `name` in a fresh private directory under `~/.ansible/tmp`.
pub(crate) fn stage_local(
    bytes: &[u8],
    name: &str,
    executable: bool,
) -> Result<StagedFile, ConnectionError> {
    // No frame carries a local file, so no frame limit applies to it.
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(ConnectionError::Stage(format!("'{name}' is not a file name")));
    }
    let fail = |e: std::io::Error| ConnectionError::Stage(e.to_string());
    // SAFETY: getuid cannot fail and touches no memory.
    let home = tack_agent::modules::user_home(unsafe { libc::getuid() })
        .unwrap_or_else(std::env::temp_dir);
    let root = home.join(".ansible").join("tmp");
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&root).map_err(fail)?;
    let mut random = [0u8; 8];
    random_bytes(&mut random).map_err(fail)?;
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let dir = root.join(format!(
        "ansible-tmp-{}.{:07}-{}-{}",
        now.as_secs(),
        now.subsec_nanos() / 100,
        std::process::id(),
        u64::from_le_bytes(random) % 1_000_000_000_000_000,
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&dir).map_err(fail)?;
    let file = dir.join(name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o700 } else { 0o600 })
        .open(&file)
        .and_then(|mut handle| handle.write_all(bytes));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(fail(e));
    }
    Ok(StagedFile { path: file.to_string_lossy().into_owned(), kind: Kind::Local(dir) })
}

/// Removes a local file's directory, whatever is left in it.
pub(crate) fn unstage_local(file: StagedFile) -> Result<(), ConnectionError> {
    match file.kind {
        Kind::Local(dir) => match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ConnectionError::Stage(format!("{}: {e}", dir.display()))),
        },
        Kind::Agent => Err(ConnectionError::Stage(format!(
            "{} was staged by an agent, not on this machine",
            file.path
        ))),
    }
}

fn random_bytes(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}
