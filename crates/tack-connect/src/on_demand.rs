//! A link opened on first use: the run hands out connections for every host it may reach
//! before any of them is contacted, and the first `connect` (or request) on the thread that
//! runs the host's task opens it. A host that could not be reached stays unreachable for
//! the link's life (ansible keeps an unreachable host out of the rest of the run).

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use tack_agent::{Invocation, ModuleResult};

use crate::{Connection, ConnectionError, ExecOutput, PythonOutput, PythonRun, StagedFile};

type Open = dyn Fn() -> Result<Box<dyn Connection>, ConnectionError> + Send + Sync;

pub struct OnDemand {
    open: Box<Open>,
    link: Mutex<State>,
    /// What the links it opens have to show (their opening's retries among them).
    notes: crate::Notes,
}

enum State {
    Closed,
    Open(Box<dyn Connection>),
    /// The first open failed as unreachable; its message, for every later use.
    Unreachable(String),
}

impl OnDemand {
    pub fn new(
        open: impl Fn() -> Result<Box<dyn Connection>, ConnectionError> + Send + Sync + 'static,
    ) -> Self {
        OnDemand {
            open: Box::new(open),
            link: Mutex::new(State::Closed),
            notes: Default::default(),
        }
    }

    /// Shows `notes`, which the links `open` makes write to.
    pub fn with_notes(mut self, notes: crate::Notes) -> Self {
        self.notes = notes;
        self
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&dyn Connection) -> Result<T, ConnectionError>,
    ) -> Result<T, ConnectionError> {
        // A panic inside a request leaves the link as it was; the link itself finds out
        // whether it is still in step.
        let mut state = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Closed = *state {
            match (self.open)() {
                Ok(link) => *state = State::Open(link),
                Err(ConnectionError::Unreachable { message }) => {
                    *state = State::Unreachable(message.clone());
                    return Err(ConnectionError::Unreachable { message });
                }
                Err(e) => return Err(e),
            }
        }
        match &*state {
            State::Open(link) => f(link.as_ref()),
            State::Unreachable(message) => {
                Err(ConnectionError::Unreachable { message: message.clone() })
            }
            // Not opened and not failing: only a failed open that was not unreachable
            // leaves it closed, and that returned above.
            State::Closed => Err(ConnectionError::Exec("the link is not open".into())),
        }
    }
}

impl Connection for OnDemand {
    fn take_notes(&self) -> Vec<(u8, String)> {
        self.notes.take()
    }

    fn connect(&self) -> Result<(), ConnectionError> {
        self.with(|link| link.connect())
    }

    fn is_open(&self) -> bool {
        // A link being opened holds the lock: it is as good as open (`connect` waits for it).
        match self.link.try_lock() {
            Ok(state) => !matches!(*state, State::Closed),
            Err(_) => true,
        }
    }

    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        self.with(|link| link.run_module(module, invocation))
    }

    fn exec_command(&self, cmd: &str, cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        self.with(|link| link.exec_command(cmd, cwd))
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        self.with(|link| link.run_python(payload, run))
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        self.with(|link| link.stage(bytes, name, executable))
    }

    fn stage_limit(&self) -> Option<usize> {
        // A link that cannot be opened stages nothing; its stage call says why.
        self.with(|link| Ok(link.stage_limit())).ok().flatten()
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        self.with(|link| link.unstage(file))
    }

    fn start_job(&self, job: &tack_protocol::JobSpec) -> Result<ModuleResult, ConnectionError> {
        self.with(|link| link.start_job(job))
    }

    fn home(&self) -> Result<String, ConnectionError> {
        self.with(|link| link.home())
    }
}
