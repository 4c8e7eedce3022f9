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

/// What a plugin printed through ansible's display, as a worker sends it (`{"op": "display",
/// "method", "args", "kwargs"}`), read for the task's output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Displayed {
    /// `_warning` or `_deprecated`: the message, warned.
    Warning(String),
    /// `Display.verbose`'s line, with its host, shown from this `-v` level. The log half
    /// (`_verbose_log`) of a line the run's own count already shows is the shown half's to
    /// log, and reads as nothing.
    Verbose(u8, String),
    /// Anything else the plugin displayed, shown as it is.
    Plain(String),
    Nothing,
}

/// The deprecation a `_deprecated` display call of ansible-core's own carries (its loader's
/// routing deprecating one of its plugins): the message and the version that removes it.
/// Others (a collection's, one by date) are warned as they are.
pub(crate) fn core_deprecation(
    message: &Map<String, Json>,
) -> Option<tack_links::PluginDeprecation> {
    if message.get("method").and_then(Json::as_str) != Some("_deprecated") {
        return None;
    }
    let summary = message.get("args").and_then(Json::as_array)?.first()?;
    let resolved = summary.pointer("/deprecator/resolved_name").and_then(Json::as_str);
    if resolved != Some("ansible.builtin") {
        return None;
    }
    Some(tack_links::PluginDeprecation {
        message: summary.pointer("/event/msg").and_then(Json::as_str)?.to_string(),
        removed_in: summary.get("version").and_then(Json::as_str)?.to_string(),
    })
}

/// Reads `message` for a run shown at `verbosity` `-v`s.
pub(crate) fn displayed(message: &Map<String, Json>, verbosity: i64) -> Displayed {
    let args = message.get("args").and_then(Json::as_array);
    let first = args.and_then(|a| a.first());
    match message.get("method").and_then(Json::as_str).unwrap_or_default() {
        "_warning" | "_deprecated" => {
            let msg = first.and_then(|w| w.pointer("/event/msg")).and_then(Json::as_str);
            Displayed::Warning(msg.unwrap_or_default().to_string())
        }
        // `Display.verbose`'s halves: the worker shows a line at `caplevel` from `caplevel +
        // 1` `-v`s, and logs it (again) when its `log_verbosity` reaches that.
        method @ ("_verbose_display" | "_verbose_log") => {
            let kwargs = message.get("kwargs");
            let caplevel = kwargs.and_then(|k| k.get("caplevel")).and_then(Json::as_i64);
            let level = u8::try_from(caplevel.unwrap_or(2).saturating_add(1).clamp(1, 255))
                .unwrap_or(u8::MAX);
            if method == "_verbose_log" && verbosity >= i64::from(level) {
                return Displayed::Nothing;
            }
            let Some(msg) = first.and_then(Json::as_str) else { return Displayed::Nothing };
            let line = match kwargs.and_then(|k| k.get("host")).and_then(Json::as_str) {
                Some(host) => format!("<{host}> {msg}"),
                None => msg.to_string(),
            };
            Displayed::Verbose(level, line)
        }
        _ => match first.and_then(Json::as_str) {
            Some(line) => Displayed::Plain(line.to_string()),
            None => Displayed::Nothing,
        },
    }
}
