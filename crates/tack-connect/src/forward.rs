//! The controller's end of the host's listener (`tack_agent::listen`): a socket in the
//! private ControlPath directory that the ssh ControlMaster forwards (`ssh -O forward -L`)
//! to the listener's socket on the host. A link opened through it costs no ssh process,
//! no session and no shell on the host, where every other link costs all three.
//!
//! Used only where the master is tack's to rely on: the ssh args ask for ControlPersist and
//! the ControlPath is the one tack (as ansible) adds, in a directory made private. The
//! listener lives as long as the master would stay idle (the ControlPersist time, at most
//! [`MAX_IDLE_SECS`]). A forward whose far end is gone (the listener ended, the agent was
//! replaced) is found out by the hello failing, and the link runs the command instead.
//!
//! Owns the local socket and the forward request; the link over it is `child`'s, the
//! listener's side `tack_agent::listen`'s.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tack_protocol::AgentInfo;

use crate::SshTarget;
use crate::child::Shortcut;
use crate::install::AgentImage;

/// The longest a listener stays idle, whatever ControlPersist says (`yes` keeps a master
/// for ever; an agent left on a host for ever is not what anyone asked for).
pub(crate) const MAX_IDLE_SECS: u64 = 600;

/// The shortcut to one destination's listener.
pub(crate) struct Forward {
    target: SshTarget,
    /// The controller's socket, in the ControlPath directory.
    local: PathBuf,
    /// How long the listener may stay idle, in seconds.
    pub(crate) idle_secs: u64,
    /// The host socket this process has set the forward up for.
    forwarded: Mutex<Option<String>>,
}

impl Forward {
    /// The shortcut for `target`'s links to agent `image`, when its ssh command keeps a
    /// master tack may forward through.
    pub(crate) fn for_target(target: &SshTarget, image: &AgentImage) -> Option<Forward> {
        if !target.adds_control_path() {
            return None;
        }
        let idle_secs = control_persist(&target.options().ok()?)?.min(MAX_IDLE_SECS);
        let name = crate::ssh::control_path_name(&target.host, target.port, target.user.as_deref());
        // The agent's hash in the name: a forward to another build's listener is never used.
        let local = target.control_dir().join(format!("{name}-{}.agent", &image.hash_hex()[..12]));
        if !tack_agent::listen::fits_socket(local.to_str()?) {
            return None;
        }
        Some(Forward { target: target.clone(), local, idle_secs, forwarded: Mutex::new(None) })
    }
}

/// Removes the controller's forward sockets to `target`'s listeners, whatever agent build
/// they lead to. Called after `ssh -O stop`: a stopped master keeps serving the forwards it
/// already has until it exits, so a link opened in that moment would ride the old login's
/// listener, which a reset is there to leave behind. With the socket gone the next link
/// logs in anew and forwards to the listener its own agent leaves.
pub(crate) fn forget(target: &SshTarget) {
    if !target.adds_control_path() {
        return;
    }
    let name = crate::ssh::control_path_name(&target.host, target.port, target.user.as_deref());
    let prefix = format!("{name}-");
    let Ok(entries) = std::fs::read_dir(target.control_dir()) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if file.starts_with(&prefix) && file.ends_with(".agent") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl Shortcut for Forward {
    fn open(&self) -> Option<UnixStream> {
        let stream = UnixStream::connect(&self.local).ok()?;
        let wait = Duration::from_secs(u64::from(self.target.timeout.max(1)));
        stream.set_read_timeout(Some(wait)).ok()?;
        Some(stream)
    }

    fn opened(&self, info: &AgentInfo) {
        // The host names it: used only as the far end of the forward, and only when plain.
        let Some(remote) = info.listen.as_deref().filter(|r| tack_agent::listen::fits_socket(r))
        else {
            return;
        };
        let mut forwarded = self.forwarded.lock().unwrap_or_else(PoisonError::into_inner);
        if forwarded.as_deref() == Some(remote) {
            return;
        }
        // A socket nobody answers on is a forward of a master that is gone: ours to remove
        // (the directory is private), or the new forward could not take its name.
        if UnixStream::connect(&self.local).is_err() {
            let _ = std::fs::remove_file(&self.local);
            let Ok(mut argv) = self.target.options() else { return };
            argv.extend([
                "-O".into(),
                "forward".into(),
                "-L".into(),
                format!("{}:{remote}", self.local.display()),
                self.target.host.clone(),
            ]);
            let status = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if !status.is_ok_and(|s| s.success()) {
                return;
            }
        }
        *forwarded = Some(remote.to_string());
    }
}

/// The ControlPersist time the ssh command line asks for, in seconds (the first mention
/// counts, as ssh takes the first value of an option); `None` when it asks for none.
pub(crate) fn control_persist(argv: &[String]) -> Option<u64> {
    argv.iter().find_map(|arg| {
        let lower = arg.to_ascii_lowercase();
        let at = lower.find("controlpersist")?;
        let value = lower[at + "controlpersist".len()..]
            .trim_start_matches(|c: char| c == '=' || c.is_whitespace())
            .trim();
        Some(persist_secs(value))
    })?
}

/// ssh's reading of a ControlPersist value: `yes` (no time limit), `no`, or a time in its
/// `convtime` format (`60`, `60s`, `10m`, `1h30m`).
fn persist_secs(value: &str) -> Option<u64> {
    match value {
        "yes" | "true" => return Some(MAX_IDLE_SECS),
        "no" | "false" | "" => return None,
        _ => {}
    }
    let mut total = 0u64;
    let mut digits = String::new();
    for c in value.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        total = total.checked_add(digits.parse::<u64>().ok()?.checked_mul(unit)?)?;
        digits.clear();
    }
    if !digits.is_empty() {
        total = total.checked_add(digits.parse().ok()?)?;
    }
    (total > 0).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn the_first_control_persist_is_read_as_ssh_reads_its_time() {
        assert_eq!(
            control_persist(&words("ssh -C -o ControlMaster=auto -o ControlPersist=60s")),
            Some(60)
        );
        assert_eq!(
            control_persist(&words("ssh -oControlPersist=1h30m -o ControlPersist=5")),
            Some(5400)
        );
        assert_eq!(control_persist(&["-o".into(), "ControlPersist 90".into()]), Some(90));
        assert_eq!(control_persist(&words("ssh -o ControlPersist=yes")), Some(MAX_IDLE_SECS));
        assert_eq!(control_persist(&words("ssh -o ControlPersist=no")), None);
        assert_eq!(control_persist(&words("ssh -o ControlPersist=0")), None);
        assert_eq!(control_persist(&words("ssh -o ControlPersist=soon")), None);
        assert_eq!(control_persist(&words("ssh -o ControlMaster=auto")), None);
    }
}
