//! `str()` of Python's `OSError`, which ansible puts in its messages as the cause of a failed
//! read, write or spawn: `[Errno 2] No such file or directory: 'x.yml'`, and the errno texts
//! inside it (`os.strerror`).
//!
//! The texts are CPython's on Linux with glibc, as the reference prints them, held in a table
//! here rather than asked of the C library: the agent is linked with musl, whose texts differ
//! (`Symbolic link loop` where glibc says `Too many levels of symbolic links`), and a message a
//! host shows must not depend on which libc tack was built with. `tests/corpus/oserror.json`
//! (recorded by `scripts/record-py.py`) pins every entry.

use std::io;
use std::path::Path;

use crate::repr::{bytes_repr, str_repr};

/// The error's text as Python's `OSError.strerror` holds it: [`strerror_code`] of its errno;
/// an error the system did not raise keeps its own text.
pub fn strerror(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => strerror_code(code),
        None => err.to_string(),
    }
}

/// `os.strerror(code)`.
pub fn strerror_code(code: i32) -> String {
    match usize::try_from(code).ok().and_then(|at| STRERROR.get(at)) {
        Some(text) => (*text).to_string(),
        None => format!("Unknown error {code}"),
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

/// `str(OSError)` for an error with no file name: `[Errno 2] No such file or directory`.
pub fn os_error_no_name(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => format!("[Errno {code}] {}", strerror_code(code)),
        None => err.to_string(),
    }
}

fn with_errno(err: &io::Error, filename: impl FnOnce() -> String) -> String {
    match err.raw_os_error() {
        Some(code) => format!("[Errno {code}] {}: {}", strerror_code(code), filename()),
        None => err.to_string(),
    }
}

/// glibc's `strerror` for Linux's errno numbers 0 to 133, as CPython 3.13 reports them.
const STRERROR: [&str; 134] = [
    "Success",
    "Operation not permitted",
    "No such file or directory",
    "No such process",
    "Interrupted system call",
    "Input/output error",
    "No such device or address",
    "Argument list too long",
    "Exec format error",
    "Bad file descriptor",
    "No child processes",
    "Resource temporarily unavailable",
    "Cannot allocate memory",
    "Permission denied",
    "Bad address",
    "Block device required",
    "Device or resource busy",
    "File exists",
    "Invalid cross-device link",
    "No such device",
    "Not a directory",
    "Is a directory",
    "Invalid argument",
    "Too many open files in system",
    "Too many open files",
    "Inappropriate ioctl for device",
    "Text file busy",
    "File too large",
    "No space left on device",
    "Illegal seek",
    "Read-only file system",
    "Too many links",
    "Broken pipe",
    "Numerical argument out of domain",
    "Numerical result out of range",
    "Resource deadlock avoided",
    "File name too long",
    "No locks available",
    "Function not implemented",
    "Directory not empty",
    "Too many levels of symbolic links",
    "Unknown error 41",
    "No message of desired type",
    "Identifier removed",
    "Channel number out of range",
    "Level 2 not synchronized",
    "Level 3 halted",
    "Level 3 reset",
    "Link number out of range",
    "Protocol driver not attached",
    "No CSI structure available",
    "Level 2 halted",
    "Invalid exchange",
    "Invalid request descriptor",
    "Exchange full",
    "No anode",
    "Invalid request code",
    "Invalid slot",
    "Unknown error 58",
    "Bad font file format",
    "Device not a stream",
    "No data available",
    "Timer expired",
    "Out of streams resources",
    "Machine is not on the network",
    "Package not installed",
    "Object is remote",
    "Link has been severed",
    "Advertise error",
    "Srmount error",
    "Communication error on send",
    "Protocol error",
    "Multihop attempted",
    "RFS specific error",
    "Bad message",
    "Value too large for defined data type",
    "Name not unique on network",
    "File descriptor in bad state",
    "Remote address changed",
    "Can not access a needed shared library",
    "Accessing a corrupted shared library",
    ".lib section in a.out corrupted",
    "Attempting to link in too many shared libraries",
    "Cannot exec a shared library directly",
    "Invalid or incomplete multibyte or wide character",
    "Interrupted system call should be restarted",
    "Streams pipe error",
    "Too many users",
    "Socket operation on non-socket",
    "Destination address required",
    "Message too long",
    "Protocol wrong type for socket",
    "Protocol not available",
    "Protocol not supported",
    "Socket type not supported",
    "Operation not supported",
    "Protocol family not supported",
    "Address family not supported by protocol",
    "Address already in use",
    "Cannot assign requested address",
    "Network is down",
    "Network is unreachable",
    "Network dropped connection on reset",
    "Software caused connection abort",
    "Connection reset by peer",
    "No buffer space available",
    "Transport endpoint is already connected",
    "Transport endpoint is not connected",
    "Cannot send after transport endpoint shutdown",
    "Too many references: cannot splice",
    "Connection timed out",
    "Connection refused",
    "Host is down",
    "No route to host",
    "Operation already in progress",
    "Operation now in progress",
    "Stale file handle",
    "Structure needs cleaning",
    "Not a XENIX named type file",
    "No XENIX semaphores available",
    "Is a named type file",
    "Remote I/O error",
    "Disk quota exceeded",
    "No medium found",
    "Wrong medium type",
    "Operation canceled",
    "Required key not available",
    "Key has expired",
    "Key has been revoked",
    "Key was rejected by service",
    "Owner died",
    "State not recoverable",
    "Operation not possible due to RF-kill",
    "Memory page has hardware error",
];

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
