//! The host side of the Python path: modules tack has no native code for run through
//! ansible-core's own module code, from payloads the controller built (a zip of the module
//! and the module_utils it imports, named by its BLAKE3 hash, never holding a task's
//! arguments).
//!
//! Owns the payload store (a private directory, mode 0700, in memory where the host has
//! `/dev/shm`, payloads 0600, removed with the [`PythonHost`]) and the warm servers: one
//! Python process per interpreter, started on first use from our own `server.py`, which
//! unpacks each payload beside it once and forks per task. What the module printed comes back
//! raw ([`PythonOutput`]); reading a result out of it is the controller's, as in ansible.
//! It must not interpret module arguments or results.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::Value;

/// The server's source, ours, shipped inside the agent.
const SERVER_SOURCE: &str = include_str!("server.py");

/// One module run through the Python path.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonRun {
    /// The payload's BLAKE3 hash (hex).
    pub hash: String,
    /// The module's import name inside the payload (`ansible.modules.getent`).
    pub fqn: String,
    /// ansible's serialization profile for the module (`legacy`).
    pub profile: String,
    /// The host's Python interpreter.
    pub interpreter: String,
    /// The JSON text of `{"ANSIBLE_MODULE_ARGS": {...}}`, internal `_ansible_*` keys included.
    pub params: String,
    /// The task's `environment`.
    pub environment: BTreeMap<String, String>,
    /// ansible's `python_module_rlimit_nofile`: the module process's open-files soft limit.
    pub rlimit_nofile: Option<u64>,
}

/// What the module's process left: its exit code and both streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonOutput {
    pub rc: i32,
    pub stdout: String,
    pub stderr: String,
    /// The interpreter's bytecode tag (`sys.implementation.cache_tag`), as its server said.
    pub tag: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PythonError {
    #[error("the payload {0} was not sent to this host")]
    NoPayload(String),
    #[error("the payload's bytes hash to {got}, not {want}")]
    BadHash { want: String, got: String },
    #[error("could not store the payload: {0}")]
    Store(std::io::Error),
    #[error("could not start the Python interpreter {interpreter}: {source}")]
    Spawn {
        interpreter: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the Python server ({interpreter}) failed: {message}")]
    Server { interpreter: String, message: String },
}

/// A payload's name: the BLAKE3 hash of its bytes, in hex.
pub fn payload_name(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The payloads and warm servers of one agent (or of the controller's own process).
pub struct PythonHost {
    dir: Option<PathBuf>,
    payloads: HashSet<String>,
    /// Idle warm servers per interpreter: an agent's link runs one task at a time and keeps
    /// one; the controller's own process (local hosts, run by several forks at once) keeps
    /// as many as ran at once.
    /// Keyed by the interpreter and whether the server gave up the controlling terminal
    /// (`crate::session`: a task may ask otherwise than the run's setting).
    servers: HashMap<(String, bool), Vec<Server>>,
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Default for PythonHost {
    fn default() -> Self {
        Self::new()
    }
}

impl PythonHost {
    pub fn new() -> Self {
        PythonHost { dir: None, payloads: HashSet::new(), servers: HashMap::new() }
    }

    /// The process-wide host the in-process connection uses.
    pub fn shared() -> &'static Mutex<PythonHost> {
        static SHARED: OnceLock<Mutex<PythonHost>> = OnceLock::new();
        SHARED.get_or_init(|| Mutex::new(PythonHost::new()))
    }

    /// Ends [`PythonHost::shared`]: its servers stopped and its payload directory removed. A
    /// static is never dropped, so the binary calls this before it exits.
    pub fn end_shared() {
        let ended =
            std::mem::take(&mut *Self::shared().lock().unwrap_or_else(PoisonError::into_inner));
        drop(ended);
    }

    /// Runs `f` on [`PythonHost::shared`].
    pub fn with_shared<T>(f: impl FnOnce(&mut PythonHost) -> T) -> T {
        // A panic mid-request leaves at worst a server out of step; its next answer fails.
        let mut host = Self::shared().lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut host)
    }

    pub fn has_payload(&self, hash: &str) -> bool {
        self.payloads.contains(hash)
    }

    /// Stores a payload under its hash, after checking the bytes are what the name says.
    pub fn put_payload(&mut self, hash: &str, bytes: &[u8]) -> Result<(), PythonError> {
        let got = payload_name(bytes);
        if got != hash {
            return Err(PythonError::BadHash { want: hash.to_string(), got });
        }
        if self.payloads.contains(hash) {
            return Ok(());
        }
        let path = self.payload_path(hash).map_err(PythonError::Store)?;
        let partial = path.with_extension("part");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)
            .map_err(PythonError::Store)?;
        file.write_all(bytes).and_then(|()| file.sync_all()).map_err(PythonError::Store)?;
        std::fs::rename(&partial, &path).map_err(PythonError::Store)?;
        self.payloads.insert(hash.to_string());
        Ok(())
    }

    /// Runs one module from a stored payload on the interpreter's warm server.
    pub fn run(&mut self, run: &PythonRun) -> Result<PythonOutput, PythonError> {
        let (request, dir) = self.request(run)?;
        let key = (run.interpreter.clone(), crate::session::isolated());
        let server = self.servers.get_mut(&key).and_then(Vec::pop);
        let (server, out) = ask(server, run, &dir, &request)?;
        self.servers.entry(key).or_default().push(server);
        Ok(out)
    }

    /// Runs one module on [`PythonHost::shared`], storing its payload first if need be; the
    /// lock is held only to take and give back a warm server, so that local hosts run their
    /// modules at once, each on a server of its own.
    pub fn run_shared(payload: &[u8], run: &PythonRun) -> Result<PythonOutput, PythonError> {
        let key = (run.interpreter.clone(), crate::session::isolated());
        let (request, dir, server) = Self::with_shared(|host| {
            if !host.has_payload(&run.hash) {
                host.put_payload(&run.hash, payload)?;
            }
            let (request, dir) = host.request(run)?;
            let server = host.servers.get_mut(&key).and_then(Vec::pop);
            Ok::<_, PythonError>((request, dir, server))
        })?;
        let (server, out) = ask(server, run, &dir, &request)?;
        Self::with_shared(|host| {
            host.servers.entry(key).or_default().push(server);
        });
        Ok(out)
    }

    /// The server's request for `run`, and the payload directory a new server is given.
    fn request(&mut self, run: &PythonRun) -> Result<(Value, PathBuf), PythonError> {
        if !self.payloads.contains(&run.hash) {
            return Err(PythonError::NoPayload(run.hash.clone()));
        }
        let zip = self.payload_path(&run.hash).map_err(PythonError::Store)?;
        let dir = self.dir().map_err(PythonError::Store)?.to_path_buf();
        let request = serde_json::json!({
            "zip": zip,
            "fqn": run.fqn,
            "profile": run.profile,
            "params": run.params,
            "env": run.environment,
            "rlimit_nofile": run.rlimit_nofile,
        });
        Ok((request, dir))
    }

    fn payload_path(&mut self, hash: &str) -> std::io::Result<PathBuf> {
        // The name is a hex digest: nothing in it can leave the directory.
        if !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(std::io::Error::other(format!("'{hash}' is not a payload name")));
        }
        Ok(self.dir()?.join(format!("{hash}.zip")))
    }

    /// The private payload directory, made on first use.
    fn dir(&mut self) -> std::io::Result<&Path> {
        if self.dir.is_none() {
            self.dir = Some(private_dir()?);
        }
        // Set just above when it was unset.
        Ok(self.dir.as_deref().unwrap_or(Path::new("/nonexistent")))
    }
}

impl Drop for PythonHost {
    fn drop(&mut self) {
        for mut server in self.servers.drain().flat_map(|(_, idle)| idle) {
            server.stop();
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The private payload directory: in memory (`/dev/shm`) where the host has it, since the
/// server unpacks every payload there and a disk file system pays for each file it creates
/// (a tenth of a fleet's Python-path run on ext4); else the temporary directory.
fn private_dir() -> std::io::Result<PathBuf> {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = private_dir_in(shm)
    {
        return Ok(dir);
    }
    private_dir_in(&std::env::temp_dir())
}

fn private_dir_in(base: &Path) -> std::io::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    for n in 0..100u32 {
        let dir = base.join(format!("tack-py-{}-{nanos:x}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not make a private payload directory"))
}

/// Asks `server` (or a new one) to run `request`; the server back with the answer, or the
/// error, after which that server is ended (a server out of step is never reused).
fn ask(
    server: Option<Server>,
    run: &PythonRun,
    dir: &Path,
    request: &Value,
) -> Result<(Server, PythonOutput), PythonError> {
    let mut server = match server {
        Some(server) => server,
        None => Server::start(&run.interpreter, dir)?,
    };
    match server.ask(request) {
        Ok(out) => Ok((server, out)),
        Err(message) => {
            server.kill();
            Err(PythonError::Server { interpreter: run.interpreter.clone(), message })
        }
    }
}

impl Server {
    fn start(interpreter: &str, dir: &Path) -> Result<Server, PythonError> {
        let spawn_error =
            |source| PythonError::Spawn { interpreter: interpreter.to_string(), source };
        crate::descendants::hold_if_ending();
        let mut command = Command::new(interpreter);
        command
            .arg("-c")
            .arg(SERVER_SOURCE)
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // The modules it forks are in its session.
        crate::session::detach(&mut command);
        let mut child = command.spawn().map_err(spawn_error)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_error(std::io::Error::other("the server's pipes were not opened")));
        };
        Ok(Server { child, stdin: Some(stdin), stdout: BufReader::new(stdout) })
    }

    fn ask(&mut self, request: &Value) -> Result<PythonOutput, String> {
        let mut line = request.to_string();
        line.push('\n');
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("its input is closed".into());
        };
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("could not send it the task ({e})"))?;
        let mut answer = String::new();
        match self.stdout.read_line(&mut answer) {
            Ok(0) => return Err("it ended without answering".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("could not read its answer ({e})")),
        }
        let answer: Value =
            serde_json::from_str(&answer).map_err(|e| format!("its answer is not JSON ({e})"))?;
        if let Some(error) = answer.get("error").and_then(Value::as_str) {
            return Err(error.to_string());
        }
        let text = |key: &str| answer.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let rc = answer.get("rc").and_then(Value::as_i64).unwrap_or(-1);
        Ok(PythonOutput {
            rc: i32::try_from(rc).unwrap_or(-1),
            stdout: text("stdout"),
            stderr: text("stderr"),
            tag: text("tag"),
        })
    }

    /// Ends the server at the end of its input, which also removes the payload directory.
    fn stop(&mut self) {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
                Err(_) => break,
            }
        }
        self.kill();
    }

    /// Ends a server out of step at once, leaving the payloads in place for its successor.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
