//! The `local` connection run in-process: the controller itself is the host, and tack's
//! native modules run on the calling thread. Each use is recorded for `-vvv`'s connection
//! lines (`crate::transport`).
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
        crate::transport::record(crate::transport::Use::Module(module.to_string()));
        tack_agent::run_module(module, invocation)
            .ok_or_else(|| ConnectionError::NoSuchModule(module.to_string()))
    }

    fn exec_command(
        &self,
        cmd: &str,
        cwd: &std::path::Path,
    ) -> Result<ExecOutput, ConnectionError> {
        crate::transport::record(crate::transport::Use::Exec(cmd.to_string()));
        let out =
            tack_agent::shell::run(cmd, cwd).map_err(|e| ConnectionError::Exec(e.to_string()))?;
        Ok(ExecOutput { rc: out.rc, stdout: out.stdout, stderr: out.stderr })
    }
}
