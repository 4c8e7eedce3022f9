//! Asking a person at the controller, as Python asks for ansible: [`getpass`] (the prompt
//! written to `/dev/tty`, the line read there with echo off, then a newline) and [`input`]
//! (the prompt on stdout, the line read from stdin, echoed by the terminal). `-K` and
//! `vars_prompt` ask through these; `pause` reads keys one at a time in raw mode through
//! [`prompt_until`], as ansible's display does.
//!
//! Owns only the terminal's settings and the reading; what an answer is for is the caller's.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, Read, Write};

use std::os::fd::AsRawFd;
use zeroize::Zeroizing;

/// Python's `getpass.getpass(prompt)` at the controlling terminal: the line typed, without
/// its newline; `None` at end of input (getpass's `EOFError`, which writes no newline).
/// Fails when there is no terminal to open (Python then falls back to stdin, warning that
/// the input may be echoed; callers refuse that by name).
pub fn getpass(prompt: &str) -> std::io::Result<Option<Zeroizing<String>>> {
    use std::os::unix::fs::OpenOptionsExt;
    let tty =
        OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY).open("/dev/tty")?;
    let mut out = tty.try_clone()?;
    let echo = EchoOff::new(&tty)?;
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    let read = read_secret_line(&tty);
    drop(echo);
    let Some(mut line) = read? else { return Ok(None) };
    out.write_all(b"\n")?;
    out.flush()?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    let text = String::from_utf8_lossy(&line).into_owned();
    Ok(Some(Zeroizing::new(text)))
}

/// One line from the terminal, read a byte at a time into memory that is wiped when
/// dropped (a buffered reader would keep a copy); `None` at end of input before any byte.
fn read_secret_line(mut tty: &File) -> std::io::Result<Option<Zeroizing<Vec<u8>>>> {
    // A terminal's line is at most 4095 bytes: no reallocation leaves a copy behind.
    let mut line = Zeroizing::new(Vec::with_capacity(4096));
    let mut byte = [0u8; 1];
    loop {
        match tty.read(&mut byte) {
            Ok(0) if line.is_empty() => return Ok(None),
            Ok(0) => return Ok(Some(line)),
            Ok(_) => {
                line.push(byte[0]);
                if byte[0] == b'\n' {
                    return Ok(Some(line));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
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
    /// Echo comes back if the run is interrupted at the prompt.
    _interrupt: tack_diag::interrupt::Registered,
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
        let restore = saved;
        let interrupt = tack_diag::interrupt::undo_on_interrupt(move || {
            // SAFETY: tcsetattr on a descriptor that may be closed by now fails harmlessly;
            // restore is what tcgetattr gave.
            unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &restore) };
        });
        Ok(EchoOff { tty, saved, _interrupt: interrupt })
    }
}

impl Drop for EchoOff<'_> {
    fn drop(&mut self) {
        // SAFETY: the fd is still open (borrowed); saved is what tcgetattr gave.
        unsafe { libc::tcsetattr(self.tty.as_raw_fd(), libc::TCSAFLUSH, &self.saved) };
    }
}

/// Whether stdin is a terminal this process may read keys from: a terminal, and the process
/// in its foreground (ansible's test; a background job gets the non-interactive path).
pub fn stdin_interactive() -> bool {
    // SAFETY: isatty, getpgrp and tcgetpgrp take no pointers.
    unsafe { libc::isatty(0) == 1 && libc::getpgrp() == libc::tcgetpgrp(0) }
}

/// How [`prompt_until`] ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Keys {
    /// A completing key was pressed (or the time ran out, or input ended): what was typed
    /// before it.
    Typed(Vec<u8>),
    /// An interrupting key was pressed.
    Interrupted,
}

/// Which keys end a [`prompt_until`].
pub struct Prompt<'a> {
    /// Shown on stdout, then a newline.
    pub msg: &'a str,
    /// The keys are not echoed.
    pub private: bool,
    /// Stop waiting after this long, as if completed.
    pub seconds: Option<u64>,
    /// `None`: the terminal's interrupt key (Ctrl+C); else any of these, case-blind.
    pub interrupt: Option<&'a [u8]>,
    /// `None`: Enter; else any of these, case-blind (none: only the time or an interrupt
    /// ends it).
    pub complete: Option<&'a [u8]>,
}

/// ansible's `Display.prompt_until`: the message on stdout, then keys read one at a time
/// from stdin in raw mode (echoed unless private) until one completes or interrupts, or the
/// time runs out. The bytes a terminal shows are ansible's: its erase-line sequence when a
/// key ends the prompt or a backspace is pressed, and no output processing once the prompt
/// is shown (a typed newline moves down without returning).
///
/// ansible shows the message and then drops what was typed ahead; tack drops it first (the
/// same keys are lost) so that nothing typed once the message is visible can be lost.
/// Where ansible would spin at the end of input, tack takes it as completing.
pub fn prompt_until(prompt: &Prompt<'_>) -> std::io::Result<Keys> {
    let mut out = std::io::stdout().lock();
    out.flush()?;
    let raw = RawKeys::enter(!prompt.private)?;
    out.write_all(prompt.msg.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    raw.stop_output_processing()?;
    let deadline =
        prompt.seconds.map(|s| std::time::Instant::now() + std::time::Duration::from_secs(s));
    let mut typed = Vec::new();
    loop {
        let Some(key) = raw.key(deadline)? else { return Ok(Keys::Typed(typed)) };
        let lower = key.to_ascii_lowercase();
        let interrupts = match prompt.interrupt {
            None => key == raw.saved.c_cc[libc::VINTR],
            Some(keys) => keys.contains(&lower),
        };
        if interrupts {
            clear_line(&mut out)?;
            return Ok(Keys::Interrupted);
        }
        let completes = match prompt.complete {
            None => key == b'\r' || key == b'\n',
            Some(keys) => keys.contains(&lower),
        };
        if completes {
            clear_line(&mut out)?;
            return Ok(Keys::Typed(typed));
        }
        if key == raw.saved.c_cc[libc::VERASE] {
            clear_line(&mut out)?;
            typed.pop();
            if !prompt.private {
                out.write_all(&typed)?;
            }
            out.flush()?;
        } else {
            typed.push(key);
        }
    }
}

/// ansible's `clear_line`, byte for byte: it puts `ESC [` before the terminal's carriage
/// return and before its erase-to-end-of-line (`\r` and `ESC [ K` on every terminal type
/// ansible's curses lookup finds on a Linux controller, and its defaults without one).
fn clear_line(out: &mut impl Write) -> std::io::Result<()> {
    out.write_all(b"\x1b[\r\x1b[\x1b[K")?;
    out.flush()
}

/// stdin's terminal in ansible's raw mode for the length of a prompt; stdout's terminal,
/// when it is one, loses output processing once the prompt is shown. Both are restored
/// when dropped.
struct RawKeys {
    saved: libc::termios,
    stdout_saved: Option<libc::termios>,
    /// The terminal's modes come back if the run is interrupted meanwhile.
    _interrupt: tack_diag::interrupt::Registered,
}

fn get_attr(fd: i32) -> std::io::Result<libc::termios> {
    // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: t is a live local; a bad fd is reported, not undefined.
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(t)
}

fn set_attr(fd: i32, when: i32, t: &libc::termios) -> std::io::Result<()> {
    // SAFETY: t points to a termios tcgetattr filled; a bad fd is reported.
    if unsafe { libc::tcsetattr(fd, when, t) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl RawKeys {
    fn enter(echo: bool) -> std::io::Result<Self> {
        let saved = get_attr(0)?;
        // SAFETY: isatty takes no pointers.
        let stdout_saved = if unsafe { libc::isatty(1) } == 1 { get_attr(1).ok() } else { None };
        let mut raw = saved;
        raw.c_iflag &= !(libc::BRKINT | libc::ICRNL | libc::INPCK | libc::ISTRIP | libc::IXON);
        raw.c_cflag &= !(libc::CSIZE | libc::PARENB);
        raw.c_cflag |= libc::CS8;
        raw.c_lflag &= !(libc::ECHO | libc::ICANON | libc::IEXTEN | libc::ISIG);
        if echo {
            raw.c_lflag |= libc::ECHO;
        }
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // TCSAFLUSH drops keys typed before the prompt, as ansible's flush does.
        set_attr(0, libc::TCSAFLUSH, &raw)?;
        let interrupt = tack_diag::interrupt::undo_on_interrupt(move || {
            let _ = set_attr(0, libc::TCSADRAIN, &saved);
            if let Some(t) = &stdout_saved {
                let _ = set_attr(1, libc::TCSADRAIN, t);
            }
        });
        Ok(RawKeys { saved, stdout_saved, _interrupt: interrupt })
    }

    fn stop_output_processing(&self) -> std::io::Result<()> {
        for (fd, t) in [(0, Some(self.saved)), (1, self.stdout_saved)] {
            if t.is_some() {
                let mut now = get_attr(fd)?;
                now.c_oflag &= !libc::OPOST;
                set_attr(fd, libc::TCSANOW, &now)?;
            }
        }
        Ok(())
    }

    /// The next key, or `None` when the deadline passes or input ends.
    fn key(&self, deadline: Option<std::time::Instant>) -> std::io::Result<Option<u8>> {
        loop {
            let timeout = match deadline {
                None => -1,
                Some(at) => {
                    let left = at.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX)
                }
            };
            let mut fds = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
            // SAFETY: fds is one live pollfd.
            let ready = unsafe { libc::poll(&mut fds, 1, timeout) };
            if ready < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if ready == 0 {
                continue;
            }
            let mut byte = 0u8;
            // SAFETY: reads at most one byte into a live local.
            let n = unsafe { libc::read(0, (&mut byte as *mut u8).cast(), 1) };
            match n {
                1 => return Ok(Some(byte)),
                0 => {
                    // End of input: the rest of a timed wait is still waited.
                    if let Some(at) = deadline {
                        std::thread::sleep(at.saturating_duration_since(std::time::Instant::now()));
                    }
                    return Ok(None);
                }
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
    }
}

impl Drop for RawKeys {
    fn drop(&mut self) {
        // Restored after the output drains, as ansible's TCSADRAIN does.
        let _ = set_attr(0, libc::TCSADRAIN, &self.saved);
        if let Some(t) = &self.stdout_saved {
            let _ = set_attr(1, libc::TCSADRAIN, t);
        }
    }
}
