//! `-K` (`--ask-become-pass`): the become password asked at the controlling terminal, as
//! Python's `getpass.getpass` asks it for ansible: the prompt written to `/dev/tty`, the
//! line read there with echo off, then a newline. Without a terminal ansible falls back to
//! reading stdin with a warning about the echo; tack refuses that by name instead.
//!
//! Owns only the terminal; what the password is for is the caller's.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;

use zeroize::Zeroizing;

/// Why no password could be asked.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(
        "tack does not support {flag} without a terminal to ask on yet (ansible reads stdin \
         then); give the password with --become-password-file"
    )]
    NoTerminal { flag: &'static str },
    #[error("cannot ask for the password at the terminal: {0}")]
    Io(#[from] std::io::Error),
}

/// The line typed at the terminal after `prompt`, without its newline; `None` at end of
/// input (Ctrl-D on an empty line), which ansible takes as no password.
pub fn ask(prompt: &str, flag: &'static str) -> Result<Option<Zeroizing<String>>, AskError> {
    use std::os::unix::fs::OpenOptionsExt;
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open("/dev/tty")
        .map_err(|_| AskError::NoTerminal { flag })?;
    let mut out = tty.try_clone()?;
    let echo = EchoOff::new(&tty)?;
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    let mut line = Zeroizing::new(String::new());
    let read = BufReader::new(&tty).read_line(&mut line);
    drop(echo);
    // getpass's newline follows a line read; at end of input its EOFError skips it.
    if read? == 0 {
        return Ok(None);
    }
    out.write_all(b"\n")?;
    out.flush()?;
    if line.ends_with('\n') {
        line.pop();
    }
    Ok(Some(line))
}

/// The terminal's echo turned off (and its pending input dropped, as getpass's `TCSAFLUSH`
/// does) until dropped.
struct EchoOff<'a> {
    tty: &'a File,
    saved: libc::termios,
}

impl<'a> EchoOff<'a> {
    fn new(tty: &'a File) -> std::io::Result<Self> {
        let fd = tty.as_raw_fd();
        // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd is the open terminal; saved is a live local.
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: as above; quiet is a copy of the terminal's own settings.
        if unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &quiet) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(EchoOff { tty, saved })
    }
}

impl Drop for EchoOff<'_> {
    fn drop(&mut self) {
        // SAFETY: the fd is still open (borrowed); saved is what tcgetattr gave.
        unsafe { libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSAFLUSH, &self.saved) };
    }
}
