//! A link whose agent runs as the become user ([`BecomeLink`]), on a host reached over SSH
//! or on the controller itself. The become user never runs a file the login user owns: it
//! gets the agent in a private cache of its own, `/tmp/.tack-agent-<uid>` (made 0700; a
//! pre-existing one that is a symbolic link, not a directory, or not its own is refused),
//! streamed from the controller on first contact exactly as the login user's cache is
//! (probe, then upload only when missing, size and hash checked), and each step runs
//! through the become program with [`crate::escalate`]'s handshake.
//!
//! Owns the become user's side of first contact; the become command line and handshake are
//! `escalate`'s, the agent's process `child`'s, the `ssh` command line `ssh`'s.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use tack_agent::{Invocation, ModuleResult};

use crate::child::{AgentCommand, ChildAgent};
use crate::escalate::{self, Become, Escalation};
use crate::install::{self, AgentImage};
use crate::{
    Connection, ConnectionError, ExecOutput, PythonOutput, PythonRun, SshTarget, StagedFile,
};

/// The become user's own cache: made private, refused when it is not a plain directory of
/// that user's (`/tmp` is sticky, so no one else can swap it once checked).
const CACHE_SETUP: &str = "d=/tmp/.tack-agent-$(id -u); mkdir -m 700 \"$d\" 2>/dev/null || true; \
     if [ -L \"$d\" ] || [ ! -d \"$d\" ] || [ ! -O \"$d\" ]; then \
     echo \"tack: refusing the agent cache $d: it is not a directory of this user's own\" >&2; \
     exit 3; fi; chmod 700 \"$d\"";

/// What the login user's shell prints when the become user does not exist, then its name.
const NO_SUCH_USER: &str = "tack-become:no-such-user:";

/// ansible's `_get_admin_users` default: login users ansible treats as privileged.
const ADMIN_USERS: &[&str] = &["root", "toor"];

/// Where the login user's shell runs: the controller, or a host over ssh.
#[derive(Debug, Clone, Copy)]
pub enum Via<'a> {
    Local,
    Ssh(&'a SshTarget),
}

/// An agent running as the become user.
pub struct BecomeLink {
    agent: ChildAgent,
    ssh: bool,
    uploaded: bool,
}

impl BecomeLink {
    /// Escalates to `become` through `via`, installs `image` in the become user's cache when
    /// it lacks it, and starts the agent there.
    pub fn connect(
        via: Via<'_>,
        image: &AgentImage,
        escalation: &Become,
    ) -> Result<BecomeLink, ConnectionError> {
        let ssh = matches!(via, Via::Ssh(_));
        if let Via::Ssh(target) = via
            && target.adds_control_path()
        {
            crate::ssh_link::make_private_dir(&target.control_dir())?;
        }
        let probe = format!(
            "uname -m; {CACHE_SETUP}; a=\"$d\"/{name}; if [ -x \"$a\" ] && \"$a\" --verify \
             {hash} >/dev/null 2>&1; then echo tack-agent:ok; else echo tack-agent:missing; fi",
            name = image.file_name(),
            hash = image.hash_hex(),
        );
        let user_check = format!(
            "if ! id -u -- {user} >/dev/null 2>&1; then echo {NO_SUCH_USER}\"$(id -un)\"; \
             exit 0; fi; ",
            user = tack_py::shlex::quote(&escalation.user)
        );
        let out = run(via, escalation, &probe, &user_check, None)?;
        let found = install::read_probe(image, &out, "become probe")?;
        let uploaded = !found.cached;
        if uploaded {
            let upload = install::upload_script_into(image, CACHE_SETUP);
            run(via, escalation, &upload, "", Some(image.bytes()))?;
        }
        let (line, esc) = escalation
            .command(&format!("{CACHE_SETUP}; exec \"$d\"/{name}", name = image.file_name()))?;
        let argv = login_argv(via, &format!("exec {line}"))?;
        let command = AgentCommand::new(&argv[0]).args(&argv[1..]).escalating(esc);
        let host = match via {
            Via::Ssh(target) => target.host.clone(),
            Via::Local => "localhost".to_string(),
        };
        let agent =
            ChildAgent::spawn_command(command).map_err(|e| said(ssh, e))?.staging_for(&host);
        Ok(BecomeLink { agent, ssh, uploaded })
    }

    /// Whether this link had to upload the agent into the become user's cache.
    pub fn uploaded(&self) -> bool {
        self.uploaded
    }
}

impl From<escalate::BecomeError> for ConnectionError {
    fn from(e: escalate::BecomeError) -> Self {
        ConnectionError::Become { message: e.to_string(), code: None, stderr: String::new() }
    }
}

impl Connection for BecomeLink {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        self.agent.run_module(module, invocation).map_err(|e| said(self.ssh, e))
    }

    fn exec_command(&self, cmd: &str, cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        self.agent.exec_command(cmd, cwd).map_err(|e| said(self.ssh, e))
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        self.agent.run_python(payload, run).map_err(|e| said(self.ssh, e))
    }

    // The agent runs as the become user: what it stages is that user's to read.
    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        self.agent.stage(bytes, name, executable).map_err(|e| said(self.ssh, e))
    }

    fn stage_limit(&self) -> Option<usize> {
        self.agent.stage_limit()
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        self.agent.unstage(file).map_err(|e| said(self.ssh, e))
    }

    fn start_job(&self, job: &tack_protocol::JobSpec) -> Result<ModuleResult, ConnectionError> {
        self.agent.start_job(job).map_err(|e| said(self.ssh, e))
    }
}

fn said(ssh: bool, e: ConnectionError) -> ConnectionError {
    if ssh { crate::ssh_link::ssh_said(e) } else { e }
}

/// The argv running `script` in the login user's `/bin/sh`.
fn login_argv(via: Via<'_>, script: &str) -> Result<Vec<String>, ConnectionError> {
    match via {
        Via::Local => Ok(vec!["/bin/sh".into(), "-c".into(), script.to_string()]),
        Via::Ssh(target) => {
            Ok(target.command(&format!("/bin/sh -c {}", tack_py::shlex::quote(script)))?)
        }
    }
}

/// Runs `script` as the become user (after `first`, run as the login user), with `input`
/// on its stdin once the escalation succeeded; its stdout after the marker.
fn run(
    via: Via<'_>,
    escalation: &Become,
    script: &str,
    first: &str,
    input: Option<&[u8]>,
) -> Result<Vec<u8>, ConnectionError> {
    let (line, esc) = escalation.command(script)?;
    let argv = login_argv(via, &format!("{first}exec {line}"))?;
    let ssh = matches!(via, Via::Ssh(_));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    crate::child::new_session(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|source| ConnectionError::Spawn { program: argv[0].clone(), source })?;
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        let source = std::io::Error::other("the child's pipes were not opened");
        return Err(ConnectionError::Spawn { program: argv[0].clone(), source });
    };
    let answer =
        std::os::fd::AsFd::as_fd(&stdin).try_clone_to_owned().ok().map(std::fs::File::from);
    let mut watch = escalate::Watch::new(esc.clone(), answer, child.id());
    let state = std::sync::Arc::clone(&watch.state);
    let errors = std::thread::spawn(move || {
        use std::io::Read;
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buf) {
            watch.saw(&buf[..n]);
            all.extend_from_slice(&buf[..n]);
        }
        drop(watch);
        all
    });
    let timer = crate::child::kill_after(child.id(), escalate::HANDSHAKE_TIMEOUT_SECS);
    let got = escalate::await_marker(&mut stdout, &esc.marker);
    drop(timer);
    let prompts = escalate::PromptState::finish(&state);
    let finish = |child: &mut std::process::Child| child.wait().ok().and_then(|s| s.code());
    if let Err(before) = got {
        drop(stdin);
        let code = finish(&mut child);
        let stderr = String::from_utf8_lossy(&errors.join().unwrap_or_default()).into_owned();
        return Err(refused(ssh, &esc, prompts, &before, &stderr, code, escalation));
    }
    let writer = input.map(|bytes| {
        let bytes = bytes.to_vec();
        // A thread of its own, so a host that stops reading cannot block the reads below.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        })
    });
    let mut rest = Vec::new();
    let read = std::io::Read::read_to_end(&mut stdout, &mut rest);
    if let Some(w) = writer {
        let _ = w.join();
    }
    let code = finish(&mut child);
    let stderr = String::from_utf8_lossy(&errors.join().unwrap_or_default()).into_owned();
    match (read, code) {
        (Ok(_), Some(0)) => Ok(rest),
        (_, Some(255)) if ssh => Err(ConnectionError::Unreachable {
            message: crate::ssh_link::failed_to_connect(&stderr),
        }),
        (_, code) => Err(ConnectionError::Install {
            step: if input.is_some() { "become upload" } else { "become probe" },
            message: format!(
                "the become user's shell {}: {}",
                code.map_or_else(|| "was killed".to_string(), |c| format!("exited with {c}")),
                stderr.trim_end()
            ),
        }),
    }
}

/// The failure of an escalation whose marker never came.
fn refused(
    ssh: bool,
    esc: &Escalation,
    prompts: usize,
    before: &[u8],
    stderr: &str,
    code: Option<i32>,
    escalation: &Become,
) -> ConnectionError {
    let text = String::from_utf8_lossy(before);
    if let Some(login) = text.lines().find_map(|l| l.strip_prefix(NO_SUCH_USER)) {
        // ansible fails where it hands its temporary files to the missing user.
        return ConnectionError::Become {
            message: if ADMIN_USERS.contains(&login.trim()) {
                "Failed to change ownership of the temporary files Ansible (via chmod nor \
                 setfacl) needs to create despite connecting as a privileged user. \
                 Unprivileged become user would be unable to read the file."
                    .to_string()
            } else {
                format!("the become user '{}' does not exist on the host", escalation.user)
            },
            code,
            stderr: stderr.to_string(),
        };
    }
    if ssh && code == Some(255) {
        return ConnectionError::Unreachable {
            message: crate::ssh_link::failed_to_connect(stderr),
        };
    }
    escalate::failure(esc, prompts, before, stderr, code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escalate::BecomeMethod;

    /// A stand-in for sudo (`become_exe`): it asks for the password with the `-p` prompt when
    /// given one (twice, as sudo does after a wrong one), says what sudo says without one,
    /// then runs the command after `-u USER`.
    const FAKE_SUDO: &str = r#"#!/bin/sh
prompt=
while [ $# -gt 0 ]; do
  case "$1" in -p) prompt=$2; shift 2;; -u) shift 2; break;; *) shift;; esac
done
if [ -z "$prompt" ]; then echo "sudo: a password is required" >&2; exit 1; fi
printf '%s' "$prompt" >&2; read -r pw
if [ "$pw" != secret ]; then
  echo "Sorry, try again." >&2; printf '%s' "$prompt" >&2; read -r pw; exit 1
fi
exec "$@"
"#;

    fn fake(dir: &Path, password: Option<&str>) -> Become {
        use std::os::unix::fs::PermissionsExt;
        let exe = dir.join("fake-sudo");
        std::fs::write(&exe, FAKE_SUDO).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o700)).unwrap();
        Become {
            method: BecomeMethod::Sudo,
            user: "nobody".into(),
            flags: None,
            exe: Some(exe.display().to_string()),
            password: password.map(str::to_string),
        }
    }

    fn message(e: ConnectionError) -> String {
        match e {
            ConnectionError::Become { message, .. } => message,
            other => panic!("not a become failure: {other:?}"),
        }
    }

    #[test]
    fn the_password_answers_the_prompt_and_only_what_follows_the_marker_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let b = fake(dir.path(), Some("secret"));
        let out = run(Via::Local, &b, "echo after; cat", "", Some(b"input")).unwrap();
        assert_eq!(out, b"after\ninput");
    }

    #[test]
    fn a_wrong_or_missing_password_is_told_in_ansibles_words_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let e = run(Via::Local, &fake(dir.path(), Some("wrong-pw")), "true", "", None);
        let text = message(e.unwrap_err());
        assert_eq!(text, "Incorrect sudo password");
        let e = run(Via::Local, &fake(dir.path(), None), "true", "", None);
        assert_eq!(message(e.unwrap_err()), "Missing sudo password");
    }

    #[test]
    fn a_failing_become_program_is_quoted() {
        let b = Become {
            method: BecomeMethod::Su,
            user: "nobody".into(),
            flags: None,
            exe: Some("/bin/false".into()),
            password: None,
        };
        let e = run(Via::Local, &b, "true", "", None).unwrap_err();
        assert_eq!(message(e), "privilege escalation with su failed: it exited with code 1");
    }

    #[test]
    fn a_missing_become_user_is_found_before_escalating() {
        let dir = tempfile::tempdir().unwrap();
        let b = Become { user: "no-such-user-tack".into(), ..fake(dir.path(), None) };
        let first = "if ! id -u -- no-such-user-tack >/dev/null 2>&1; then \
                     echo tack-become:no-such-user:toor; exit 0; fi; ";
        let e = run(Via::Local, &b, "true", first, None).unwrap_err();
        assert!(message(e).starts_with("Failed to change ownership of the temporary files"));
    }

    #[test]
    fn the_become_users_cache_refuses_a_symlink_or_a_directory_of_someone_elses() {
        let dir = tempfile::tempdir().unwrap();
        // The setup with its directory moved into the test's own place.
        let setup =
            |d: &Path| CACHE_SETUP.replace("/tmp/.tack-agent-$(id -u)", &d.display().to_string());
        let sh = |script: String| {
            std::process::Command::new("/bin/sh").arg("-c").arg(script).output().unwrap()
        };
        let fresh = dir.path().join("fresh");
        assert!(sh(setup(&fresh)).status.success());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fresh, &link).unwrap();
        let out = sh(setup(&link));
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("refusing the agent cache"));
        let file = dir.path().join("file");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(sh(setup(&file)).status.code(), Some(3));
    }
}
