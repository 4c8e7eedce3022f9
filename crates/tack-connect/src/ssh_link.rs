//! The `ssh` connection: first contact (one `ssh` call probing the host, a second uploading
//! the agent only when it is missing), then the long-lived link, a [`ChildAgent`] whose
//! command is `ssh ... <agent>`. ssh failing (exit 255, or ending before the agent's hello)
//! is [`ConnectionError::Unreachable`] in ansible's words.
//!
//! Owns running `ssh`; the command line is `ssh.rs`'s, the host-side scripts `install.rs`'s.
//! Never interprets a module's result.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use tack_agent::{Invocation, ModuleResult};
use tack_protocol::AgentInfo;

use crate::child::{AgentCommand, ChildAgent};
use crate::install::{self, AgentImage};
use crate::{
    Connection, ConnectionError, ExecOutput, PythonOutput, PythonRun, SshTarget, StagedFile,
};

/// ssh's own exit status for a failure of ssh itself (not of the remote command).
const SSH_FAILED: i32 = 255;

/// A host reached over SSH, its agent running at the far end of an `ssh` process.
pub struct Ssh {
    agent: ChildAgent,
    uploaded: bool,
}

impl Ssh {
    /// Reaches `target`, installs `image` there when its cache lacks it, and starts the agent.
    pub fn connect(target: &SshTarget, image: &AgentImage) -> Result<Ssh, ConnectionError> {
        if target.adds_control_path() {
            make_private_dir(&target.control_dir())?;
        }
        let wrap = |script: String| format!("/bin/sh -c {}", tack_py::shlex::quote(&script));
        let probe_out = run(target, &wrap(install::probe_script(image)), None)?;
        let probe = check(probe_out, "probe")
            .and_then(|stdout| install::read_probe(image, &stdout, "probe"))?;
        let uploaded = !probe.cached;
        if uploaded {
            let out = run(target, &wrap(install::upload_script(image)), Some(image.bytes()))?;
            check(out, "upload")?;
        }
        let argv = target.command(&wrap(install::run_script(image)))?;
        let command = AgentCommand::new(&argv[0]).args(&argv[1..]);
        let agent = ChildAgent::spawn_command(command).map_err(ssh_said)?.staging_for(&target.host);
        Ok(Ssh { agent, uploaded })
    }

    /// Whether this connection had to upload the agent.
    pub fn uploaded(&self) -> bool {
        self.uploaded
    }

    /// What the agent of the open link said at hello (its pid is the host's).
    pub fn info(&self) -> Option<AgentInfo> {
        self.agent.info()
    }
}

impl Connection for Ssh {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        self.agent.run_module(module, invocation).map_err(ssh_said)
    }

    fn exec_command(&self, cmd: &str, cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        self.agent.exec_command(cmd, cwd).map_err(ssh_said)
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        self.agent.run_python(payload, run).map_err(ssh_said)
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        self.agent.stage(bytes, name, executable).map_err(ssh_said)
    }

    fn stage_limit(&self) -> Option<usize> {
        self.agent.stage_limit()
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        self.agent.unstage(file).map_err(ssh_said)
    }
}

/// An error of the link told as ssh's: a link that could not be (re)opened because ssh failed
/// is an unreachable host; a death seen only as ssh's 255 says so. (An `ssh`
/// that cannot be started at all stays `Spawn`: not the host's fault.)
pub(crate) fn ssh_said(e: ConnectionError) -> ConnectionError {
    match e {
        ConnectionError::Hello { code: Some(SSH_FAILED), stderr, .. } => {
            ConnectionError::Unreachable { message: failed_to_connect(&stderr) }
        }
        ConnectionError::Become { code: Some(SSH_FAILED), stderr, .. } => {
            ConnectionError::Unreachable { message: failed_to_connect(&stderr) }
        }
        // ssh's 255 is not the agent's: a remote process killed by a signal, or a dropped
        // connection, both end the local ssh with it.
        ConnectionError::AgentDied { pid, during, how, stderr }
            if how == format!("it exited with code {SSH_FAILED}") =>
        {
            ConnectionError::AgentDied { pid, during, how: LINK_ENDED.to_string(), stderr }
        }
        other => other,
    }
}

/// How an agent's death reads when all the controller saw was ssh exiting 255.
const LINK_ENDED: &str =
    "its ssh link ended (ssh exited with code 255: the agent was killed or the connection dropped)";

/// ansible's words for ssh's failure.
pub(crate) fn failed_to_connect(stderr: &str) -> String {
    format!("Failed to connect to the host via ssh: {}", stderr.trim_end())
}

struct Output {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// One `ssh` call running `remote` on the host, with `input` on its stdin.
fn run(target: &SshTarget, remote: &str, input: Option<&[u8]>) -> Result<Output, ConnectionError> {
    let argv = target.command(remote)?;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ConnectionError::Spawn { program: argv[0].clone(), source })?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            // A thread of its own, so a host that stops reading cannot block the output's reads.
            Some(std::thread::spawn(move || stdin.write_all(&bytes)))
        }
        _ => None,
    };
    let out = child.wait_with_output().map_err(|e| ConnectionError::Install {
        step: "ssh",
        message: format!("waiting for ssh failed: {e}"),
    })?;
    // A write cut short shows in the exit status and stderr, which say more.
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(Output { code: out.status.code(), stdout: out.stdout, stderr: out.stderr })
}

/// The call's stdout when it succeeded; ssh's own failure is an unreachable host.
fn check(out: Output, step: &'static str) -> Result<Vec<u8>, ConnectionError> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.code {
        Some(0) => Ok(out.stdout),
        Some(SSH_FAILED) => {
            Err(ConnectionError::Unreachable { message: failed_to_connect(&stderr) })
        }
        code => Err(ConnectionError::Install {
            step,
            message: format!(
                "the host's shell {}: {}",
                code.map_or_else(|| "was killed".to_string(), |c| format!("exited with {c}")),
                stderr.trim_end()
            ),
        }),
    }
}

/// ansible's `makedirs_safe(dir, 0o700)` for the ControlPath directory.
pub(crate) fn make_private_dir(dir: &Path) -> Result<(), ConnectionError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| {
        ConnectionError::Unreachable {
            message: format!("Cannot write to ControlPath {}: {e}", dir.display()),
        }
    })
}
