//! The file side of `ansible-vault`: reading a vault or plaintext from a file or stdin, writing
//! results safely (a fresh `0600` file created exclusively, the old one overwritten with random
//! bytes before removal when it held plaintext), and the editor round trip of `create` and
//! `edit` through a private temporary file that is shredded on every path out.
//!
//! Messages and the order of checks follow ansible-core 2.21's `VaultEditor`. This module knows
//! nothing of command-line flags or of which message goes to stderr when; the `tack vault`
//! command decides that.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use tack_diag::{Diagnostic, Origin};
use tack_py::oserror::os_error as oserror;
use tack_py::path::{abspath, realpath};
use tack_py::repr::{str_list_repr, str_repr};
use zeroize::Zeroizing;

use crate::error::value_excerpt;
use crate::{VaultError, VaultSecrets};

/// Where a command reads from or writes to: a path, or `-` for stdin/stdout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Std,
    Path(PathBuf),
}

impl Target {
    /// `-` is the standard stream; anything else a path, kept as given.
    pub fn from_arg(arg: &str) -> Target {
        if arg == "-" { Target::Std } else { Target::Path(PathBuf::from(arg)) }
    }

    /// The name ansible uses for it in messages.
    fn name(&self) -> String {
        match self {
            Target::Std => "-".to_string(),
            Target::Path(p) => p.display().to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("Unable to read source file ({path}): {}", read_detail(.source, .path))]
    Read { path: String, source: io::Error },
    #[error("Destination '{}' not writable", .0.display())]
    NotWritable(PathBuf),
    #[error("Vault file got recreated while we were operating on it.")]
    Recreated,
    #[error("Problem creating temporary vault file: {}", oserror(.source, .path))]
    Create { path: PathBuf, source: io::Error },
    #[error("Unable to write to temporary vault file: {}", oserror(.source, .path))]
    Write { path: PathBuf, source: io::Error },
    #[error("Unable to write to stdout: {0}")]
    Stdout(io::Error),
    /// `decrypt`, `view`, `edit` and `rekey` wrap the vault's error with the file name.
    #[error("Failed to {} {}: {}", .0.action, str_repr(&.0.name), .0.source)]
    Failed(Box<FailedOp>),
    /// `encrypt` reports the vault's error as it is.
    #[error(transparent)]
    Vault(#[from] VaultError),
    #[error("{0} exists, please use 'edit' instead")]
    Exists(String),
    #[error("Unable to execute the command \"{command}\": {detail}")]
    Editor { command: String, detail: String },
    #[error("Unable to create the temporary directory {}: {}", .path.display(), .source)]
    TempDir { path: PathBuf, source: io::Error },
}

/// The file operation a vault error interrupted, and where the vaulted text came from.
#[derive(Debug)]
pub struct FailedOp {
    pub action: &'static str,
    pub name: String,
    pub origin: Origin,
    pub source: VaultError,
}

fn failed(action: &'static str, name: String, origin: &Origin, source: VaultError) -> FileError {
    FileError::Failed(Box::new(FailedOp { action, name, origin: origin.clone(), source }))
}

fn read_detail(err: &io::Error, path: &str) -> String {
    oserror(err, Path::new(path))
}

impl FileError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            FileError::Failed(op) => Diagnostic::caused_by(
                format!("Failed to {} {}.", op.action, str_repr(&op.name)),
                None,
                op.source.to_diagnostic_at(Some(op.origin.clone())),
            ),
            FileError::Create { path, source } => Diagnostic::caused_by(
                "Problem creating temporary vault file.",
                None,
                Diagnostic::new(oserror(source, path)),
            ),
            FileError::Vault(err) => err.to_diagnostic(),
            other => Diagnostic::new(other.to_string()),
        }
    }
}

impl From<FileError> for Diagnostic {
    fn from(err: FileError) -> Diagnostic {
        err.to_diagnostic()
    }
}

/// What was read, and the origin ansible tags it with (the absolute path, or `<stdin>`).
pub struct Input {
    pub data: Zeroizing<Vec<u8>>,
    pub origin: Origin,
}

/// Reads `source` whole. A path is made absolute first, as ansible does.
pub fn read_data(source: &Target) -> Result<Input, FileError> {
    match source {
        Target::Std => {
            let mut data = Zeroizing::new(Vec::new());
            io::stdin()
                .lock()
                .read_to_end(&mut data)
                .map_err(|source| FileError::Read { path: "-".to_string(), source })?;
            // tack-diag quotes only files; ansible quotes the value itself under `<stdin>`.
            let origin = Origin::described(format!("<stdin>\n\n{}", value_excerpt(&data)));
            Ok(Input { data, origin })
        }
        Target::Path(path) => {
            let abs = abspath(path);
            let mut data = Zeroizing::new(Vec::new());
            fs::File::open(&abs)
                .and_then(|mut f| f.read_to_end(&mut data))
                .map_err(|source| FileError::Read { path: abs.display().to_string(), source })?;
            Ok(Input { data, origin: Origin::file(abs.into()) })
        }
    }
}

/// Overwrites a file with random bytes three times and removes it, so plaintext does not
/// linger in freed blocks (as far as the filesystem allows; ansible makes the same promise).
pub fn shred_file(path: &Path) {
    if !path.is_file() {
        return;
    }
    if let Ok(len) = fs::metadata(path).map(|m| m.len())
        && len > 0
        && let Ok(mut file) = OpenOptions::new().write(true).open(path)
    {
        let mut chunk = vec![0u8; len.min(2 * 1024 * 1024) as usize];
        for _ in 0..3 {
            if file.rewind().is_err() {
                break;
            }
            let mut left = len;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                if getrandom::fill(&mut chunk[..n]).is_err() {
                    chunk[..n].fill(0);
                }
                if file.write_all(&chunk[..n]).is_err() {
                    break;
                }
                left -= n as u64;
            }
            let _ = file.sync_all();
        }
    }
    let _ = fs::remove_file(path);
}

/// Writes `data` to `target`: stdout as raw bytes, or a path as a new `0600` file (the old
/// file shredded first when `shred`, since it may hold plaintext).
pub fn write_data(data: &[u8], target: &Target, shred: bool) -> Result<(), FileError> {
    let path = match target {
        Target::Std => {
            let mut out = io::stdout().lock();
            return out.write_all(data).and_then(|()| out.flush()).map_err(FileError::Stdout);
        }
        Target::Path(path) => path,
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    if !writable(dir) {
        return Err(FileError::NotWritable(dir.to_path_buf()));
    }
    if path.is_file() {
        if shred {
            shred_file(path);
        } else {
            let _ = fs::remove_file(path);
        }
    }
    let mut file =
        OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(path).map_err(
            |source| match source.kind() {
                io::ErrorKind::AlreadyExists => FileError::Recreated,
                _ => FileError::Create { path: path.clone(), source },
            },
        )?;
    // The mode given at creation is filtered by the umask; ansible sets 077 around this.
    let _ = file.set_permissions(fs::Permissions::from_mode(0o600));
    file.write_all(data).map_err(|source| FileError::Write { path: path.clone(), source })
}

/// `os.access(dir, W_OK)`; the empty path (a bare relative name's parent) is not writable to
/// Python either.
fn writable(dir: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    !dir.as_os_str().is_empty() && unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0
}

/// Moves the edited result `src` over `dest`, keeping `dest`'s mode and owner.
fn shuffle_files(src: &Path, dest: &Path) -> io::Result<()> {
    let prev = fs::metadata(dest).ok().filter(|m| m.is_file());
    if prev.is_some() {
        fs::remove_file(dest)?;
    }
    if fs::rename(src, dest).is_err() {
        fs::copy(src, dest)?;
        fs::remove_file(src)?;
    }
    if let Some(prev) = prev {
        fs::set_permissions(dest, fs::Permissions::from_mode(prev.mode()))?;
        let _ = std::os::unix::fs::chown(dest, Some(prev.uid()), Some(prev.gid()));
    }
    Ok(())
}

/// A temporary plaintext file that is shredded however the edit ends.
struct PlainTemp {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for PlainTemp {
    fn drop(&mut self) {
        shred_file(&self.path);
    }
}

/// How to run the editor, and where its private temporary files go.
#[derive(Clone, Debug)]
pub struct EditorSettings {
    /// `editor` (`ANSIBLE_EDITOR`, `EDITOR`, default `vi`), split with shell rules.
    pub command: String,
    /// ansible's local temporary directory (`~/.ansible/tmp`); a private directory is made in it.
    pub local_tmp: PathBuf,
}

/// Runs `argv`, waiting for it; the error text is Python's for `subprocess.check_call`.
fn run_editor(argv: &[String]) -> Result<(), String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("list index out of range".to_string());
    };
    let status = Command::new(program)
        .args(args)
        .status()
        .map_err(|err| oserror(&err, Path::new(program)))?;
    if status.success() {
        return Ok(());
    }
    let list = str_list_repr(argv);
    Err(match status.code() {
        Some(code) => format!("Command '{list}' returned non-zero exit status {code}."),
        None => {
            use std::os::unix::process::ExitStatusExt;
            let signal = status.signal().unwrap_or(0);
            format!("Command '{list}' died with signal {signal}.")
        }
    })
}

/// Opens `existing` plaintext (or an empty file) in the editor and returns what the person
/// saved, or `None` when nothing changed. The temporary file lives in a private directory
/// under `settings.local_tmp` and is shredded before this returns.
fn edit_in_editor(
    name: &Path,
    existing: Option<&[u8]>,
    settings: &EditorSettings,
) -> Result<Option<Zeroizing<Vec<u8>>>, FileError> {
    fs::create_dir_all(&settings.local_tmp)
        .map_err(|source| FileError::TempDir { path: settings.local_tmp.clone(), source })?;
    let dir = tempfile::Builder::new()
        .prefix("tack-local-")
        .tempdir_in(&settings.local_tmp)
        .map_err(|source| FileError::TempDir { path: settings.local_tmp.clone(), source })?;
    // ansible names the temporary file with `os.path.splitext(realpath(name))[1]`.
    let real = realpath(name).to_string_lossy().into_owned();
    let ext = tack_py::path::splitext(&real).1;
    let file = tempfile::Builder::new()
        .prefix("tmp")
        .suffix(ext)
        .tempfile_in(dir.path())
        .map_err(|source| FileError::TempDir { path: dir.path().to_path_buf(), source })?;
    let (mut handle, temp_path) = file
        .keep()
        .map_err(|err| FileError::TempDir { path: dir.path().to_path_buf(), source: err.error })?;
    let temp = PlainTemp { path: temp_path, _dir: dir };
    if let Some(data) = existing.filter(|d| !d.is_empty()) {
        handle
            .write_all(data)
            .map_err(|source| FileError::Write { path: temp.path.clone(), source })?;
    }
    drop(handle);

    // `shlex.split`, not a shell's rules: `#` starts no comment and `\$` stays as written.
    let mut argv = tack_py::shlex::split(&settings.command).map_err(|err| FileError::Editor {
        command: settings.command.clone(),
        detail: err.to_string(),
    })?;
    argv.push(temp.path.display().to_string());
    run_editor(&argv).map_err(|detail| FileError::Editor { command: argv.join(" "), detail })?;

    let mut edited = Zeroizing::new(Vec::new());
    fs::File::open(&temp.path)
        .and_then(|mut f| f.read_to_end(&mut edited))
        .map_err(|source| FileError::Read { path: temp.path.display().to_string(), source })?;
    if existing.is_some_and(|old| old == edited.as_slice()) {
        return Ok(None);
    }
    Ok(Some(edited))
}

/// Writes `ciphertext` to `dest` through a fresh private file beside the editor's, keeping
/// `dest`'s mode.
fn replace_with(ciphertext: &str, dest: &Path, settings: &EditorSettings) -> Result<(), FileError> {
    let dir = tempfile::Builder::new()
        .prefix("tack-local-")
        .tempdir_in(&settings.local_tmp)
        .map_err(|source| FileError::TempDir { path: settings.local_tmp.clone(), source })?;
    let staged = dir.path().join("vault");
    write_data(ciphertext.as_bytes(), &Target::Path(staged.clone()), false)?;
    shuffle_files(&staged, dest)
        .map_err(|source| FileError::Write { path: dest.to_path_buf(), source })
}

/// `ansible-vault create`: opens an empty file in the editor and saves it encrypted.
pub fn create_file(
    name: &Path,
    secrets: &VaultSecrets,
    password: &[u8],
    vault_id: &str,
    settings: &EditorSettings,
) -> Result<(), FileError> {
    if let Some(dir) = name.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        tack_diag::warn(&Diagnostic::new(format!("{} does not exist, creating...", dir.display())));
        fs::create_dir_all(dir)
            .map_err(|source| FileError::Create { path: dir.to_path_buf(), source })?;
    }
    if name.is_file() {
        return Err(FileError::Exists(name.display().to_string()));
    }
    let Some(plaintext) = edit_in_editor(name, None, settings)? else { return Ok(()) };
    let ciphertext = secrets.encrypt_with(&plaintext, password, Some(vault_id))?;
    replace_with(&ciphertext, name, settings)
}

/// `ansible-vault edit`: decrypts, opens the plaintext in the editor, and saves it again under
/// the same vault id with the secret that opened it, only when it changed.
pub fn edit_file(
    name: &Path,
    secrets: &VaultSecrets,
    settings: &EditorSettings,
) -> Result<(), FileError> {
    let real = realpath(name);
    let input = read_data(&Target::Path(real.clone()))?;
    let failed = |source| failed("edit", real.display().to_string(), &input.origin, source);
    let opened = secrets.decrypt_and_get_secret(&input.data).map_err(failed)?;
    let envelope = secrets.parse_envelope(&input.data).map_err(failed)?;
    let Some(edited) = edit_in_editor(&real, Some(&opened.plaintext), settings)? else {
        return Ok(());
    };
    let password = secrets.secrets()[opened.secret].password();
    let ciphertext = secrets.encrypt_with(&edited, password, Some(&envelope.vault_id))?;
    replace_with(&ciphertext, &real, settings)
}

/// `ansible-vault encrypt` of one file (or stdin) to `output` (or back in place).
pub fn encrypt_file(
    source: &Target,
    output: Option<&Target>,
    secrets: &VaultSecrets,
    password: &[u8],
    vault_id: &str,
) -> Result<(), FileError> {
    let source = real_target(source);
    let input = read_data(&source)?;
    let ciphertext = secrets.encrypt_with(&input.data, password, Some(vault_id))?;
    write_data(ciphertext.as_bytes(), output.unwrap_or(&source), true)
}

/// `ansible-vault decrypt` of one file (or stdin) to `output` (or back in place).
pub fn decrypt_file(
    source: &Target,
    output: Option<&Target>,
    secrets: &VaultSecrets,
) -> Result<(), FileError> {
    let source = real_target(source);
    let input = read_data(&source)?;
    let plaintext = secrets
        .decrypt_and_get_secret(&input.data)
        .map_err(|err| failed("decrypt", source.name(), &input.origin, err))?;
    write_data(&plaintext.plaintext, output.unwrap_or(&source), false)
}

/// `ansible-vault view`'s decryption: the plaintext of one file (or stdin).
pub fn plaintext(source: &Target, secrets: &VaultSecrets) -> Result<Zeroizing<Vec<u8>>, FileError> {
    let input = read_data(source)?;
    secrets
        .decrypt_and_get_secret(&input.data)
        .map(|d| d.plaintext)
        .map_err(|err| failed("view", source.name(), &input.origin, err))
}

/// `ansible-vault rekey` of one file: decrypt with `secrets`, encrypt with `new_password`
/// under `new_vault_id`, keep the file's mode and owner.
pub fn rekey_file(
    name: &Path,
    secrets: &VaultSecrets,
    new_password: &[u8],
    new_vault_id: &str,
) -> Result<(), FileError> {
    let real = realpath(name);
    let prev = fs::metadata(&real)
        .map_err(|source| FileError::Read { path: real.display().to_string(), source })?;
    let input = read_data(&Target::Path(real.clone()))?;
    let opened = secrets
        .decrypt_and_get_secret(&input.data)
        .map_err(|err| failed("rekey", real.display().to_string(), &input.origin, err))?;
    let ciphertext = secrets.encrypt_with(&opened.plaintext, new_password, Some(new_vault_id))?;
    let target = Target::Path(real.clone());
    write_data(ciphertext.as_bytes(), &target, true)?;
    fs::set_permissions(&real, fs::Permissions::from_mode(prev.mode()))
        .map_err(|source| FileError::Write { path: real.clone(), source })?;
    let _ = std::os::unix::fs::chown(&real, Some(prev.uid()), Some(prev.gid()));
    Ok(())
}

/// ansible-vault's umask of `077` for the whole command, restored when dropped: every file and
/// directory it creates is private to the user.
pub struct RestrictiveUmask {
    previous: libc::mode_t,
}

impl RestrictiveUmask {
    pub fn set() -> RestrictiveUmask {
        // SAFETY: umask only swaps the process's file mode mask; it cannot fail.
        let previous = unsafe { libc::umask(0o077) };
        RestrictiveUmask { previous }
    }
}

impl Drop for RestrictiveUmask {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::umask(self.previous) };
    }
}

/// A path with its symlinks followed (ansible's `_real_path`); `-` stays `-`.
fn real_target(target: &Target) -> Target {
    match target {
        Target::Std => Target::Std,
        Target::Path(p) => Target::Path(realpath(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_are_private_and_replace_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        write_data(b"new", &Target::Path(path.clone()), true).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn shredding_removes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain");
        fs::write(&path, "secret plaintext").unwrap();
        shred_file(&path);
        assert!(!path.exists());
    }
}
