//! Asking a person at the controller, as Python asks for ansible: [`getpass`] (the prompt
//! written to `/dev/tty`, the line read there with echo off, then a newline) and [`input`]
//! (the prompt on stdout, the line read from stdin, echoed by the terminal). `-K` and
//! `vars_prompt` ask through these.
//!
//! Owns only the terminal's settings and the reading; what an answer is for is the caller's.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;

/// Python's `getpass.getpass(prompt)` at the controlling terminal: the line typed, without
/// its newline; `None` at end of input (getpass's `EOFError`, which writes no newline).
/// Fails when there is no terminal to open (Python then falls back to stdin, warning that
/// the input may be echoed; callers refuse that by name).
pub fn getpass(prompt: &str) -> std::io::Result<Option<String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let tty =
        OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY).open("/dev/tty")?;
    let mut out = tty.try_clone()?;
    let echo = EchoOff::new(&tty)?;
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    let mut line = String::new();
    let read = BufReader::new(&tty).read_line(&mut line);
    drop(echo);
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

/// Python's `input(prompt)`: the prompt on stdout, the line read from stdin without its
/// newline; `None` at end of input.
pub fn input(prompt: &str) -> std::io::Result<Option<String>> {
    let mut out = std::io::stdout();
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
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
