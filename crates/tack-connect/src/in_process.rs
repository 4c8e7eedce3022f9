//! The host is this machine and the agent's code runs on the calling thread: no process, no
//! frames. What the engine's `local` connection runs, and the yardstick the agent links are
//! tested against. Files are staged in a private directory of their own on this machine
//! (`staged`), as ansible's local connection stages them.

use std::path::Path;

use tack_agent::python::{PythonHost, PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};

use tack_protocol::JobSpec;

use crate::{Connection, ConnectionError, ExecOutput, StagedFile, staged};

pub struct InProcess;

impl Connection for InProcess {
    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        tack_agent::run_module(module, invocation)
            .ok_or_else(|| ConnectionError::NoSuchModule(module.to_string()))
    }

    fn exec_command(&self, cmd: &str, cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        let out =
            tack_agent::shell::run(cmd, cwd).map_err(|e| ConnectionError::Exec(e.to_string()))?;
        Ok(ExecOutput { rc: out.rc, stdout: out.stdout, stderr: out.stderr })
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        // One store and warm servers per interpreter for the whole process, as an agent
        // keeps them for its link (as many servers as local hosts ran modules at once).
        PythonHost::run_shared(payload, run).map_err(|e| ConnectionError::Python(e.to_string()))
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        staged::stage_local(bytes, name, executable)
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        staged::unstage_local(file)
    }

    /// The job process is this process's own executable (`tack`) re-invoked.
    fn start_job(&self, job: &JobSpec) -> Result<ModuleResult, ConnectionError> {
        let exe = std::env::current_exe()
            .map_err(|e| ConnectionError::Exec(format!("cannot find tack's executable: {e}")))?;
        Ok(tack_agent::jobs::start(&exe, job))
    }

    /// The password database's home, as ansible's `~user` expansion finds it.
    fn home(&self) -> Result<String, ConnectionError> {
        // SAFETY: getuid cannot fail and touches no memory.
        tack_agent::modules::user_home(unsafe { libc::getuid() })
            .map(|h| h.display().to_string())
            .ok_or_else(|| ConnectionError::Exec("this user has no home directory".into()))
    }
}
