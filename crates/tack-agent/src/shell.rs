//! Running a command line through the host's `/bin/sh -c` for the controller (what `raw` and
//! `script` run, and the shell tests action plugins make): the one implementation the local
//! connection and the agent binary share.
//!
//! Owns how the command is started and how its end becomes a return code; it never looks at
//! what the command printed.

use std::path::Path;
use std::process::{Command, Stdio};

/// What the command gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    /// The exit code, or minus the signal number that ended it (Python's `returncode`).
    pub rc: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `cmd` in `cwd`, with nothing on its standard input. A `cwd` that is not a directory
/// leaves the caller's own (ansible's local connection runs in the play's directory, and one
/// that is gone leaves the controller's).
pub fn run(cmd: &str, cwd: &Path) -> std::io::Result<ShellOutput> {
    crate::descendants::hold_if_ending();
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(cmd).stdin(Stdio::null());
    crate::session::detach(&mut command);
    if cwd.is_dir() {
        command.current_dir(cwd);
    }
    let out = command.output()?;
    let rc = out.status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        -out.status.signal().unwrap_or(0)
    });
    Ok(ShellOutput { rc, stdout: out.stdout, stderr: out.stderr })
}
