//! Asking the person at the terminal: a hidden prompt for passwords and a plain one for other
//! answers, behaving as Python's `getpass.getpass` and `input` do for ansible.
//!
//! A hidden prompt goes to the controlling terminal (`/dev/tty`) with echo off. With no
//! terminal, Python falls back to warning on stderr and reading a line of standard input, and so
//! does this: `echo pw | tack vault view -J f` works as it does with ansible-vault. Python also
//! prints a `GetPassWarning` naming its own `getpass.py`; tack, having no such file, leaves that
//! line out. Answers are returned in zeroizing buffers and never echoed.

use std::fs::OpenOptions;
use std::io::{self, BufRead, Write};

use zeroize::Zeroizing;

/// The source of interactive answers; tests replace the terminal with scripted answers.
pub trait Prompter {
    /// Asks for a secret without echo. `Ok(None)` means end of input (ctrl-d).
    fn prompt_secret(&mut self, prompt: &str) -> io::Result<Option<Zeroizing<String>>>;
    /// Asks with echo, prompt on stdout, as Python's `input()`. `Ok(None)` on end of input.
    fn prompt_line(&mut self, prompt: &str) -> io::Result<Option<String>>;
}

/// The real terminal (or standard input and stderr when there is none).
#[derive(Debug, Default)]
pub struct TerminalPrompter;

/// Reads one line from standard input without its final `\n`; `None` at end of input.
fn read_stdin_line() -> io::Result<Option<Zeroizing<String>>> {
    let mut line = Zeroizing::new(String::new());
    if io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    if line.ends_with('\n') {
        line.pop();
    }
    Ok(Some(line))
}

impl Prompter for TerminalPrompter {
    fn prompt_secret(&mut self, prompt: &str) -> io::Result<Option<Zeroizing<String>>> {
        if OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok() {
            return match rpassword::prompt_password(prompt) {
                Ok(answer) => Ok(Some(Zeroizing::new(answer))),
                Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
                Err(err) => Err(err),
            };
        }
        let mut stderr = io::stderr().lock();
        write!(stderr, "Warning: Password input may be echoed.\n{prompt}")?;
        stderr.flush()?;
        let answer = read_stdin_line()?;
        if answer.is_some() {
            stderr.write_all(b"\n")?;
        }
        Ok(answer)
    }

    fn prompt_line(&mut self, prompt: &str) -> io::Result<Option<String>> {
        let mut stdout = io::stdout().lock();
        stdout.write_all(prompt.as_bytes())?;
        stdout.flush()?;
        Ok(read_stdin_line()?.map(|line| line.to_string()))
    }
}

/// Answers given in advance, for tests and for callers that already hold them.
#[derive(Debug, Default)]
pub struct ScriptedPrompter {
    pub answers: std::collections::VecDeque<String>,
    /// Every prompt shown, in order.
    pub shown: Vec<String>,
}

impl ScriptedPrompter {
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(answers: I) -> ScriptedPrompter {
        ScriptedPrompter { answers: answers.into_iter().map(Into::into).collect(), shown: vec![] }
    }
}

impl Prompter for ScriptedPrompter {
    fn prompt_secret(&mut self, prompt: &str) -> io::Result<Option<Zeroizing<String>>> {
        self.shown.push(prompt.to_string());
        Ok(self.answers.pop_front().map(Zeroizing::new))
    }

    fn prompt_line(&mut self, prompt: &str) -> io::Result<Option<String>> {
        self.shown.push(prompt.to_string());
        Ok(self.answers.pop_front())
    }
}
