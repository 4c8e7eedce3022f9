//! What configuration is resolved against: the environment, the working directory and the
//! system-wide configuration path. Tests build one by hand; the binary takes the process's.
//!
//! Paths are UTF-8 strings because ansible's rules are string rules (Python `str` paths); a
//! working directory that is not UTF-8 is refused rather than guessed at.

use std::collections::HashMap;

use crate::ConfigError;

/// Where ansible looks last for its configuration file.
pub const SYSTEM_CONFIG: &str = "/etc/ansible/ansible.cfg";

/// The inputs of configuration resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// The environment; variables that are not UTF-8 are left out (see [`Context::from_process`]).
    pub env: HashMap<String, String>,
    /// The working directory, absolute.
    pub cwd: String,
    /// The system-wide file, `/etc/ansible/ansible.cfg` outside tests.
    pub system_config: String,
}

impl Context {
    /// No environment at all, in `cwd`, with the real system path.
    pub fn empty(cwd: impl Into<String>) -> Context {
        Context { env: HashMap::new(), cwd: cwd.into(), system_config: SYSTEM_CONFIG.into() }
    }

    /// The running process's environment and working directory.
    ///
    /// A variable whose name or value is not UTF-8 is refused when it is one ansible reads
    /// (`ANSIBLE_*`, or any variable a setting names), and ignored otherwise.
    pub fn from_process() -> Result<Context, ConfigError> {
        let mut env = HashMap::new();
        for (name, value) in std::env::vars_os() {
            match (name.into_string(), value.into_string()) {
                (Ok(name), Ok(value)) => {
                    env.insert(name, value);
                }
                (Ok(name), Err(_)) if crate::resolve::is_read_by_ansible(&name) => {
                    return Err(ConfigError::NonUtf8Env { name });
                }
                _ => {}
            }
        }
        let cwd = std::env::current_dir().map_err(|source| ConfigError::Cwd { source })?;
        let cwd = cwd
            .into_os_string()
            .into_string()
            .map_err(|cwd| ConfigError::NonUtf8Path { path: std::path::PathBuf::from(cwd) })?;
        Ok(Context { env, cwd, system_config: SYSTEM_CONFIG.into() })
    }
}
