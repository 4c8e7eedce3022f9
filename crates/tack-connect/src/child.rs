//! The agent as a child process: spawns a command (a local `tack-agent` binary, or `ssh`
//! running one on a host) with its stdin/stdout as the link, says hello, and runs each request
//! over `tack_protocol` frames.
//!
//! Owns the child's life: spawning it, draining its stderr (kept as a short tail for error
//! messages, so a chatty module never blocks it), telling how it died, and re-opening the link
//! for the next request after it did. It never interprets a module's result.

use std::ffi::OsString;
use std::io::{BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};
use tack_protocol::{
    AgentInfo, ErrorKind, FrameReader, FrameWriter, Message, ProtocolError, Stage,
};

use crate::{Connection, ConnectionError, ExecOutput, StagedFile, staged};

mod process;

use process::{StderrTail, describe_exit, stop};
pub(crate) use process::{kill_after, new_session};

use process::EXIT_GRACE;

/// A `tack-agent` child process. Requests take turns on the one link; a link whose agent died
/// or broke the protocol is closed, and the next request spawns a new agent.
pub struct ChildAgent {
    command: AgentCommand,
    link: Mutex<Option<Link>>,
    /// The host files are staged for (`stage-<host>-<pid>/` on it).
    host: String,
}

/// The command whose stdin/stdout speak the protocol: run again for every new link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The command escalates first: its marker is awaited (and its prompt answered) before
    /// the hello, and it runs in a session of its own, with no terminal to prompt on.
    pub escalation: Option<crate::escalate::Escalation>,
    /// What the command's streams carry before the hello.
    pub(crate) preamble: Option<Shared<dyn Preamble>>,
    /// A way to an agent already running for this destination, tried before the command.
    pub(crate) shortcut: Option<Shared<dyn Shortcut>>,
    /// How many more times a command that fails as ssh fails (exit 255, before the hello)
    /// is run again, as ansible's `reconnection_retries`; each retry is told in `notes`.
    pub(crate) retries: u32,
    pub(crate) notes: Option<crate::Notes>,
    /// How the command's `ssh` gets the login password, when there is one.
    pub(crate) login: Option<Shared<crate::askpass::Login>>,
}

/// What a new link's command says and is told on its stdout/stdin before the agent's hello:
/// the ssh link's first contact (the probe's answer, and the agent's bytes when the host
/// lacks it) rides the link's own session. Run again for every new link.
pub(crate) trait Preamble: Send + Sync {
    /// Reads and writes what comes before the hello. `Err(None)`: the output ended (or the
    /// input closed) first, which [`Preamble::ended`] tells from how the command exited.
    fn run(
        &self,
        stdout: &mut dyn Read,
        stdin: &mut dyn std::io::Write,
    ) -> Result<(), Option<ConnectionError>>;

    /// The error of a command that ended during the preamble, with `code` and `stderr`.
    fn ended(&self, code: Option<i32>, stderr: &str) -> ConnectionError;

    /// The error of an escalation whose marker never came (`before`: what the command
    /// printed instead), when the command's own words tell more than the become program's;
    /// `None` leaves it to [`crate::escalate::failure`].
    fn refused(&self, before: &[u8], stderr: &str, code: Option<i32>) -> Option<ConnectionError> {
        let _ = (before, stderr, code);
        None
    }
}

/// A way to reach an agent that is already running on the host (its listener, through the
/// ssh ControlMaster's forward), so a new link needs no command at all.
pub(crate) trait Shortcut: Send + Sync {
    /// A stream to such an agent, when one may be there; its hello tells whether it is.
    fn open(&self) -> Option<UnixStream>;

    /// After a link the command opened said hello: what its agent said (where its host's
    /// listener is), for the shortcut to set itself up for the next link.
    fn opened(&self, info: &AgentInfo);
}

/// A shared hook of a command ([`Preamble`], [`Shortcut`]): commands compare equal when
/// they share the same one.
pub(crate) struct Shared<T: ?Sized>(pub(crate) Arc<T>);

impl<T: ?Sized> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<T>())
    }
}

impl<T: ?Sized> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T: ?Sized> Eq for Shared<T> {}

impl AgentCommand {
    pub fn new(program: impl Into<OsString>) -> Self {
        AgentCommand {
            program: program.into(),
            args: Vec::new(),
            escalation: None,
            preamble: None,
            shortcut: None,
            retries: 0,
            notes: None,
            login: None,
        }
    }

    /// Hands the login password to the command's `ssh` as `login` says.
    pub(crate) fn login(mut self, login: Option<crate::askpass::Login>) -> Self {
        self.login = login.map(|l| Shared(Arc::new(l)));
        self
    }

    /// Runs the command up to `retries` more times while it fails as ssh does, saying so
    /// in `notes` as ansible's ssh connection does at `-vv`.
    pub(crate) fn retrying(mut self, retries: u32, notes: crate::Notes) -> Self {
        self.retries = retries;
        self.notes = Some(notes);
        self
    }

    pub(crate) fn shortcut(mut self, shortcut: Arc<dyn Shortcut>) -> Self {
        self.shortcut = Some(Shared(shortcut));
        self
    }

    pub(crate) fn preamble(mut self, preamble: Arc<dyn Preamble>) -> Self {
        self.preamble = Some(Shared(preamble));
        self
    }

    pub fn escalating(mut self, escalation: crate::escalate::Escalation) -> Self {
        self.escalation = Some(escalation);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    fn name(&self) -> String {
        Path::new(&self.program).display().to_string()
    }
}

struct Link {
    end: End,
    reader: FrameReader<BufReader<Box<dyn Read + Send>>>,
    writer: FrameWriter<Box<dyn Write + Send>>,
    stderr: StderrTail,
    info: AgentInfo,
    next_id: u64,
    /// The Python-path payloads this link's agent has been sent.
    payloads: std::collections::HashSet<String>,
}

/// What the link's far end is: a command's process, or a socket to an agent already running.
enum End {
    Process(Child),
    Socket(UnixStream),
}

/// How a link's far end went when it was closed.
enum Ended {
    Exited(ExitStatus),
    /// The process did not exit within the grace, and was killed.
    Killed,
    /// A socket's agent: no exit status reaches the controller.
    Closed,
}

/// What went wrong with a request, before it is told as a [`ConnectionError`].
enum Fault {
    /// The link is gone: the stream ended or failed.
    Died(String),
    /// The link is out of step: the agent sent something that is not the protocol.
    Broken(ProtocolError),
    /// The request failed; the link is fine.
    Refused(ConnectionError),
}

impl From<ProtocolError> for Fault {
    fn from(e: ProtocolError) -> Self {
        match e {
            ProtocolError::Io(e) => Fault::Died(format!("its link failed ({e})")),
            e @ ProtocolError::Truncated { .. } => Fault::Died(e.to_string()),
            e => Fault::Broken(e),
        }
    }
}

impl ChildAgent {
    /// Starts the agent binary `program` and says hello, so that an agent that cannot run
    /// fails here.
    pub fn spawn(program: impl Into<PathBuf>) -> Result<Self, ConnectionError> {
        Self::spawn_command(AgentCommand::new(program.into()))
    }

    /// Starts `command` (whose stdin/stdout reach an agent) and says hello.
    pub fn spawn_command(command: AgentCommand) -> Result<Self, ConnectionError> {
        let link = Link::open(&command)?;
        Ok(ChildAgent { command, link: Mutex::new(Some(link)), host: "localhost".into() })
    }

    /// Names the host this agent stages files for (its staging directory's name); `localhost`
    /// until named.
    pub fn staging_for(mut self, host: &str) -> Self {
        self.host = host.to_string();
        self
    }

    /// What the agent of the open link said at hello (`None` after it died).
    pub fn info(&self) -> Option<AgentInfo> {
        self.lock().as_ref().map(|l| l.info.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Link>> {
        // A panic while holding the lock leaves at worst a link mid-request; the next
        // request's read finds it out of step and closes it.
        self.link.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `request` on the open link (opening one first if there is none).
    fn with_link<T>(
        &self,
        during: &str,
        request: impl FnOnce(&mut Link) -> Result<T, Fault>,
    ) -> Result<T, ConnectionError> {
        let mut guard = self.lock();
        // A link whose process ended while idle (its agent killed, its connection cut
        // between requests) is opened anew: nothing was in flight, so nothing is lost.
        let idle = guard.take().and_then(|mut link| {
            if link.exited() {
                let _ = link.close();
                None
            } else {
                Some(link)
            }
        });
        let mut link = match idle {
            Some(link) => link,
            None => Link::open(&self.command)?,
        };
        match request(&mut link) {
            Ok(v) => {
                *guard = Some(link);
                Ok(v)
            }
            Err(Fault::Refused(e)) => {
                *guard = Some(link);
                Err(e)
            }
            // The link is dropped here: the next request opens a new one.
            Err(fault) => Err(link.fail(during, fault)),
        }
    }
}

impl Link {
    /// Whether the agent has ended: its process exited, or its socket hung up or spoke
    /// unasked (an idle agent says nothing).
    fn exited(&mut self) -> bool {
        match &mut self.end {
            End::Process(child) => matches!(child.try_wait(), Ok(Some(_))),
            End::Socket(stream) => {
                use std::os::fd::AsRawFd;
                let mut fds = libc::pollfd {
                    fd: stream.as_raw_fd(),
                    events: libc::POLLIN | libc::POLLRDHUP,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, for the duration of the call.
                unsafe { libc::poll(&mut fds, 1, 0) != 0 }
            }
        }
    }

    /// A link through `command`'s shortcut when its agent answers, else by running it.
    fn open(command: &AgentCommand) -> Result<Self, ConnectionError> {
        let Some(Shared(shortcut)) = &command.shortcut else {
            return Link::spawn_retrying(command);
        };
        if let Some(link) = shortcut.open().and_then(Link::over_socket) {
            return Ok(link);
        }
        let link = Link::spawn_retrying(command)?;
        shortcut.opened(&link.info);
        Ok(link)
    }

    /// [`Link::spawn`], again after a pause of `2^attempt - 1` seconds (30 at most) while
    /// it fails as ssh does and retries are left: ansible's `_ssh_retry`.
    fn spawn_retrying(command: &AgentCommand) -> Result<Self, ConnectionError> {
        let mut attempt = 0u32;
        loop {
            match Link::spawn(command) {
                Err(e) if attempt < command.retries && ssh_failed(&e) => {
                    let pause = (2u64.saturating_pow(attempt) - 1).min(30);
                    if let Some(notes) = &command.notes {
                        let argv: Vec<String> = std::iter::once(&command.program)
                            .chain(&command.args)
                            .map(|a| tack_py::repr::bytes_repr(a.as_encoded_bytes()))
                            .collect();
                        notes.push(
                            2,
                            format!(
                                "ssh_retry: attempt: {}, ssh return code is 255. cmd ([{}]...), \
                                 pausing for {pause} seconds",
                                attempt + 1,
                                argv.join(", ")
                            ),
                        );
                    }
                    std::thread::sleep(Duration::from_secs(pause));
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    /// The hello over `stream`; `None` when no agent answers it (the forward's far end is
    /// gone), for the caller to run the command instead.
    fn over_socket(stream: UnixStream) -> Option<Link> {
        let input: Box<dyn Read + Send> = Box::new(stream.try_clone().ok()?);
        let output: Box<dyn Write + Send> = Box::new(stream.try_clone().ok()?);
        let mut reader = FrameReader::new(BufReader::with_capacity(1 << 16, input));
        let mut writer = FrameWriter::new(output);
        let info = tack_protocol::hello(&mut reader, &mut writer).ok()?;
        // The shortcut's timeout was for the hello; a module may take as long as it takes.
        stream.set_read_timeout(None).ok()?;
        Some(Link {
            end: End::Socket(stream),
            reader,
            writer,
            stderr: StderrTail::none(),
            info,
            next_id: 1,
            payloads: Default::default(),
        })
    }

    fn spawn(command: &AgentCommand) -> Result<Self, ConnectionError> {
        let name = command.name();
        let spawn_failed = |source| ConnectionError::Spawn { program: name.clone(), source };
        // The child's end of a password pipe is kept open until the child has it.
        let (mut cmd, inherited) = match &command.login {
            Some(Shared(login)) => {
                login.command(&command.program, &command.args).map_err(spawn_failed)?
            }
            None => {
                let mut cmd = Command::new(&command.program);
                cmd.args(&command.args);
                (cmd, None)
            }
        };
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if command.escalation.is_some() {
            new_session(&mut cmd);
        }
        let mut child = cmd.spawn().map_err(spawn_failed)?;
        drop(inherited);
        let (Some(stdin), Some(mut stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = stop(&mut child);
            let source = std::io::Error::other("the child's pipes were not opened");
            return Err(ConnectionError::Spawn { program: name, source });
        };
        let watch = command.escalation.as_ref().map(|esc| {
            // The watcher answers the prompt on its own handle of the child's stdin.
            let answer =
                std::os::fd::AsFd::as_fd(&stdin).try_clone_to_owned().ok().map(std::fs::File::from);
            crate::escalate::Watch::new(esc.clone(), answer, child.id())
        });
        let prompts = watch.as_ref().map(|w| Arc::clone(&w.state));
        let mut watch = watch;
        let stderr = StderrTail::drain(stderr, move |chunk| {
            if let Some(w) = watch.as_mut() {
                w.saw(chunk);
            }
        });
        if let (Some(esc), Some(state)) = (&command.escalation, prompts) {
            let timer = kill_after(child.id(), crate::escalate::HANDSHAKE_TIMEOUT_SECS);
            let got = crate::escalate::await_marker(&mut stdout, &esc.marker);
            drop(timer);
            let count = crate::escalate::PromptState::finish(&state);
            if let Err(before) = got {
                drop(stdin);
                let code = stop(&mut child).and_then(|s| s.code());
                if let Some(refused) = login_refused(command, code) {
                    return Err(refused);
                }
                let said = stderr.text();
                let told =
                    command.preamble.as_ref().and_then(|p| p.0.refused(&before, &said, code));
                return Err(told.unwrap_or_else(|| {
                    crate::escalate::failure(esc, count, &before, &said, code)
                }));
            }
        }
        let mut stdin = stdin;
        if let Some(Shared(preamble)) = &command.preamble
            && let Err(fault) = preamble.run(&mut stdout, &mut stdin)
        {
            drop(stdin);
            let code = stop(&mut child).and_then(|s| s.code());
            if let Some(refused) = login_refused(command, code) {
                return Err(refused);
            }
            return Err(fault.unwrap_or_else(|| preamble.ended(code, &stderr.text())));
        }
        let stdout: Box<dyn Read + Send> = Box::new(stdout);
        let stdin: Box<dyn Write + Send> = Box::new(stdin);
        let mut reader = FrameReader::new(BufReader::with_capacity(1 << 16, stdout));
        let mut writer = FrameWriter::new(stdin);
        match tack_protocol::hello(&mut reader, &mut writer) {
            Ok(info) => Ok(Link {
                end: End::Process(child),
                reader,
                writer,
                stderr,
                info,
                next_id: 1,
                payloads: Default::default(),
            }),
            Err(source) => {
                // The tail is read after the child is gone, when it has all it will say.
                drop(writer);
                let code = stop(&mut child).and_then(|s| s.code());
                if let Some(refused) = login_refused(command, code) {
                    return Err(refused);
                }
                Err(ConnectionError::Hello { program: name, source, stderr: stderr.text(), code })
            }
        }
    }

    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The agent's reply to request `id`: an error reply for it becomes the request's
    /// error, anything for another request breaks the link.
    fn reply(&mut self, id: u64) -> Result<Message, Fault> {
        match self.reader.recv_message()? {
            None => Err(Fault::Died("it closed its link".into())),
            Some(Message::Error { id: Some(got), kind, message }) if got == id => {
                Err(Fault::Refused(match kind {
                    ErrorKind::NoSuchModule => ConnectionError::NoSuchModule(message),
                    ErrorKind::Exec => ConnectionError::Exec(message),
                    ErrorKind::Python => ConnectionError::Python(message),
                    ErrorKind::Stage => ConnectionError::Stage(message),
                    kind => ConnectionError::Agent { during: String::new(), kind, message },
                }))
            }
            Some(Message::Error { id: None, message, .. }) => {
                Err(Fault::Died(format!("it gave up on the link: {message}")))
            }
            Some(m) if reply_id(&m) == Some(id) => Ok(m),
            Some(m) => Err(unexpected("a reply to this request", &m)),
        }
    }

    /// Closes the link after `fault` and tells what happened.
    fn fail(self, during: &str, fault: Fault) -> ConnectionError {
        let pid = self.info.pid;
        let (ended, stderr) = self.close();
        match fault {
            Fault::Broken(source) => {
                ConnectionError::Protocol { pid, during: during.to_string(), source }
            }
            Fault::Died(what) => ConnectionError::AgentDied {
                pid,
                during: during.to_string(),
                how: match ended {
                    Ended::Exited(status) => describe_exit(status),
                    Ended::Killed => format!("{what}, and it had to be killed"),
                    Ended::Closed => what,
                },
                stderr: stderr.text(),
            },
            Fault::Refused(e) => e,
        }
    }

    /// Ends the agent: its input closed, then [`stop`] for a process; a socket's agent is
    /// given the same grace to finish (its staging directory removed) and hang up. Its
    /// stderr tail stays readable.
    fn close(self) -> (Ended, StderrTail) {
        let Link { end, writer, stderr, .. } = self;
        drop(writer);
        let ended = match end {
            End::Process(mut child) => stop(&mut child).map_or(Ended::Killed, Ended::Exited),
            End::Socket(mut stream) => {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = stream.set_read_timeout(Some(EXIT_GRACE));
                let _ = std::io::copy(&mut stream, &mut std::io::sink());
                Ended::Closed
            }
        };
        (ended, stderr)
    }
}

/// Whether opening a link failed the way ssh itself fails (its exit code 255, before the
/// agent's hello): what ansible retries.
fn ssh_failed(e: &ConnectionError) -> bool {
    matches!(
        e,
        ConnectionError::Unreachable { .. }
            | ConnectionError::Hello { code: Some(255), .. }
            | ConnectionError::Become { code: Some(255), .. }
    )
}

fn unexpected(expected: &'static str, m: &Message) -> Fault {
    let got = format!("{} (for request {:?})", m.name(), reply_id(m));
    Fault::Broken(ProtocolError::Unexpected { expected, got })
}

fn reply_id(m: &Message) -> Option<u64> {
    match m {
        Message::ModuleResult { id, .. }
        | Message::ExecResult { id, .. }
        | Message::PythonResult { id, .. }
        | Message::Staged { id, .. }
        | Message::Unstaged { id } => Some(*id),
        Message::Error { id, .. } => *id,
        _ => None,
    }
}

impl Connection for ChildAgent {
    fn connect(&self) -> Result<(), ConnectionError> {
        self.with_link("connecting", |_| Ok(()))
    }

    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        let during = format!("running module '{module}'");
        let request = |link: &mut Link| {
            let id = link.id();
            link.writer
                .send(&Message::RunModule(crate::batch::run_module(id, module, invocation)))?;
            match link.reply(id)? {
                Message::ModuleResult { result, .. } => Ok(result),
                other => Err(unexpected("module_result", &other)),
            }
        };
        self.with_link(&during, request).map_err(|e| match e {
            // The agent's message is the whole sentence; the error names the module itself.
            ConnectionError::NoSuchModule(_) => ConnectionError::NoSuchModule(module.to_string()),
            e => with_during(e, &during),
        })
    }

    fn start_job(&self, job: &tack_protocol::JobSpec) -> Result<ModuleResult, ConnectionError> {
        let during = format!("starting module '{}' as an async job", job.module);
        let request = |link: &mut Link| {
            let id = link.id();
            link.writer
                .send(&Message::StartJob(tack_protocol::StartJob { id, job: job.clone() }))?;
            match link.reply(id)? {
                Message::ModuleResult { result, .. } => Ok(result),
                other => Err(unexpected("module_result", &other)),
            }
        };
        self.with_link(&during, request).map_err(|e| with_during(e, &during))
    }

    fn exec_command(&self, cmd: &str, cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        let Some(cwd_text) = cwd.to_str() else {
            return Err(ConnectionError::Exec(format!(
                "the directory {} is not UTF-8, which the agent's link cannot carry",
                cwd.display()
            )));
        };
        let during = "running a command".to_string();
        let request = |link: &mut Link| {
            let id = link.id();
            let message =
                Message::ExecCommand { id, cmd: cmd.to_string(), cwd: cwd_text.to_string() };
            link.writer.send(&message)?;
            let rc = match link.reply(id)? {
                Message::ExecResult { rc, .. } => rc,
                other => return Err(unexpected("exec_result", &other)),
            };
            let stdout = link.reader.recv_blob()?;
            let stderr = link.reader.recv_blob()?;
            Ok(ExecOutput { rc, stdout, stderr })
        };
        self.with_link(&during, request).map_err(|e| with_during(e, &during))
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        let during = format!("running module '{}' through the Python path", run.fqn);
        let request = |link: &mut Link| {
            if !link.payloads.contains(&run.hash) {
                link.writer.send(&Message::PutPayload { hash: run.hash.clone() })?;
                link.writer.send_blob(payload)?;
                link.payloads.insert(run.hash.clone());
            }
            let id = link.id();
            link.writer.send(&Message::RunPython(crate::batch::run_python(id, run)))?;
            match link.reply(id)? {
                Message::PythonResult { rc, stdout, stderr, tag, .. } => {
                    Ok(PythonOutput { rc, stdout, stderr, tag })
                }
                other => Err(unexpected("python_result", &other)),
            }
        };
        self.with_link(&during, request).map_err(|e| with_during(e, &during))
    }

    fn stage(
        &self,
        bytes: &[u8],
        _name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        staged::check_size(bytes.len())?;
        let hash = blake3::hash(bytes).to_hex().to_string();
        let during = "staging a file".to_string();
        let request = |link: &mut Link| {
            let id = link.id();
            let host = self.host.clone();
            let len = bytes.len() as u64;
            link.writer.send(&Message::Stage(Stage { id, host, hash, len, executable }))?;
            link.writer.send_blob(bytes)?;
            match link.reply(id)? {
                Message::Staged { path, .. } => Ok(StagedFile::agent(path)),
                other => Err(unexpected("staged", &other)),
            }
        };
        self.with_link(&during, request).map_err(|e| with_during(e, &during))
    }

    fn stage_limit(&self) -> Option<usize> {
        Some(crate::STAGE_LIMIT)
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        let Some(path) = file.agent_path() else {
            return Err(ConnectionError::Stage(format!(
                "{} was not staged by an agent, and cannot be removed by one",
                file.path()
            )));
        };
        let during = "removing a staged file".to_string();
        let request = |link: &mut Link| {
            let id = link.id();
            link.writer.send(&Message::Unstage { id, path: path.to_string() })?;
            match link.reply(id)? {
                Message::Unstaged { .. } => Ok(()),
                other => Err(unexpected("unstaged", &other)),
            }
        };
        self.with_link(&during, request).map_err(|e| with_during(e, &during))
    }
}

fn with_during(e: ConnectionError, during: &str) -> ConnectionError {
    match e {
        ConnectionError::Agent { kind, message, .. } => {
            ConnectionError::Agent { during: during.to_string(), kind, message }
        }
        other => other,
    }
}

impl Drop for ChildAgent {
    fn drop(&mut self) {
        if let Some(mut link) = self.lock().take() {
            // A polite end first; an agent stuck in a module is killed after the grace.
            let _ = link.writer.send(&Message::Bye);
            let _ = link.close();
        }
    }
}

/// The error of a command that ended before its hello because its password was refused
/// (see `askpass::Login::refused`).
fn login_refused(command: &AgentCommand, code: Option<i32>) -> Option<ConnectionError> {
    command.login.as_ref().and_then(|Shared(login)| login.refused(code))
}
