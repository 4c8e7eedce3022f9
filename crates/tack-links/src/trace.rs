//! What `-vvv` says about reaching a host: the lines ansible's connection prints as
//! `<address> ...`, for what tack's connection really did.
//!
//! ansible's `local` connection announces itself once per task and host
//! (`ESTABLISH LOCAL CONNECTION FOR USER: name`, on first use); that line is as true for tack
//! and is printed the same way. What follows in ansible (`EXEC` of the shell commands that make
//! remote temporary directories, `Using module file`, `PUT` of an AnsiballZ file) describes a
//! Python transport tack does not have. tack reports its own steps in the same `<address> `
//! form instead: `NATIVE MODULE name (run in-process by tack)` for a native module,
//! `PYTHON MODULE fqn (ansible-core's code, run by tack)` for one run by the Python path, and
//! `NATIVE MODULE name (started by tack as a background job)` for an `async` job,
//! `EXEC /bin/sh -c 'cmd'` for a command it really hands to the shell (`raw`, `script`), and
//! `PUT N bytes TO path (staged by tack)` for a file an action stages for a sub-task,
//! `PUT N bytes TO path` for a file it leaves where the user finds it; the
//! link itself says `BECOME sudo ... (starts tack's agent as user)` when it escalates.
//!
//! Over `ssh` ansible announces `ESTABLISH SSH CONNECTION FOR USER: user` before each of
//! the several ssh commands a task runs; tack announces it once per task and host, as for
//! `local`, and a native module's line says the host's agent ran it.
//!
//! Each task's run on a host has its own [`Trace`]: every link the run uses is wrapped in a
//! [`Traced`] that records each use in it, the action adds its notes, and the run loop reads
//! it back into lines after the action (so the lines travel with the run's output, never
//! through state a thread keeps). This module owns that record and the lines' wording; it
//! never decides whether a line is shown (the callback does, by verbosity).

use std::sync::{Arc, Mutex, PoisonError};

use tack_connect::{Connection, ConnectionError, Decorator, Outcome, Request};

/// One use of a host's connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Use {
    /// A native module run in-process.
    Module(String),
    /// A command run through `/bin/sh -c`.
    Exec(String),
    /// An ansible-core module run from its payload by the warm Python server.
    Python(String),
    /// A native module started as a detached `async` job (tack's own binary, re-invoked).
    Job(String),
    /// Bytes staged on the host for one sub-task (their length, where they went).
    Put(usize, String),
    /// Bytes written as a file the user finds on the host (their length, its path).
    Place(usize, String),
    /// A `-vvv` note the action makes about its own steps, in order with its uses (ansible's
    /// `wait_for_connection: attempting ping module test`); it does not reach the host.
    Note(String),
    /// A `-vvv` line about a step on the host that ansible shows once its connection is
    /// established (`<host> Attempting python interpreter discovery.`): shown as it is, after
    /// the announcement of the next use (the step's own command).
    Step(String),
    /// What the connection itself said (`tack_connect::Notes`: `ssh_retry: ...`), shown
    /// after `<address> ` from the `-v` count it carries.
    Said(u8, String),
    /// A note the action makes that shows from the `-v` count it carries (`add_host`'s
    /// `creating host via 'add_host': ...` at `-vv`); it does not reach the host.
    Verbose(u8, String),
    /// The action's first step reaches the host before anything else it does: ansible's
    /// actions that transfer files make their remote temporary directory first, so the
    /// connection is announced before the action's own notes (its file searches).
    Connect,
}

/// Which of ansible's connections a use went through: the announcement names it, and the
/// lines say where the module ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// ansible's `local` connection: in-process, or an agent of the become user's here.
    Local,
    /// ansible's `ssh` connection, as `user` (`None` when no remote user is set, which
    /// ansible's announcement prints as `None`).
    Ssh { user: Option<String> },
    /// A connection plugin written in Python: what it says of its own steps is all the
    /// trace shows of them (it announces itself, as ansible's plugins do).
    Plugin,
}

/// What one task's run on one host did over its links, in order, and which address it has
/// announced: made by the run loop for each task and host (ansible makes a connection object
/// per task executor, and `local` announces on first connect), handed to every link the run
/// uses ([`Traced`]) and to the action (its notes), and read back into `-vvv` lines.
///
/// A run happens on one thread; the locks are there because a [`Connection`] must be `Sync`,
/// and are never contended.
#[derive(Debug, Default)]
pub struct Trace {
    uses: Mutex<Vec<(Reach, Use)>>,
    /// The address the run has announced a connection to, if any.
    established: Mutex<Option<String>>,
    /// The `ASYNC POLL`/`ASYNC OK`/`ASYNC FAILED` lines of a job the run waited for, which
    /// the callback shows at any verbosity.
    job_notes: Mutex<Vec<JobNote>>,
}

/// A note on a job the run waits for: the line the callback shows, and what ansible's
/// callbacks are handed with it (`v2_runner_on_async_poll`/`_ok`/`_failed`).
#[derive(Debug, Clone)]
pub struct JobNote {
    /// `ASYNC POLL on host: ...`.
    pub text: String,
    /// `poll`, `ok` or `failed`.
    pub event: &'static str,
    /// The job's status as the poll read it (the job's result for `ok` and `failed`).
    pub result: tack_agent::ModuleResult,
}

impl Trace {
    pub fn new() -> Arc<Trace> {
        Arc::new(Trace::default())
    }

    /// Records a use of the connection `reach` names.
    pub fn record(&self, reach: Reach, action: Use) {
        self.uses.lock().unwrap_or_else(PoisonError::into_inner).push((reach, action));
    }

    /// Records a `-vvv` note the action makes about its own steps.
    pub fn note(&self, text: String) {
        self.record(Reach::Local, Use::Note(text));
    }

    /// Records a note the action makes that shows from `-v` count `level`.
    pub fn note_at(&self, level: u8, text: String) {
        self.record(Reach::Local, Use::Verbose(level, text));
    }

    /// Records a note on a job the run waits for.
    pub fn job_note(&self, note: JobNote) {
        self.job_notes.lock().unwrap_or_else(PoisonError::into_inner).push(note);
    }

    /// The job notes recorded since the last call, oldest first.
    pub fn take_job_notes(&self) -> Vec<JobNote> {
        std::mem::take(&mut *self.job_notes.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The uses recorded since the last call, oldest first.
    pub fn take(&self) -> Vec<(Reach, Use)> {
        std::mem::take(&mut *self.uses.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// What the connection said since the last [`take`](Self::take) (its `Said` uses,
    /// nothing else): what opening a link has to show, whether or not it opened.
    pub fn take_said(&self) -> Vec<(Reach, Use)> {
        self.take().into_iter().filter(|(_, u)| matches!(u, Use::Said(..))).collect()
    }

    /// The `-vvv` lines for what the run did since the last call, on the host reached at
    /// `address` (see [`Trace::lines`]).
    pub fn drain_lines(&self, address: &str) -> Vec<(u8, String)> {
        let uses = self.take();
        self.lines(address, uses)
    }

    /// The `-vvv` lines for `uses` on the host reached at `address`: one line per use, the
    /// first that reaches the host preceded by the announcement when this run has not yet
    /// announced that address; each with the `-v` count it shows from (3 but for what a
    /// connection said).
    pub fn lines(&self, address: &str, uses: Vec<(Reach, Use)>) -> Vec<(u8, String)> {
        let mut out = Vec::new();
        // Steps wait for the next use's announcement: the connection they happen on is the one
        // that use names.
        let mut steps = Vec::new();
        for (reach, action) in uses {
            match action {
                Use::Note(text) => {
                    out.push((3, text));
                    continue;
                }
                Use::Verbose(level, text) => {
                    out.push((level, text));
                    continue;
                }
                Use::Said(level, text) => {
                    out.push((level, format!("<{address}> {text}")));
                    continue;
                }
                Use::Step(text) => {
                    steps.push(text);
                    continue;
                }
                _ => {}
            }
            let (kind, user, runs) = match &reach {
                Reach::Plugin => continue,
                Reach::Local => ("LOCAL", local_user().to_string(), "run in-process by tack"),
                Reach::Ssh { user } => (
                    "SSH",
                    user.clone().unwrap_or_else(|| "None".into()),
                    "run by tack's agent on the host",
                ),
            };
            let announce = {
                let mut established =
                    self.established.lock().unwrap_or_else(PoisonError::into_inner);
                let key = format!("{kind} {address}");
                let fresh = established.as_deref() != Some(key.as_str());
                *established = Some(key);
                fresh
            };
            if announce {
                out.push((3, format!("<{address}> ESTABLISH {kind} CONNECTION FOR USER: {user}")));
            }
            out.extend(steps.drain(..).map(|s| (3, s)));
            if action == Use::Connect {
                continue;
            }
            out.push((
                3,
                match action {
                    Use::Module(name) => format!("<{address}> NATIVE MODULE {name} ({runs})"),
                    Use::Exec(cmd) => {
                        format!("<{address}> EXEC /bin/sh -c {}", tack_py::shlex::quote(&cmd))
                    }
                    Use::Python(name) => {
                        format!(
                            "<{address}> PYTHON MODULE {name} (ansible-core's code, run by tack)"
                        )
                    }
                    Use::Job(name) => {
                        format!(
                            "<{address}> NATIVE MODULE {name} (started by tack as a background job)"
                        )
                    }
                    Use::Put(len, path) => {
                        format!("<{address}> PUT {len} bytes TO {path} (staged by tack)")
                    }
                    Use::Place(len, path) => format!("<{address}> PUT {len} bytes TO {path}"),
                    Use::Note(text)
                    | Use::Step(text)
                    | Use::Said(_, text)
                    | Use::Verbose(_, text) => text,
                    Use::Connect => String::new(),
                },
            ));
        }
        out.extend(steps.into_iter().map(|s| (3, s)));
        out
    }
}

/// `getpass.getuser()`: the first of `LOGNAME`, `USER`, `LNAME`, `USERNAME` that is set and
/// not empty, else the password database's name for the process's uid (empty when it has
/// none, as ansible's local connection leaves it). Asked once: neither changes during a run,
/// and the password database lookup is the costly part of every `-vvv` announcement.
pub fn local_user() -> &'static str {
    static USER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    USER.get_or_init(|| {
        for name in ["LOGNAME", "USER", "LNAME", "USERNAME"] {
            if let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) {
                return value.to_string_lossy().into_owned();
            }
        }
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        tack_agent::modules::user_name(uid).unwrap_or_default()
    })
}

/// A link whose every use is recorded in a run's [`Trace`] as the connection `reach` names
/// (a become link is still the login's `local` or `ssh` connection), with what the link
/// said while it worked (a retried ssh) recorded after the use it came with.
pub struct Traced {
    inner: Arc<dyn Connection>,
    reach: Reach,
    trace: Arc<Trace>,
}

impl Traced {
    pub fn new(inner: Arc<dyn Connection>, reach: Reach, trace: &Arc<Trace>) -> Traced {
        Traced { inner, reach, trace: Arc::clone(trace) }
    }

    fn record(&self, action: Use) {
        self.trace.record(self.reach.clone(), action);
    }
}

impl Use {
    /// The use a request to a link records before it reaches the host, if any (opening a
    /// link, removing a staged file and asking for a home directory show nothing).
    fn before(request: &Request<'_>) -> Option<Use> {
        match *request {
            Request::RunModule { module, .. } => Some(Use::Module(module.to_string())),
            Request::Exec { cmd, .. } => Some(Use::Exec(cmd.to_string())),
            Request::Python { run, .. } => Some(Use::Python(run.fqn.clone())),
            Request::StartJob { job } => Some(Use::Job(job.module.clone())),
            Request::Place { bytes, path, .. } => Some(Use::Place(bytes.len(), path.to_string())),
            Request::Connect | Request::Stage { .. } | Request::Unstage { .. } | Request::Home => {
                None
            }
        }
    }

    /// The use a request records once done: a staged file, once it is where it went.
    fn after(request: &Request<'_>, outcome: Outcome<'_>) -> Option<Use> {
        match (request, outcome) {
            (Request::Stage { bytes, .. }, Outcome::Staged(file)) => {
                Some(Use::Put(bytes.len(), file.path().into()))
            }
            _ => None,
        }
    }
}

impl Decorator for Traced {
    fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
        Ok(self.inner.as_ref())
    }

    fn before(&self, request: &Request<'_>) -> Result<(), ConnectionError> {
        if let Some(used) = Use::before(request) {
            self.record(used);
        }
        Ok(())
    }

    /// After the request, what the link said while it worked (a retried ssh).
    fn after(&self, request: &Request<'_>, outcome: Outcome<'_>) {
        if let Some(used) = Use::after(request, outcome) {
            self.record(used);
        }
        for (level, line) in self.inner.take_notes() {
            // A plugin's lines name their host themselves, as ansible's display shows them.
            if self.reach == Reach::Plugin {
                self.record(Use::Verbose(level, line));
            } else {
                self.record(Use::Said(level, line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines' text, every one of them shown from `-vvv`.
    fn texts(trace: &Trace, address: &str) -> Vec<String> {
        trace
            .drain_lines(address)
            .into_iter()
            .map(|(level, line)| {
                assert_eq!(level, 3, "{line}");
                line
            })
            .collect()
    }

    fn local(trace: &Trace, action: Use) {
        trace.record(Reach::Local, action);
    }

    #[test]
    fn announces_once_per_run_and_address() {
        let trace = Trace::new();
        local(&trace, Use::Module("ping".into()));
        let first = texts(&trace, "h1");
        assert_eq!(first.len(), 2);
        assert!(first[0].starts_with("<h1> ESTABLISH LOCAL CONNECTION FOR USER: "));
        assert_eq!(first[1], "<h1> NATIVE MODULE ping (run in-process by tack)");
        local(&trace, Use::Exec("echo 'a b'".into()));
        assert_eq!(texts(&trace, "h1"), vec![r#"<h1> EXEC /bin/sh -c 'echo '"'"'a b'"'"''"#]);
        local(&trace, Use::Module("ping".into()));
        assert_eq!(texts(&trace, "h2").len(), 2);
        let next = Trace::new();
        local(&next, Use::Module("ping".into()));
        assert_eq!(texts(&next, "h2").len(), 2, "a new run announces again");
        assert!(texts(&next, "h2").is_empty());
    }

    #[test]
    fn a_step_follows_the_announcement_of_the_use_after_it() {
        let trace = Trace::new();
        local(&trace, Use::Step("<h1> Attempting python interpreter discovery.".into()));
        trace.record(Reach::Ssh { user: Some("root".into()) }, Use::Exec("echo FOUND".into()));
        let out = texts(&trace, "10.0.0.1");
        assert_eq!(out[0], "<10.0.0.1> ESTABLISH SSH CONNECTION FOR USER: root");
        assert_eq!(out[1], "<h1> Attempting python interpreter discovery.");
        assert!(out[2].starts_with("<10.0.0.1> EXEC /bin/sh -c "), "{out:?}");
        local(&trace, Use::Step("alone".into()));
        assert_eq!(texts(&trace, "10.0.0.1"), vec!["alone".to_string()]);
    }

    #[test]
    fn a_note_comes_before_the_announcement_it_does_not_make() {
        let trace = Trace::new();
        trace.note("attempting".into());
        local(&trace, Use::Module("ping".into()));
        let out = texts(&trace, "h1");
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], "attempting");
        assert!(out[1].starts_with("<h1> ESTABLISH LOCAL CONNECTION FOR USER: "));
        let next = Trace::new();
        next.note("skipping".into());
        assert_eq!(texts(&next, "h1"), vec!["skipping".to_string()]);
    }

    #[test]
    fn what_the_connection_said_shows_from_its_own_count_after_the_address() {
        let trace = Trace::new();
        let ssh = Reach::Ssh { user: None };
        trace.record(ssh.clone(), Use::Said(2, "ssh_retry: attempt: 1".into()));
        local(&trace, Use::Module("ping".into()));
        assert_eq!(trace.take_said().len(), 1, "only what the connection said is kept");
        trace.record(ssh, Use::Said(2, "ssh_retry: attempt: 1".into()));
        assert_eq!(trace.drain_lines("h1"), vec![(2, "<h1> ssh_retry: attempt: 1".to_string())]);
    }

    #[test]
    fn a_plugins_link_shows_only_what_the_plugin_said() {
        let trace = Trace::new();
        trace.record(Reach::Plugin, Use::Module("ping".into()));
        trace.record(Reach::Plugin, Use::Verbose(3, "<c1> EXEC /bin/sh -c 'true'".into()));
        trace.record(Reach::Plugin, Use::Exec("true".into()));
        assert_eq!(texts(&trace, "c1"), vec!["<c1> EXEC /bin/sh -c 'true'".to_string()]);
    }

    #[test]
    fn a_traced_link_records_each_use_and_what_the_link_said_after_it() {
        let trace = Trace::new();
        let link = Traced::new(Arc::new(tack_connect::InProcess), Reach::Local, &trace);
        link.exec_command("true", std::path::Path::new("/")).unwrap();
        assert_eq!(trace.take(), vec![(Reach::Local, Use::Exec("true".into()))]);
    }
}
