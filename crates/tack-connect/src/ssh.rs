//! Where and how to reach a host over SSH ([`SshTarget`]), and the `ssh` command line
//! ansible-core 2.21's `ssh` connection plugin builds from the same settings (its
//! `_build_command`): the same options in the same order, so that `~/.ssh/config`, a
//! ControlMaster shared with ansible and every `ssh_args` trick behave the same.
//!
//! Owns the argv only; running it is `ssh_link`'s and `install`'s job. Knows nothing of
//! inventories: the engine fills an [`SshTarget`] from a host's variables.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use sha1::{Digest, Sha1};
use tack_py::path::{Environ, ProcessEnv};

/// ansible's default `ssh_args` (`ANSIBLE_SSH_ARGS`, `[ssh_connection] ssh_args`).
pub const DEFAULT_SSH_ARGS: &str = "-C -o ControlMaster=auto -o ControlPersist=60s";

/// ansible's default `control_path_dir`.
pub const DEFAULT_CONTROL_PATH_DIR: &str = "~/.ansible/cp";

/// One host as the `ssh` connection reaches it; each field is the ansible setting named in
/// its doc, with ansible's default in [`SshTarget::new`]. Two equal targets are one connection
/// signature (a task whose target differs from the last one's needs a new link). Its `Debug`
/// hides the password.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SshTarget {
    /// `ansible_host` (the inventory name when unset).
    pub host: String,
    /// `ansible_port`; `None` leaves the port to ssh (and its config).
    pub port: Option<u16>,
    /// `ansible_user` / `remote_user`; `None` leaves the user to ssh.
    pub user: Option<String>,
    /// `ansible_ssh_private_key_file`, `~` expanded as ansible does.
    pub private_key_file: Option<String>,
    /// `ansible_password` (or `-k`): handed to ssh as `password_mechanism` says
    /// (`askpass`).
    pub password: Option<String>,
    /// `ansible_sshpass_prompt` / `sshpass_prompt`: the text of the prompt the password
    /// answers (unset: ansible's `assword` for `ssh_askpass`, sshpass's own for `sshpass`).
    pub sshpass_prompt: Option<String>,
    /// `ansible_private_key`: key material, which ansible adds to the ssh-agent of its
    /// `SSH_AGENT` setting. The engine sets it only where that is `none` (ansible's default),
    /// where ansible fails the host at its first connection, as the link does
    /// ([`SshTarget::unusable_key`]).
    pub private_key: Option<String>,
    /// `ansible_ssh_pkcs11_provider`: with a password (the PIN), ssh is told to use the
    /// provider's keys only, and the PIN answers its `Enter PIN for ` prompt.
    pub pkcs11_provider: Option<String>,
    /// `ansible_ssh_executable`.
    pub ssh_executable: String,
    /// `ansible_ssh_args`.
    pub ssh_args: String,
    /// `ansible_ssh_common_args`.
    pub ssh_common_args: Option<String>,
    /// `ansible_ssh_extra_args`.
    pub ssh_extra_args: Option<String>,
    /// `ansible_ssh_timeout` / `timeout`, in seconds.
    pub timeout: u32,
    /// `ansible_ssh_retries` / `reconnection_retries`: how many more times a link is tried
    /// when ssh fails (exit 255).
    pub retries: u32,
    /// `ansible_ssh_password_mechanism` / `password_mechanism` (`ssh_askpass`, `sshpass`,
    /// `disable`): with no password, all it changes is the command line.
    pub password_mechanism: String,
    /// `host_key_checking` (`ANSIBLE_HOST_KEY_CHECKING`).
    pub host_key_checking: bool,
    /// `ansible_control_path_dir`.
    pub control_path_dir: String,
    /// `[ssh_connection] control_path` (`ANSIBLE_SSH_CONTROL_PATH`): the ControlPath ansible
    /// adds, a Python `%` format where `%(directory)s` is the control path directory and
    /// `%%` a `%` (so `%%h` reaches ssh as its own `%h`); unset, a hash of the host, port
    /// and user in that directory.
    pub control_path: Option<String>,
}

impl std::fmt::Debug for SshTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshTarget")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("private_key_file", &self.private_key_file)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("sshpass_prompt", &self.sshpass_prompt)
            .field("private_key", &self.private_key.as_ref().map(|_| "<hidden>"))
            .field("pkcs11_provider", &self.pkcs11_provider)
            .field("ssh_executable", &self.ssh_executable)
            .field("ssh_args", &self.ssh_args)
            .field("ssh_common_args", &self.ssh_common_args)
            .field("ssh_extra_args", &self.ssh_extra_args)
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("password_mechanism", &self.password_mechanism)
            .field("host_key_checking", &self.host_key_checking)
            .field("control_path_dir", &self.control_path_dir)
            .field("control_path", &self.control_path)
            .finish()
    }
}

/// Why no `ssh` command line could be made for a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshError {
    /// An args string that `shlex.split` rejects (ansible fails the same way).
    #[error("cannot split {setting} ({value:?}): {reason}")]
    Split { setting: &'static str, value: String, reason: String },
    /// A PKCS#11 provider without the PIN to unlock it (ansible's words).
    #[error("to use pkcs11_provider you must specify a password/pin")]
    Pkcs11WithoutPin,
    /// `password_mechanism: sshpass` with a password, and no `sshpass` on the PATH (ansible's
    /// words).
    #[error("to use the password_mechanism=sshpass, you must install the sshpass program")]
    NoSshpass,
    /// The askpass server could not be started.
    #[error("cannot hand the password to ssh: {0}")]
    Askpass(String),
    /// A `control_path` Python's `%` formatting rejects (ansible fails on it too).
    #[error(
        "cannot format control_path ({value:?}): only %(directory)s and %% may follow a %, \
         as in %(directory)s/%%h-%%p-%%r"
    )]
    ControlPath { value: String },
}

impl SshTarget {
    /// A target with ansible's defaults for everything but the address.
    pub fn new(host: impl Into<String>) -> Self {
        SshTarget {
            host: host.into(),
            port: None,
            user: None,
            private_key_file: None,
            password: None,
            sshpass_prompt: None,
            private_key: None,
            pkcs11_provider: None,
            ssh_executable: "ssh".into(),
            ssh_args: DEFAULT_SSH_ARGS.into(),
            ssh_common_args: None,
            ssh_extra_args: None,
            timeout: 10,
            retries: 0,
            password_mechanism: "ssh_askpass".into(),
            host_key_checking: true,
            control_path_dir: DEFAULT_CONTROL_PATH_DIR.into(),
            control_path: None,
        }
    }

    /// The command line up to (not including) the host: what ansible's `_build_command`
    /// gives for the `ssh` binary before its `other_args`.
    pub fn options(&self) -> Result<Vec<String>, SshError> {
        self.options_in(&ProcessEnv)
    }

    /// [`SshTarget::options`] with `~` and `$VAR` resolved against `env`.
    pub fn options_in(&self, env: &dyn Environ) -> Result<Vec<String>, SshError> {
        let mut argv = vec![self.ssh_executable.clone()];
        // ansible's pkcs11 mode, first of all: only the provider's keys.
        if let (Some(_), Some(provider)) = (&self.password, &self.pkcs11_provider) {
            argv.extend(
                [
                    "-o",
                    "KbdInteractiveAuthentication=no",
                    "-o",
                    "PreferredAuthentications=publickey",
                    "-o",
                    "PasswordAuthentication=no",
                    "-o",
                ]
                .map(String::from),
            );
            argv.push(format!("PKCS11Provider={provider}"));
        }
        argv.extend(split("ssh_args", &self.ssh_args)?);
        if !self.host_key_checking {
            argv.extend(["-o".into(), "StrictHostKeyChecking=no".into()]);
        }
        if let Some(port) = self.port {
            argv.extend(["-o".into(), format!("Port={port}")]);
        }
        if let Some(key) = &self.private_key_file {
            let key = tack_py::path::expanduser(Path::new(key), env);
            argv.extend(["-o".into(), format!("IdentityFile=\"{}\"", key.display())]);
        }
        if self.password.is_none() {
            argv.extend(
                [
                    "-o",
                    "KbdInteractiveAuthentication=no",
                    "-o",
                    "PreferredAuthentications=gssapi-with-mic,gssapi-keyex,hostbased,publickey",
                    "-o",
                    "PasswordAuthentication=no",
                ]
                .map(String::from),
            );
        }
        if let Some(user) = &self.user {
            argv.extend(["-o".into(), format!("User=\"{user}\"")]);
        }
        argv.extend(["-o".into(), format!("ConnectTimeout={}", self.timeout)]);
        if let Some(common) = &self.ssh_common_args {
            argv.extend(split("ssh_common_args", common)?);
        }
        if let Some(extra) = &self.ssh_extra_args {
            argv.extend(split("ssh_extra_args", extra)?);
        }
        // ansible looks for the two words anywhere in any argument, case-insensitively.
        let mentions = |word: &str| argv.iter().any(|a| a.to_lowercase().contains(word));
        let persist = mentions("controlpersist");
        // An argument naming both counts as ControlPersist only (ansible's elif).
        let path = argv.iter().any(|a| {
            let a = a.to_lowercase();
            !a.contains("controlpersist") && a.contains("controlpath")
        });
        if persist && !path {
            argv.extend(["-o".into(), self.control_path_option(env)?]);
        }
        // ansible's password_mechanism ssh_askpass (its default) adds this whether or not
        // there is a password.
        if self.password_mechanism == "ssh_askpass" {
            argv.extend(["-o".into(), "NumberOfPasswordPrompts=1".into()]);
        }
        Ok(argv)
    }

    /// The whole command line running `remote_command` on the host.
    pub fn command(&self, remote_command: &str) -> Result<Vec<String>, SshError> {
        let mut argv = self.options()?;
        argv.extend([self.host.clone(), remote_command.to_string()]);
        Ok(argv)
    }

    /// ansible's failure of a host whose `private_key` it cannot put in an agent
    /// (`SSH_AGENT` `none`): the host is unreachable.
    pub(crate) fn unusable_key(&self) -> Result<(), crate::ConnectionError> {
        match self.private_key {
            Some(_) => Err(crate::ConnectionError::Unreachable {
                message: "Failed to authenticate: Failed to add configured private key into \
                          ssh-agent: Cannot utilize private_key with SSH_AGENT disabled"
                    .into(),
            }),
            None => Ok(()),
        }
    }

    /// How a session's `ssh` gets the password (`None`: there is none, or
    /// `password_mechanism: disable` leaves it to ssh).
    pub(crate) fn login(&self) -> Result<Option<crate::askpass::Login>, SshError> {
        let Some(password) = &self.password else {
            return match (&self.pkcs11_provider, self.password_mechanism.as_str()) {
                (Some(_), "ssh_askpass" | "sshpass") => Err(SshError::Pkcs11WithoutPin),
                _ => Ok(None),
            };
        };
        // The prompt the password answers: the setting's, else a PKCS#11 PIN's.
        let pin_prompt =
            self.pkcs11_provider.as_ref().map(|_| crate::askpass::PKCS11_PROMPT.to_string());
        let prompt = self.sshpass_prompt.clone().filter(|p| !p.is_empty()).or(pin_prompt);
        match self.password_mechanism.as_str() {
            "sshpass" => {
                if !on_path("sshpass") {
                    return Err(SshError::NoSshpass);
                }
                Ok(Some(crate::askpass::Login::Sshpass { password: password.clone(), prompt }))
            }
            "ssh_askpass" => {
                let prompt = prompt.unwrap_or_else(|| crate::askpass::DEFAULT_PROMPT.into());
                // ssh runs this binary as its askpass program (`askpass::helper_main`).
                let program =
                    std::env::current_exe().map_err(|e| SshError::Askpass(e.to_string()))?;
                let server = crate::askpass::Askpass::start(password.clone(), prompt, program)
                    .map_err(|e| SshError::Askpass(e.to_string()))?;
                Ok(Some(crate::askpass::Login::Askpass(server)))
            }
            _ => Ok(None),
        }
    }

    /// Where the ControlPath socket goes when ansible adds one: `control_path_dir`
    /// unfracked (`$VAR`, `~`, made absolute, normalised).
    pub fn control_dir(&self) -> PathBuf {
        self.control_dir_in(&ProcessEnv)
    }

    fn control_dir_in(&self, env: &dyn Environ) -> PathBuf {
        tack_py::ansible::unfrackpath_in(Path::new(&self.control_path_dir), false, None, env)
    }

    /// The `ControlPath="..."` option ansible adds when the args ask for ControlPersist and
    /// name no ControlPath.
    fn control_path_option(&self, env: &dyn Environ) -> Result<String, SshError> {
        let dir = self.control_dir_in(env).display().to_string();
        let path = match &self.control_path {
            Some(format) if !format.is_empty() => percent_directory(format, &dir)
                .ok_or_else(|| SshError::ControlPath { value: format.clone() })?,
            _ => {
                format!("{dir}/{}", control_path_name(&self.host, self.port, self.user.as_deref()))
            }
        };
        Ok(format!("ControlPath=\"{path}\""))
    }

    /// Whether the command line will carry a ControlPath that ansible made (so the control
    /// path directory must exist before ssh runs, as ansible makes it).
    pub(crate) fn adds_control_path(&self) -> bool {
        match (self.options(), self.control_path_option(&ProcessEnv)) {
            (Ok(argv), Ok(ours)) => argv.contains(&ours),
            _ => false,
        }
    }
}

/// Python's `format % {"directory": dir}` for the two conversions a control path has any
/// use for (`%(directory)s`, `%%`); `None` for any other, which Python's would reject or
/// read as another key.
fn percent_directory(format: &str, dir: &str) -> Option<String> {
    let mut out = String::with_capacity(format.len() + dir.len());
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("(directory)s") {
            out.push_str(dir);
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('%') {
            out.push('%');
            rest = tail;
        } else {
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

/// ansible's `_create_control_path`: the first ten hex digits of the SHA-1 of
/// `host-port-user`, where an unset port or user is Python's `None`.
pub fn control_path_name(host: &str, port: Option<u16>, user: Option<&str>) -> String {
    let port = port.map_or_else(|| "None".to_string(), |p| p.to_string());
    let text = format!("{host}-{port}-{}", user.unwrap_or("None"));
    let digest = Sha1::digest(text.as_bytes());
    digest.iter().take(5).map(|b| format!("{b:02x}")).collect()
}

/// ansible's `_split_ssh_args`: `shlex.split`, then each word stripped, empty ones dropped.
fn split(setting: &'static str, value: &str) -> Result<Vec<String>, SshError> {
    let words = tack_py::shlex::split(value).map_err(|e| SshError::Split {
        setting,
        value: value.to_string(),
        reason: e.to_string(),
    })?;
    Ok(words
        .iter()
        .map(|w| w.trim_matches(|c: char| c.is_whitespace()).to_string())
        .filter(|w| !w.is_empty())
        .collect())
}

/// Whether `program` is an executable file in a directory of the PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| is_executable(&dir.join(OsStr::new(program))))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
