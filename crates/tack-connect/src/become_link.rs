//! A link whose agent runs as the become user ([`BecomeLink`]), on a host reached over SSH
//! or on the controller itself. The become user never runs a file the login user owns: it
//! gets the agent in a private cache of its own, `/tmp/.tack-agent-<uid>` (made 0700; a
//! pre-existing one that is a symbolic link, not a directory, or not its own is refused),
//! streamed from the controller on first contact exactly as the login user's cache is (the
//! same one-session contact script, the upload only when missing, size and hash checked),
//! all run through the become program with [`crate::escalate`]'s handshake first.
//!
//! Owns the become user's side of first contact; the become command line and handshake are
//! `escalate`'s, the agent's process `child`'s, the `ssh` command line `ssh`'s.

use std::io::Write;
use std::sync::Arc;

use crate::child::{AgentCommand, ChildAgent, Preamble};
use crate::escalate::{self, Become};
use crate::install::{self, AgentImage};
use crate::ssh_link::{Destination, FirstContact};
use crate::{Connection, ConnectionError, Decorator, SshTarget};

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
    contact: Arc<BecomeContact>,
}

impl BecomeLink {
    /// Escalates to `become` through `via` and starts the agent from the become user's
    /// cache, installing `image` there when it lacks it: all in one session (the login
    /// user's shell checks the user exists, the become program runs
    /// [`install::contact_script_in`] for that cache), so a host whose become user has the
    /// agent costs one session.
    pub fn connect(
        via: Via<'_>,
        image: &AgentImage,
        escalation: &Become,
    ) -> Result<BecomeLink, ConnectionError> {
        Self::connect_noting(via, image, escalation, &crate::Notes::default())
    }

    /// [`BecomeLink::connect`], an ssh link's retries (`SshTarget::retries`) told in `notes`.
    pub fn connect_noting(
        via: Via<'_>,
        image: &AgentImage,
        escalation: &Become,
        notes: &crate::Notes,
    ) -> Result<BecomeLink, ConnectionError> {
        let ssh = matches!(via, Via::Ssh(_));
        if let Via::Ssh(target) = via {
            target.unusable_key()?;
        }
        if let Via::Ssh(target) = via
            && target.adds_control_path()
        {
            crate::ssh_link::make_private_dir(&target.control_dir())?;
        }
        let script = install::contact_script_in(
            image,
            &format!("{CACHE_SETUP}; "),
            &format!("\"$d\"/{}", image.file_name()),
            CACHE_SETUP,
        );
        let user_check = format!(
            "if ! id -u -- {user} >/dev/null 2>&1; then echo {NO_SUCH_USER}\"$(id -un)\"; \
             exit 0; fi; ",
            user = tack_py::shlex::quote(&escalation.user)
        );
        let (line, esc) = escalation.command(&script)?;
        // `-vvv`: the escalation that starts the become user's agent (ansible shows each
        // escalated command it runs). It holds no password: that goes to the prompt.
        notes.push(
            3,
            format!(
                "BECOME {} (starts tack's agent as {})",
                escalation.program()?,
                escalation.user
            ),
        );
        let argv = login_argv(via, &format!("{user_check}exec {line}"))?;
        let destination = match via {
            Via::Ssh(target) => Some(target.clone()),
            Via::Local => None,
        };
        let contact = Arc::new(BecomeContact {
            first: FirstContact::new(
                image.clone(),
                Destination::Become(destination, escalation.user.clone()),
                ("become probe", "become upload"),
            ),
            ssh,
            user: escalation.user.clone(),
        });
        let mut command = AgentCommand::new(&argv[0])
            .args(&argv[1..])
            .escalating(esc)
            .preamble(Arc::clone(&contact) as Arc<dyn Preamble>);
        if let Via::Ssh(target) = via {
            command = command.retrying(target.retries, notes.clone()).login(target.login()?);
        }
        let host = match via {
            Via::Ssh(target) => target.host.clone(),
            Via::Local => "localhost".to_string(),
        };
        let agent =
            ChildAgent::spawn_command(command).map_err(|e| said(ssh, e))?.staging_for(&host);
        Ok(BecomeLink { agent, ssh, contact })
    }

    /// Whether the last link this connection opened had to upload the agent into the
    /// become user's cache.
    pub fn uploaded(&self) -> bool {
        self.contact.first.uploaded()
    }
}

/// First contact in the become user's cache, and what the login user's shell says when
/// the escalation never happened.
struct BecomeContact {
    first: FirstContact,
    ssh: bool,
    user: String,
}

impl Preamble for BecomeContact {
    fn run(
        &self,
        stdout: &mut dyn std::io::Read,
        stdin: &mut dyn Write,
    ) -> Result<(), Option<ConnectionError>> {
        self.first.run(stdout, stdin)
    }

    fn ended(&self, code: Option<i32>, stderr: &str) -> ConnectionError {
        self.first.ended(code, stderr)
    }

    fn refused(&self, before: &[u8], stderr: &str, code: Option<i32>) -> Option<ConnectionError> {
        refused(self.ssh, before, stderr, code, &self.user)
    }
}

impl From<escalate::BecomeError> for ConnectionError {
    fn from(e: escalate::BecomeError) -> Self {
        ConnectionError::Become { message: e.to_string(), code: None, stderr: String::new() }
    }
}

// The agent runs as the become user: what it stages is that user's to read.
impl Decorator for BecomeLink {
    fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
        Ok(&self.agent)
    }

    fn error(&self, error: ConnectionError) -> ConnectionError {
        said(self.ssh, error)
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

/// The failure of an escalation whose marker never came, when the login user's shell or
/// ssh says why: the become user does not exist, or the host could not be reached. `None`:
/// the become program's own words tell it.
fn refused(
    ssh: bool,
    before: &[u8],
    stderr: &str,
    code: Option<i32>,
    user: &str,
) -> Option<ConnectionError> {
    let text = String::from_utf8_lossy(before);
    if let Some(login) = text.lines().find_map(|l| l.strip_prefix(NO_SUCH_USER)) {
        // ansible fails where it hands its temporary files to the missing user.
        return Some(ConnectionError::Become {
            message: if ADMIN_USERS.contains(&login.trim()) {
                "Failed to change ownership of the temporary files Ansible (via chmod nor \
                 setfacl) needs to create despite connecting as a privileged user. \
                 Unprivileged become user would be unable to read the file."
                    .to_string()
            } else {
                format!("the become user '{user}' does not exist on the host")
            },
            code,
            stderr: stderr.to_string(),
        });
    }
    if ssh && code == Some(255) {
        return Some(ConnectionError::Unreachable {
            message: crate::ssh_link::failed_to_connect(stderr),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tack_agent::Invocation;

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

    fn connect(b: &Become) -> Result<BecomeLink, ConnectionError> {
        BecomeLink::connect(Via::Local, &crate::install::test_image(), b)
    }

    #[test]
    fn the_password_answers_the_prompt_and_the_agent_runs_after_the_marker() {
        let dir = tempfile::tempdir().unwrap();
        let link = connect(&fake(dir.path(), Some("secret"))).unwrap();
        let pong = link.run_module("ping", &Invocation::default()).unwrap();
        assert_eq!(pong["ping"], "pong");
    }

    #[test]
    fn a_wrong_or_missing_password_is_told_in_ansibles_words_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let e = connect(&fake(dir.path(), Some("wrong-pw"))).err().unwrap();
        assert_eq!(message(e), "Incorrect sudo password");
        let e = connect(&fake(dir.path(), None)).err().unwrap();
        assert_eq!(message(e), "Missing sudo password");
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
        let e = connect(&b).err().unwrap();
        assert_eq!(message(e), "privilege escalation with su failed: it exited with code 1");
    }

    #[test]
    fn a_missing_become_user_is_found_before_escalating() {
        let dir = tempfile::tempdir().unwrap();
        let b = Become { user: "no-such-user-tack".into(), ..fake(dir.path(), None) };
        let e = connect(&b).err().unwrap();
        // SAFETY: geteuid cannot fail and touches no memory.
        let login = tack_agent::modules::user_name(unsafe { libc::geteuid() }).unwrap_or_default();
        let text = message(e);
        if ADMIN_USERS.contains(&login.as_str()) {
            assert!(
                text.starts_with("Failed to change ownership of the temporary files"),
                "{text}"
            );
        } else {
            assert_eq!(text, "the become user 'no-such-user-tack' does not exist on the host");
        }
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
