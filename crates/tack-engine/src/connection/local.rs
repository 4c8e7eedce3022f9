//! The `local` connection run in-process: the controller itself is the host, and tack's
//! native modules run on the calling thread (`tack_connect::InProcess`). Each use is recorded
//! for `-vvv`'s connection lines (`crate::transport`).
//!
//! Owns nothing but the record; modules and the shell runner are `tack_agent`'s.

use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};
use tack_connect::InProcess;

use super::{Connection, ConnectionError, ExecOutput, StagedFile};

pub struct Local;

impl Connection for Local {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        crate::transport::record(crate::transport::Use::Module(module.to_string()));
        InProcess.run_module(module, invocation)
    }

    fn exec_command(
        &self,
        cmd: &str,
        cwd: &std::path::Path,
    ) -> Result<ExecOutput, ConnectionError> {
        crate::transport::record(crate::transport::Use::Exec(cmd.to_string()));
        InProcess.exec_command(cmd, cwd)
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        crate::transport::record(crate::transport::Use::Python(run.fqn.clone()));
        InProcess.run_python(payload, run)
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        let file = InProcess.stage(bytes, name, executable)?;
        crate::transport::record(crate::transport::Use::Put(bytes.len(), file.path().into()));
        Ok(file)
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        InProcess.unstage(file)
    }

    fn start_job(&self, job: &tack_connect::JobSpec) -> Result<ModuleResult, ConnectionError> {
        crate::transport::record(crate::transport::Use::Job(job.module.clone()));
        InProcess.start_job(job)
    }

    fn home(&self) -> Result<String, ConnectionError> {
        InProcess.home()
    }
}
