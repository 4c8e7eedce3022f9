//! The `local` connection run in-process: the controller itself is the host, and tack's
//! native modules run on the calling thread.
//!
//! Owns nothing but the call; modules and the shell runner are `tack_agent`'s.

use tack_agent::{Invocation, ModuleResult};

use super::{Connection, ConnectionError, ExecOutput};

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

    fn exec_command(
        &self,
        cmd: &str,
        cwd: &std::path::Path,
    ) -> Result<ExecOutput, ConnectionError> {
        let out =
            tack_agent::shell::run(cmd, cwd).map_err(|e| ConnectionError::Exec(e.to_string()))?;
        Ok(ExecOutput { rc: out.rc, stdout: out.stdout, stderr: out.stderr })
    }
}
