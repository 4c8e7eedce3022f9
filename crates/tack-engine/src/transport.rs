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
//! `PUT N bytes TO path (staged by tack)` for a file an action stages for a sub-task.
//!
//! Over `ssh` ansible announces `ESTABLISH SSH CONNECTION FOR USER: user` before each of
//! the several ssh commands a task runs; tack announces it once per task and host, as for
//! `local`, and a native module's line says the host's agent ran it.
//!
//! [`Local`](crate::connection::Local) records each use on the running thread (an action runs
//! on one thread from start to end); the task runner takes them after each action and turns
//! them into lines. This module owns that record and the lines' wording; it never decides
//! whether a line is shown (the callback does, by verbosity).

use std::cell::RefCell;

/// One use of a host's connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Use {
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
}

impl Use {
    /// The use a request to a link records before it reaches the host, if any (opening a
    /// link, removing a staged file and asking for a home directory show nothing).
    pub(crate) fn before(request: &tack_connect::Request<'_>) -> Option<Use> {
        use tack_connect::Request;
        match *request {
            Request::RunModule { module, .. } => Some(Use::Module(module.to_string())),
            Request::Exec { cmd, .. } => Some(Use::Exec(cmd.to_string())),
            Request::Python { run, .. } => Some(Use::Python(run.fqn.clone())),
            Request::StartJob { job } => Some(Use::Job(job.module.clone())),
            Request::Connect | Request::Stage { .. } | Request::Unstage { .. } | Request::Home => {
                None
            }
        }
    }

    /// The use a request records once done: a staged file, once it is where it went.
    pub(crate) fn after(
        request: &tack_connect::Request<'_>,
        outcome: tack_connect::Outcome<'_>,
    ) -> Option<Use> {
        match (request, outcome) {
            (tack_connect::Request::Stage { bytes, .. }, tack_connect::Outcome::Staged(file)) => {
                Some(Use::Put(bytes.len(), file.path().into()))
            }
            _ => None,
        }
    }
}

/// Which of ansible's connections a use went through: the announcement names it, and the
/// lines say where the module ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reach {
    /// ansible's `local` connection: in-process, or an agent of the become user's here.
    Local,
    /// ansible's `ssh` connection, as `user` (`None` when no remote user is set, which
    /// ansible's announcement prints as `None`).
    Ssh { user: Option<String> },
}

thread_local! {
    /// Uses since the last [`take`].
    static USES: RefCell<Vec<(Reach, Use)>> = const { RefCell::new(Vec::new()) };
    /// The address the current task and host announced a connection to, if any.
    static ESTABLISHED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records a use of the local connection (called by the connection itself), or a note.
pub(crate) fn record(action: Use) {
    record_via(Reach::Local, action);
}

/// Records a use of the connection `reach` names.
pub(crate) fn record_via(reach: Reach, action: Use) {
    USES.with(|u| u.borrow_mut().push((reach, action)));
}

/// The uses recorded since the last call, oldest first.
pub(crate) fn take() -> Vec<(Reach, Use)> {
    USES.with(|u| std::mem::take(&mut *u.borrow_mut()))
}

/// What the connection said since the last [`take`] (its `Said` uses, nothing else): what
/// opening a link has to show, whether or not it opened.
pub(crate) fn take_said() -> Vec<(Reach, Use)> {
    take().into_iter().filter(|(_, u)| matches!(u, Use::Said(..))).collect()
}

/// A new task on a host: its first use of the connection announces it again (ansible makes a
/// connection object per task executor, and `local` announces on first connect).
pub(crate) fn new_task() {
    take();
    ESTABLISHED.with(|e| *e.borrow_mut() = None);
}

/// `getpass.getuser()`: the first of `LOGNAME`, `USER`, `LNAME`, `USERNAME` that is set and
/// not empty, else the password database's name for the process's uid (empty when it has
/// none, as ansible's local connection leaves it).
pub(crate) fn local_user() -> String {
    for name in ["LOGNAME", "USER", "LNAME", "USERNAME"] {
        if let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) {
            return value.to_string_lossy().into_owned();
        }
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    tack_agent::modules::user_name(uid).unwrap_or_default()
}

/// The `-vvv` lines for `uses` on the host reached at `address`: one line per use, the first
/// that reaches the host preceded by the announcement when this task has not yet announced
/// that address; each with the `-v` count it shows from (3 but for what a connection said).
pub(crate) fn lines(address: &str, uses: Vec<(Reach, Use)>) -> Vec<(u8, String)> {
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
            Reach::Local => ("LOCAL", local_user(), "run in-process by tack"),
            Reach::Ssh { user } => (
                "SSH",
                user.clone().unwrap_or_else(|| "None".into()),
                "run by tack's agent on the host",
            ),
        };
        let announce = ESTABLISHED.with(|e| {
            let mut e = e.borrow_mut();
            let key = format!("{kind} {address}");
            let fresh = e.as_deref() != Some(key.as_str());
            *e = Some(key);
            fresh
        });
        if announce {
            out.push((3, format!("<{address}> ESTABLISH {kind} CONNECTION FOR USER: {user}")));
        }
        out.extend(steps.drain(..).map(|s| (3, s)));
        out.push((
            3,
            match action {
                Use::Module(name) => format!("<{address}> NATIVE MODULE {name} ({runs})"),
                Use::Exec(cmd) => {
                    format!("<{address}> EXEC /bin/sh -c {}", tack_py::shlex::quote(&cmd))
                }
                Use::Python(name) => {
                    format!("<{address}> PYTHON MODULE {name} (ansible-core's code, run by tack)")
                }
                Use::Job(name) => {
                    format!(
                        "<{address}> NATIVE MODULE {name} (started by tack as a background job)"
                    )
                }
                Use::Put(len, path) => {
                    format!("<{address}> PUT {len} bytes TO {path} (staged by tack)")
                }
                Use::Note(text) | Use::Step(text) | Use::Said(_, text) => text,
            },
        ));
    }
    out.extend(steps.into_iter().map(|s| (3, s)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines' text, every one of them shown from `-vvv`.
    fn texts(address: &str, uses: Vec<(Reach, Use)>) -> Vec<String> {
        lines(address, uses)
            .into_iter()
            .map(|(level, line)| {
                assert_eq!(level, 3, "{line}");
                line
            })
            .collect()
    }

    #[test]
    fn announces_once_per_task_and_address() {
        new_task();
        record(Use::Module("ping".into()));
        let first = texts("h1", take());
        assert_eq!(first.len(), 2);
        assert!(first[0].starts_with("<h1> ESTABLISH LOCAL CONNECTION FOR USER: "));
        assert_eq!(first[1], "<h1> NATIVE MODULE ping (run in-process by tack)");
        record(Use::Exec("echo 'a b'".into()));
        assert_eq!(texts("h1", take()), vec![r#"<h1> EXEC /bin/sh -c 'echo '"'"'a b'"'"''"#]);
        record(Use::Module("ping".into()));
        assert_eq!(texts("h2", take()).len(), 2);
        new_task();
        record(Use::Module("ping".into()));
        assert_eq!(texts("h2", take()).len(), 2);
        assert!(texts("h2", take()).is_empty());
    }

    #[test]
    fn a_step_follows_the_announcement_of_the_use_after_it() {
        new_task();
        record(Use::Step("<h1> Attempting python interpreter discovery.".into()));
        record_via(Reach::Ssh { user: Some("root".into()) }, Use::Exec("echo FOUND".into()));
        let out = texts("10.0.0.1", take());
        assert_eq!(out[0], "<10.0.0.1> ESTABLISH SSH CONNECTION FOR USER: root");
        assert_eq!(out[1], "<h1> Attempting python interpreter discovery.");
        assert!(out[2].starts_with("<10.0.0.1> EXEC /bin/sh -c "), "{out:?}");
        record(Use::Step("alone".into()));
        assert_eq!(texts("10.0.0.1", take()), vec!["alone".to_string()]);
    }

    #[test]
    fn a_note_comes_before_the_announcement_it_does_not_make() {
        new_task();
        record(Use::Note("attempting".into()));
        record(Use::Module("ping".into()));
        let out = texts("h1", take());
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], "attempting");
        assert!(out[1].starts_with("<h1> ESTABLISH LOCAL CONNECTION FOR USER: "));
        new_task();
        record(Use::Note("skipping".into()));
        assert_eq!(texts("h1", take()), vec!["skipping".to_string()]);
    }

    #[test]
    fn what_the_connection_said_shows_from_its_own_count_after_the_address() {
        new_task();
        record_via(Reach::Ssh { user: None }, Use::Said(2, "ssh_retry: attempt: 1".into()));
        record(Use::Module("ping".into()));
        assert_eq!(take_said().len(), 1, "only what the connection said is kept");
        record_via(Reach::Ssh { user: None }, Use::Said(2, "ssh_retry: attempt: 1".into()));
        assert_eq!(lines("h1", take()), vec![(2, "<h1> ssh_retry: attempt: 1".to_string())]);
    }
}
