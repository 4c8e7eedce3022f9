//! Connection plugins written in Python (ansible-core's own besides `local` and `ssh`, a
//! collection's, one in `connection_plugins/` beside a playbook or role), run as ansible runs
//! them: the plugin object made by ansible-core's loader, its options set from the host's
//! variables as ansible's task executor sets them, and its become plugin, in a process of the
//! run's ansible-core interpreter running our `worker.py`, one per link.
//!
//! What tack runs on the host goes through the plugin's own `exec_command` and `put_file`:
//! a command as it is (`raw`), a file into a temporary directory made as ansible's action
//! base makes its own, and a module by tack's agent, put there once per link and run with its
//! whole conversation as the command's input (`tack_connect::batch`). An
//! `AnsibleConnectionFailure` the plugin raises makes the host unreachable; any other error
//! fails the task with the plugin's words.
//!
//! Owns the worker processes and what crosses to them; which hosts take such a link is
//! `tack_links`'.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use base64::Engine as _;
use serde_json::{Map, Value as Json, json};
use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};
use tack_connect::{Become, Connection, ConnectionError, ExecOutput, StagedFile, batch};
use tack_links::{PluginFacts, PluginSettings};

use crate::python_plugins::to_wire;

/// Our worker script, after what every worker shares (`python_wire.py`).
const WORKER: &str = concat!(include_str!("../python_wire.py"), include_str!("worker.py"));

/// How long a worker gets to close its plugin and remove its directory once asked.
const GRACE: std::time::Duration = std::time::Duration::from_secs(5);

type Worker = crate::python_lines::Lines;

/// What every worker of the run is started with.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// The configuration file the run read, so the worker's ansible reads the same.
    pub config_file: Option<PathBuf>,
    /// The playbook and role directories: their `connection_plugins/` is searched as
    /// ansible adds them. The `connection_plugins` setting's are ansible's loader's own.
    pub dirs: Vec<PathBuf>,
    /// Where collections are found.
    pub collections: Vec<PathBuf>,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

/// Settles the run's worker setup (the first call wins: one run per process).
pub fn configure(setup: Setup) {
    let _ = SETUP.set(setup);
}

/// What each plugin name was found to read (or ansible's error for it), asked once.
static FACTS: Mutex<Option<HashMap<String, Result<PluginFacts, String>>>> = Mutex::new(None);

/// The worker that answers `describe`, kept for the run.
static DESCRIBER: Mutex<Option<Worker>> = Mutex::new(None);

/// The agent's bytes as a file on the controller, private to this run, for the workers to
/// put on hosts (the agent may be embedded in tack's own binary).
static AGENT_FILE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Ends the describing worker and removes the agent's file (the binary calls it once the
/// run is over; each link's worker ends with its link).
pub fn shutdown() {
    drop(DESCRIBER.lock().unwrap_or_else(PoisonError::into_inner).take());
    if let Some(file) = AGENT_FILE.lock().unwrap_or_else(PoisonError::into_inner).take()
        && let Some(dir) = file.parent()
    {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn start_worker(agent: Option<&Path>) -> Result<Worker, String> {
    let Some(core) = crate::python_path::core() else {
        return Err(format!(
            "connection plugins written in Python run through ansible-core on the controller: {}",
            crate::python_path::why_not()
        ));
    };
    let setup = SETUP.get().cloned().unwrap_or_default();
    let mut command =
        crate::python_path::worker_command(&core.python, WORKER, setup.config_file.as_deref());
    let mut worker =
        Worker::spawn(&mut command, "the connection plugin worker", GRACE).map_err(|e| {
            format!("could not start {} for a connection plugin: {e}", core.python.display())
        })?;
    worker.send(&json!({
        "collections": setup.collections,
        "dirs": setup.dirs,
        "agent": agent,
    }))?;
    let ready = worker.receive()?;
    if let Some(fatal) = ready.get("fatal").and_then(Json::as_str) {
        return Err(format!("the connection plugin worker could not load ansible-core: {fatal}"));
    }
    Ok(worker)
}

/// The variables the connection plugin `name` (and its shell) reads, as ansible-core's
/// configuration lists them; `Err` is ansible's error for the plugin (`the connection plugin
/// '...' was not found`) or why it could not be asked. Asked once per name.
pub fn describe(name: &str) -> Result<PluginFacts, String> {
    let mut facts = FACTS.lock().unwrap_or_else(PoisonError::into_inner);
    let facts = facts.get_or_insert_with(HashMap::new);
    if let Some(known) = facts.get(name) {
        return known.clone();
    }
    let answer = (|| -> Result<PluginFacts, String> {
        let mut describer = DESCRIBER.lock().unwrap_or_else(PoisonError::into_inner);
        if describer.is_none() {
            let started = start_worker(None)
                .map_err(|why| format!("tack cannot load the connection plugin '{name}': {why}"))?;
            *describer = Some(started);
        }
        let Some(worker) = describer.as_mut() else { return Err("no worker".into()) };
        worker.send(&json!({ "op": "describe", "name": name }))?;
        let mut deprecation = None;
        let reply = loop {
            let reply = worker.receive()?;
            if reply.get("op").and_then(Json::as_str) != Some("display") {
                break reply;
            }
            // Loading the plugin raised ansible-core's deprecation of it: each task using it
            // shows it (the engine's), not this one question.
            deprecation = deprecation.or_else(|| crate::python_lines::core_deprecation(&reply));
        };
        if let Some(error) = reply.get("error").and_then(Json::as_str) {
            return Err(error.to_string());
        }
        let vars = reply
            .get("vars")
            .and_then(Json::as_array)
            .map(|v| v.iter().filter_map(Json::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        Ok(PluginFacts { vars, deprecation })
    })();
    facts.insert(name.to_string(), answer.clone());
    answer
}

/// The agent's file for the workers, written on first need.
fn agent_file(image: &[u8]) -> Result<PathBuf, ConnectionError> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let mut file = AGENT_FILE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = file.as_ref() {
        return Ok(path.clone());
    }
    let failed = |e: std::io::Error| {
        ConnectionError::AgentImage(format!(
            "could not write the agent for a connection plugin: {e}"
        ))
    };
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|e| failed(std::io::Error::other(e.to_string())))?;
    let dir = std::env::temp_dir().join(format!(
        "tack-plugin-agent-{}-{}",
        std::process::id(),
        nonce.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&dir).map_err(failed)?;
    let path = dir.join("tack-agent");
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&path)
        .map_err(failed)?;
    out.write_all(image).map_err(failed)?;
    *file = Some(path.clone());
    Ok(path)
}

/// A link through a connection plugin written in Python: its worker starts, and the plugin
/// is made, on first use.
pub struct PluginLink {
    settings: PluginSettings,
    escalation: Option<Become>,
    image: std::sync::Arc<[u8]>,
    verbosity: u8,
    worker: Mutex<Option<Result<Worker, ConnectionError>>>,
    /// What the plugin printed since the last [`Connection::take_notes`].
    notes: Mutex<Vec<(u8, String)>>,
}

impl PluginLink {
    /// `image` is the agent's bytes (put on the host before its first module); `verbosity`
    /// the run's `-v` count the plugin prints for.
    pub fn new(
        settings: PluginSettings,
        escalation: Option<Become>,
        image: std::sync::Arc<[u8]>,
        verbosity: u8,
    ) -> Self {
        PluginLink {
            settings,
            escalation,
            image,
            verbosity,
            worker: Mutex::new(None),
            notes: Mutex::new(Vec::new()),
        }
    }

    fn open_request(&self) -> Json {
        let options: Map<String, Json> = self
            .settings
            .options
            .0
            .iter()
            .map(|(name, value)| (name.clone(), to_wire(value)))
            .collect();
        let escalation = self.escalation.as_ref().map(|b| {
            json!({
                "method": b.method.name(),
                "user": b.user,
                "flags": b.flags,
                "exe": b.exe,
                "password": b.password,
            })
        });
        json!({
            "op": "open",
            "name": self.settings.name,
            "address": self.settings.address,
            "user": self.settings.user,
            "password": self.settings.password.as_ref().map(|p| p.0.as_str()),
            "timeout": self.settings.timeout,
            "options": Json::Object(options),
            "become": escalation,
            "verbosity": tack_diag::display_log::noted_verbosity(self.verbosity),
            "log_verbosity": tack_diag::display_log::noted_verbosity(self.verbosity),
        })
    }

    /// The link's worker, started (and the plugin made) on first need: a link that could
    /// not be opened fails the same way for every later use.
    fn opened<'s>(
        &self,
        slot: &'s mut Option<Result<Worker, ConnectionError>>,
    ) -> Result<&'s mut Worker, ConnectionError> {
        if slot.is_none() {
            let opened = (|| {
                let agent = agent_file(&self.image)?;
                let mut worker = start_worker(Some(&agent)).map_err(ConnectionError::Plugin)?;
                self.converse(&mut worker, &self.open_request())?;
                Ok(worker)
            })();
            *slot = Some(opened);
        }
        match slot.as_mut() {
            Some(Ok(worker)) => Ok(worker),
            Some(Err(e)) => Err(again(e)),
            None => Err(ConnectionError::Plugin("the plugin's worker is gone".into())),
        }
    }

    /// Runs `request` on the link's worker: its `done` reply. A worker that broke is not
    /// used again.
    fn ask(&self, request: &Json) -> Result<Map<String, Json>, ConnectionError> {
        let mut slot = self.worker.lock().unwrap_or_else(PoisonError::into_inner);
        let worker = self.opened(&mut slot)?;
        match self.converse(worker, request) {
            Err(ConnectionError::Exec(why)) => {
                // The worker itself stopped: the link cannot be used again.
                let e = ConnectionError::Plugin(why);
                *slot = Some(Err(again(&e)));
                Err(e)
            }
            other => other,
        }
    }

    /// One request and its reply, with what the plugin printed meanwhile kept as notes.
    /// The worker's own failure is `Exec`; the plugin's, `Plugin` or `Unreachable`.
    fn converse(
        &self,
        worker: &mut Worker,
        request: &Json,
    ) -> Result<Map<String, Json>, ConnectionError> {
        worker.send(request).map_err(ConnectionError::Exec)?;
        loop {
            let reply = worker.receive().map_err(ConnectionError::Exec)?;
            match reply.get("op").and_then(Json::as_str) {
                Some("display") => self.displayed(&reply),
                Some("done") => return Ok(reply),
                _ => {
                    let error =
                        reply.get("error").and_then(Json::as_str).unwrap_or_default().to_string();
                    if reply.get("unreachable").and_then(Json::as_bool) == Some(true) {
                        return Err(ConnectionError::Unreachable { message: error });
                    }
                    return Err(ConnectionError::Plugin(error));
                }
            }
        }
    }

    /// What the plugin printed through ansible's display: a verbose line kept as a note at
    /// its level (with its host, as ansible shows it), a warning or deprecation warned.
    /// `display.debug` and the like show nothing without ansible's debug mode.
    fn displayed(&self, message: &Map<String, Json>) {
        use crate::python_lines::Displayed;
        // Loading the plugin again for the link raises ansible-core's deprecation of it once
        // more; each task using the link shows it, from what the plugin's description said.
        if crate::python_lines::core_deprecation(message).is_some() {
            return;
        }
        match crate::python_lines::displayed(message, i64::from(self.verbosity)) {
            Displayed::Warning(msg) => tack_diag::warn(&tack_diag::Diagnostic::new(msg)),
            Displayed::Verbose(level, line) => {
                self.notes.lock().unwrap_or_else(PoisonError::into_inner).push((level, line));
            }
            Displayed::Plain(_) | Displayed::Nothing => {}
        }
    }

    /// Runs tack's agent through the plugin with `input`: its stdout and stderr.
    fn agent(&self, input: &[u8]) -> Result<(Vec<u8>, Vec<u8>), ConnectionError> {
        let reply = self.ask(&json!({
            "op": "agent",
            "in_data": base64::engine::general_purpose::STANDARD.encode(input),
        }))?;
        Ok((bytes(&reply, "stdout")?, bytes(&reply, "stderr")?))
    }
}

/// A link that could not be opened fails the same way for every later use.
fn again(e: &ConnectionError) -> ConnectionError {
    match e {
        ConnectionError::Unreachable { message } => {
            ConnectionError::Unreachable { message: message.clone() }
        }
        other => ConnectionError::Plugin(other.to_string()),
    }
}

fn bytes(reply: &Map<String, Json>, key: &str) -> Result<Vec<u8>, ConnectionError> {
    let text = reply.get(key).and_then(Json::as_str).unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| ConnectionError::Plugin(format!("the plugin's {key} was mangled: {e}")))
}

impl Connection for PluginLink {
    /// Starts the worker and makes the plugin: an error making it fails the task (ansible's
    /// executor raises it before the action runs).
    fn connect(&self) -> Result<(), ConnectionError> {
        let mut slot = self.worker.lock().unwrap_or_else(PoisonError::into_inner);
        self.opened(&mut slot).map(|_| ())
    }

    fn is_open(&self) -> bool {
        self.worker.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        let input = batch::module_input(module, invocation)?;
        let (stdout, stderr) = self.agent(&input)?;
        batch::module_output(&stdout, &stderr).map_err(|e| match e {
            ConnectionError::NoSuchModule(_) => ConnectionError::NoSuchModule(module.to_string()),
            e => e,
        })
    }

    /// The command as it is, through the plugin (as ansible's `raw` runs one): the plugin
    /// decides where it runs, so `cwd` is not the command's.
    fn exec_command(&self, cmd: &str, _cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        let reply = self.ask(&json!({ "op": "exec", "cmd": cmd, "in_data": null }))?;
        let rc = reply.get("rc").and_then(Json::as_i64).unwrap_or(-1);
        Ok(ExecOutput {
            rc: i32::try_from(rc).unwrap_or(-1),
            stdout: bytes(&reply, "stdout")?,
            stderr: bytes(&reply, "stderr")?,
        })
    }

    /// The agent starts the job detached from itself, and ends: the job goes on without it,
    /// and `async_status` reads it with another agent.
    fn start_job(&self, job: &tack_connect::JobSpec) -> Result<ModuleResult, ConnectionError> {
        let input = batch::job_input(job)?;
        let (stdout, stderr) = self.agent(&input)?;
        batch::module_output(&stdout, &stderr)
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        let input = batch::python_input(payload, run)?;
        let (stdout, stderr) = self.agent(&input)?;
        batch::python_output(&stdout, &stderr)
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        let reply = self.ask(&json!({
            "op": "put",
            "data": base64::engine::general_purpose::STANDARD.encode(bytes),
            "name": name,
            "executable": executable,
        }))?;
        let path = reply.get("path").and_then(Json::as_str).unwrap_or_default();
        Ok(StagedFile::elsewhere(path.to_string()))
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        self.ask(&json!({ "op": "remove", "path": file.path() })).map(|_| ())
    }

    fn take_notes(&self) -> Vec<(u8, String)> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Drop for PluginLink {
    /// The link's directory on the host goes, and the plugin is closed, before its worker
    /// ends.
    fn drop(&mut self) {
        let slot = self.worker.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(Ok(worker)) = slot.as_mut()
            && worker.send(&json!({ "op": "close" })).is_ok()
        {
            while let Ok(reply) = worker.receive() {
                if reply.get("op").and_then(Json::as_str) != Some("display") {
                    break;
                }
            }
        }
    }
}
