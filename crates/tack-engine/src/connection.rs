//! How a task reaches a host: a [`Connection`] runs a module there and returns its result.
//! `local` runs tack's native modules in this process; the SSH connection and the uploaded
//! agent (issue 5) implement the same trait.
//!
//! A connection carries arguments and results; it never decides anything about the task.

use tack_agent::{Invocation, ModuleResult};

/// Why a module could not be run on a host (the host is then unreachable, not failed).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectionError {
    #[error("tack has no native module '{0}'")]
    NoSuchModule(String),
}

/// A link to one host.
pub trait Connection: Send + Sync {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError>;
}

/// The `local` connection: the controller itself is the host.
pub struct Local;

impl Connection for Local {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        tack_agent::run_module(module, invocation)
            .ok_or_else(|| ConnectionError::NoSuchModule(module.to_string()))
    }
}
