//! `str()` of Python's `OSError`, which ansible puts in its messages as the cause of a failed
//! read, write or spawn: `[Errno 2] No such file or directory: 'x.yml'`.

use std::io;
use std::path::Path;

use crate::repr::{bytes_repr, str_repr};

/// The system's text for the error (C's `strerror`), without the ` (os error N)` Rust adds.
pub fn strerror(err: &io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `str(OSError)` for an error about `filename` given as a `str`. An error the system did not
/// raise (no errno) is shown as its own text.
pub fn os_error(err: &io::Error, filename: &Path) -> String {
    with_errno(err, || str_repr(&filename.to_string_lossy()))
}

/// `str(OSError)` for an error about `filename` given as `bytes`: the name shows as `b'...'`.
pub fn os_error_bytes(err: &io::Error, filename: &[u8]) -> String {
    with_errno(err, || bytes_repr(filename))
}

fn with_errno(err: &io::Error, filename: impl FnOnce() -> String) -> String {
    match err.raw_os_error() {
        Some(code) => format!("[Errno {code}] {}: {}", strerror(err), filename()),
        None => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_text_and_name_as_python_prints_them() {
        // Measured: str(OSError) from `open("it's/x")` and `open(b"caf\xc3\xa9")` in CPython.
        let enoent = io::Error::from_raw_os_error(2);
        assert_eq!(
            os_error(&enoent, Path::new("it's/x")),
            "[Errno 2] No such file or directory: \"it's/x\""
        );
        assert_eq!(
            os_error_bytes(&enoent, "café".as_bytes()),
            "[Errno 2] No such file or directory: b'caf\\xc3\\xa9'"
        );
        assert_eq!(strerror(&io::Error::from_raw_os_error(20)), "Not a directory");
    }
}
