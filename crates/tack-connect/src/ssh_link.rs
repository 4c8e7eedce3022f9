//! The `ssh` connection: one `ssh` session per link, whose shell first answers the probe
//! (and takes the agent's bytes only when the host lacks it), then becomes the agent: a
//! [`ChildAgent`] whose command is `ssh ... <first contact script>`. ssh failing (exit 255, or ending before the agent's hello)
//! is [`ConnectionError::Unreachable`] in ansible's words.
//!
//! Owns running `ssh`; the command line is `ssh.rs`'s, the host-side scripts `install.rs`'s.
//! Never interprets a module's result.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tack_protocol::AgentInfo;

use crate::child::{AgentCommand, ChildAgent, Preamble};
use crate::escalate::await_markers;
use crate::forward::Forward;
use crate::install::{self, AgentImage};
use crate::{Connection, ConnectionError, Decorator, SshTarget};

/// ssh's own exit status for a failure of ssh itself (not of the remote command).
const SSH_FAILED: i32 = 255;

/// A host reached over SSH, its agent running at the far end of an `ssh` process.
pub struct Ssh {
    agent: ChildAgent,
    contact: Arc<FirstContact>,
}

impl Ssh {
    /// Reaches `target`, installs `image` there when its cache lacks it, and starts the agent:
    /// all in one `ssh` session (see [`install::contact_script`]), so a host whose agent is
    /// cached costs one session. Where the ControlMaster stays (ControlPersist), that agent
    /// also leaves a listener on the host, and later links reach it through the master's
    /// forward ([`Forward`]) with no session at all.
    pub fn connect(target: &SshTarget, image: &AgentImage) -> Result<Ssh, ConnectionError> {
        Self::connect_noting(target, image, &crate::Notes::default())
    }

    /// [`Ssh::connect`], its links' retries (`SshTarget::retries`) told in `notes`.
    pub fn connect_noting(
        target: &SshTarget,
        image: &AgentImage,
        notes: &crate::Notes,
    ) -> Result<Ssh, ConnectionError> {
        target.unusable_key()?;
        if target.adds_control_path() {
            make_private_dir(&target.control_dir())?;
        }
        let forward = Forward::for_target(target, image);
        let script = install::contact_script(image, forward.as_ref().map(|f| f.idle_secs));
        let argv = target.command(&format!("/bin/sh -c {}", tack_py::shlex::quote(&script)))?;
        let contact = Arc::new(FirstContact::new(
            image.clone(),
            Destination::Login(target.clone()),
            ("probe", "upload"),
        ));
        let mut command = AgentCommand::new(&argv[0])
            .args(&argv[1..])
            .preamble(Arc::clone(&contact) as Arc<dyn Preamble>)
            .retrying(target.retries, notes.clone())
            .login(target.login()?);
        if let Some(forward) = forward {
            command = command.shortcut(Arc::new(forward));
        }
        let agent = ChildAgent::spawn_command(command).map_err(ssh_said)?.staging_for(&target.host);
        Ok(Ssh { agent, contact })
    }

    /// Whether the last link this connection opened had to upload the agent.
    pub fn uploaded(&self) -> bool {
        self.contact.uploaded()
    }

    /// What the agent of the open link said at hello (its pid is the host's).
    pub fn info(&self) -> Option<AgentInfo> {
        self.agent.info()
    }
}

/// The controller's side of [`install::contact_script`]: reads the probe's answer and, when
/// the host lacks the agent, sends its bytes (gzipped, when the image has them so and the
/// host has `gzip`) and waits until it is in place. Links to one
/// destination (the same [`SshTarget`]: several inventory names for one machine) upload
/// one at a time, and a link that finds the agent put there by another of the run's links
/// meanwhile looks again instead of sending it a second time.
pub(crate) struct FirstContact {
    image: AgentImage,
    gate: Gate,
    uploaded: AtomicBool,
    /// The install steps an early end is named by: probing, then uploading.
    steps: (&'static str, &'static str),
}

/// Where an agent is installed: a destination's login cache, or a become user's cache on
/// one (`None`: the controller itself).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Destination {
    Login(SshTarget),
    Become(Option<SshTarget>, String),
}

impl FirstContact {
    pub(crate) fn new(
        image: AgentImage,
        to: Destination,
        steps: (&'static str, &'static str),
    ) -> Self {
        FirstContact { image, gate: upload_gate(&to), uploaded: AtomicBool::new(false), steps }
    }

    /// Whether the last link this contact opened had to upload the agent.
    pub(crate) fn uploaded(&self) -> bool {
        self.uploaded.load(Ordering::Relaxed)
    }
}

/// Per destination: whether this process has put the agent (its hash) there.
type Gate = Arc<Mutex<Option<String>>>;

fn upload_gate(to: &Destination) -> Gate {
    static GATES: OnceLock<Mutex<HashMap<Destination, Gate>>> = OnceLock::new();
    let gates = GATES.get_or_init(Default::default);
    // A panic while the map was held leaves it whole (inserts are single calls).
    let mut gates = gates.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(gates.entry(to.clone()).or_default())
}

impl Preamble for FirstContact {
    fn run(
        &self,
        stdout: &mut dyn Read,
        stdin: &mut dyn Write,
    ) -> Result<(), Option<ConnectionError>> {
        let markers = [install::CACHED, install::MISSING];
        let (found, mut said) = await_markers(stdout, &markers).map_err(|_| None)?;
        said.extend_from_slice(markers[found].as_bytes());
        let probe = install::read_probe(&self.image, &said, self.steps.0).map_err(Some)?;
        self.uploaded.store(false, Ordering::Relaxed);
        if markers[found] == install::CACHED {
            return Ok(());
        }
        // Held through the upload: the destination's other links wait, then look again.
        let mut put = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        let answer = |line: &str, stdin: &mut dyn Write| {
            stdin.write_all(line.as_bytes()).and_then(|()| stdin.write_all(b"\n"))
        };
        if put.as_deref() == Some(self.image.hash_hex().as_str()) {
            answer(install::RECHECK, stdin).and_then(|()| stdin.flush()).map_err(|_| None)?;
            let (found, _) = await_markers(stdout, &markers).map_err(|_| None)?;
            if markers[found] == install::CACHED {
                return Ok(());
            }
        }
        self.uploaded.store(true, Ordering::Relaxed);
        let (send, bytes) = match self.image.gzip() {
            Some(gz) if probe.gzip => (install::SEND_GZIP, gz),
            _ => (install::SEND, self.image.bytes()),
        };
        answer(send, stdin)
            .and_then(|()| stdin.write_all(bytes))
            .and_then(|()| stdin.flush())
            .map_err(|_| None)?;
        await_markers(stdout, &[install::INSTALLED]).map_err(|_| None)?;
        *put = Some(self.image.hash_hex());
        Ok(())
    }

    fn ended(&self, code: Option<i32>, stderr: &str) -> ConnectionError {
        let step = if self.uploaded() { self.steps.1 } else { self.steps.0 };
        check(Output { code, stdout: Vec::new(), stderr: stderr.as_bytes().to_vec() }, step)
            .err()
            .unwrap_or_else(|| ConnectionError::Install {
                step,
                message: format!(
                    "the host's shell ended before the agent started: {}",
                    stderr.trim_end()
                ),
            })
    }
}

impl Decorator for Ssh {
    fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
        Ok(&self.agent)
    }

    fn error(&self, error: ConnectionError) -> ConnectionError {
        ssh_said(error)
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
        // connection, both end the local ssh with it, and ansible reports either as the
        // host unreachable, in ssh's words.
        ConnectionError::AgentDied { how, stderr, .. }
            if how == format!("it exited with code {SSH_FAILED}") =>
        {
            let said = if stderr.trim().is_empty() { LINK_ENDED } else { stderr.as_str() };
            ConnectionError::Unreachable { message: failed_to_connect(said) }
        }
        other => other,
    }
}

/// What the link's death is said to be when ssh printed nothing about it.
const LINK_ENDED: &str =
    "the link ended (ssh exited with code 255: the agent was killed or the connection dropped)";

/// ansible's words for ssh's failure.
pub(crate) fn failed_to_connect(stderr: &str) -> String {
    format!("Failed to connect to the host via ssh: {}", stderr.trim_end())
}

struct Output {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
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

/// What ansible's ssh connection does on `reset()` (`meta: reset_connection`, and
/// `wait_for_connection` before each try), done for `target`: `ssh -O check`, and when it
/// finds a master, `ssh -O stop`, so the next link logs in anew (new groups, a new
/// environment) instead of riding the old login. The host's listener, which belongs to the
/// old login, is replaced by the new link's agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MasterReset {
    /// The check's command line.
    pub check: Vec<String>,
    /// What a failing check said (there was no master to stop).
    pub no_connection: Option<String>,
    /// The stop's command line, when the check found a master.
    pub stop: Option<Vec<String>>,
    /// What a failing stop said.
    pub stop_failed: Option<String>,
}

/// Runs ansible's reset for `target` (see [`MasterReset`]).
pub fn reset_master(target: &SshTarget) -> Result<MasterReset, ConnectionError> {
    let run = |verb: &str| -> Result<(Vec<String>, Option<String>), ConnectionError> {
        let mut argv = target.options()?;
        argv.extend(["-O".into(), verb.into(), target.host.clone()]);
        let out = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(|source| ConnectionError::Spawn { program: argv[0].clone(), source })?;
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        Ok((argv, (!out.status.success()).then_some(said)))
    };
    let (check, no_connection) = run("check")?;
    let mut reset = MasterReset { check, no_connection, stop: None, stop_failed: None };
    if reset.no_connection.is_none() {
        let (stop, failed) = run("stop")?;
        reset.stop = Some(stop);
        reset.stop_failed = failed;
        crate::forward::forget(target);
    }
    Ok(reset)
}
