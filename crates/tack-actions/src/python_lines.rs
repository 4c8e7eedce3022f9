//! The line protocol every Python worker of the controller speaks: one JSON object per line
//! on its stdin and stdout, and how the process ends (its input closed, a grace to end by
//! itself, then killed).
//!
//! Owns the pipes and the process's end; what the lines mean is each worker's.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value as Json};

/// A worker process and its two pipes.
pub(crate) struct Lines {
    child: Child,
    /// `None` once closed.
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// How the worker is named in errors (`the action plugin worker`).
    what: &'static str,
    /// How long it gets to end by itself once its input closes; `None`: killed at once.
    pub(crate) grace: Option<Duration>,
}

impl Lines {
    /// Starts `command` with piped stdin and stdout.
    pub(crate) fn spawn(
        command: &mut Command,
        what: &'static str,
        grace: Duration,
    ) -> std::io::Result<Lines> {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!("{what}'s pipes were not opened")));
        };
        Ok(Lines {
            child,
            input: Some(input),
            output: BufReader::new(output),
            what,
            grace: Some(grace),
        })
    }

    pub(crate) fn send(&mut self, message: &Json) -> Result<(), String> {
        let mut line = message.to_string();
        line.push('\n');
        let what = self.what;
        let Some(input) = self.input.as_mut() else {
            return Err(format!("{what}'s input is closed"));
        };
        input
            .write_all(line.as_bytes())
            .and_then(|()| input.flush())
            .map_err(|e| format!("{what} stopped: {e}"))
    }

    pub(crate) fn receive(&mut self) -> Result<Map<String, Json>, String> {
        let what = self.what;
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) => Err(match self.child.wait() {
                Ok(status) => format!("{what} stopped ({status})"),
                Err(e) => format!("{what} stopped: {e}"),
            }),
            Ok(_) => match serde_json::from_str(&line) {
                Ok(Json::Object(map)) => Ok(map),
                _ => Err(format!("{what} answered {line:?}")),
            },
            Err(e) => Err(format!("{what} stopped: {e}")),
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        // Nothing of a worker outlives its use: closing its input ends it (letting ansible
        // remove its own temporary directory), and one that does not end in time is killed.
        drop(self.input.take());
        if let Some(grace) = self.grace {
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline {
                match self.child.try_wait() {
                    Ok(Some(_)) | Err(_) => return,
                    Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
