//! Writing what `fetch` brought under its `dest` directory without following a symbolic link
//! below it, at the moment of writing: every directory is opened relative to its parent with
//! `O_NOFOLLOW` (made with `mkdirat` when missing), and the file is opened the same way. A
//! link swapped in between fetch's check and its write (a race the host's naming of the path
//! invites) makes the write fail rather than land where the link points.
//!
//! Owns the descriptors of one write; which path is allowed is `fetch`'s decision.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Why a confined write failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    #[error("{0} is a symbolic link, which fetch does not follow")]
    Link(String),
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

fn c_name(name: &std::ffi::OsStr) -> Result<CString, WriteError> {
    CString::new(name.as_bytes()).map_err(|_| {
        WriteError::Io(
            name.to_string_lossy().into_owned(),
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        )
    })
}

fn open_at(dir: &OwnedFd, name: &CString, flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: dir is an open descriptor and name a NUL-terminated string, both alive for the
    // call; the result is checked before it is owned.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by openat and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Writes `bytes` to `root`/`rest` (`rest` relative, of plain components), making the
/// directories on the way as `create_dir_all` would, following no symbolic link below
/// `root`. An existing file keeps its mode, as a plain write keeps it.
pub(crate) fn write_under(root: &Path, rest: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let shown = |upto: &Path| root.join(upto).display().to_string();
    let root_c = CString::new(root.as_os_str().as_bytes()).map_err(|_| {
        WriteError::Io(shown(Path::new("")), std::io::ErrorKind::InvalidInput.into())
    })?;
    // The root is the user's own `dest`, followed as given, and made when missing.
    let open_root = || {
        // SAFETY: root_c is a NUL-terminated string alive for the call; checked below.
        let fd = unsafe { libc::open(root_c.as_ptr(), libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd was just returned by open and is owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let mut dir = match open_root() {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            std::fs::create_dir_all(root).map_err(|e| WriteError::Io(shown(Path::new("")), e))?;
            open_root()
        }
        other => other,
    }
    .map_err(|e| WriteError::Io(shown(Path::new("")), e))?;
    let parts: Vec<&std::ffi::OsStr> = rest
        .components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(WriteError::Io(shown(rest), std::io::ErrorKind::InvalidInput.into())),
        })
        .collect::<Result<_, _>>()?;
    let Some((file, dirs)) = parts.split_last() else {
        return Err(WriteError::Io(shown(rest), std::io::ErrorKind::InvalidInput.into()));
    };
    let mut walked = std::path::PathBuf::new();
    let dir_flags = libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    for part in dirs {
        walked.push(part);
        let name = c_name(part)?;
        let next = match open_at(&dir, &name, dir_flags, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: dir is open and name NUL-terminated, both alive for the call.
                let made = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) };
                if made < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(WriteError::Io(shown(&walked), e));
                    }
                }
                open_at(&dir, &name, dir_flags, 0)
            }
            other => other,
        };
        dir = next.map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => WriteError::Link(shown(&walked)),
            _ => WriteError::Io(shown(&walked), e),
        })?;
    }
    walked.push(file);
    let name = c_name(file)?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let fd = open_at(&dir, &name, flags, 0o666).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => WriteError::Link(shown(&walked)),
        _ => WriteError::Io(shown(&walked), e),
    })?;
    let mut out = std::fs::File::from(fd);
    out.write_all(bytes).map_err(|e| WriteError::Io(shown(&walked), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_made_and_the_file_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fetched");
        write_under(&root, Path::new("h1/etc/motd"), b"hello").unwrap();
        assert_eq!(std::fs::read(root.join("h1/etc/motd")).unwrap(), b"hello");
        write_under(&root, Path::new("h1/etc/motd"), b"again").unwrap();
        assert_eq!(std::fs::read(root.join("h1/etc/motd")).unwrap(), b"again");
    }

    #[test]
    fn a_link_below_the_root_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fetched");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(root.join("h1")).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("h1/etc")).unwrap();
        let err = write_under(&root, Path::new("h1/etc/motd"), b"x").unwrap_err();
        assert!(matches!(err, WriteError::Link(ref p) if p.ends_with("h1/etc")), "{err}");
        std::os::unix::fs::symlink(elsewhere.join("target"), root.join("h1/file")).unwrap();
        let err = write_under(&root, Path::new("h1/file"), b"x").unwrap_err();
        assert!(matches!(err, WriteError::Link(_)), "{err}");
        assert!(!elsewhere.join("motd").exists() && !elsewhere.join("target").exists());
    }
}
