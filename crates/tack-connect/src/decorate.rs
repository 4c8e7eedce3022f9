//! Links that wrap another link (decorators: a link opened on first use, an ssh link telling
//! its agent's errors as ssh's, the engine's recording and deadline links) implement
//! [`Decorator`]: how they reach their inner link, and what they add around each request
//! through its hooks. The one `impl Connection` here forwards every [`Connection`] method
//! through those hooks, so a decorator writes only what it adds and no method can be
//! forgotten by one of them. A method added to `Connection` is forwarded here, and a test
//! fails until it is.
//!
//! Owns the forwarding and the order of the hooks around a request ([`Decorator::before`],
//! the inner link with [`Decorator::invocation`], [`Decorator::error`], then
//! [`Decorator::after`]); what a hook does is the decorator's.

use std::borrow::Cow;
use std::path::Path;

use tack_agent::python::{PythonOutput, PythonRun};
use tack_agent::{Invocation, ModuleResult};
use tack_protocol::JobSpec;

use crate::{Connection, ConnectionError, ExecOutput, StagedFile};

/// One request a link carries out, as a decorator's hooks see it.
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    /// [`Connection::connect`].
    Connect,
    /// [`Connection::run_module`], with the invocation as the caller gave it.
    RunModule { module: &'a str, invocation: &'a Invocation },
    /// [`Connection::exec_command`].
    Exec { cmd: &'a str, cwd: &'a Path },
    /// [`Connection::run_python`].
    Python { payload: &'a [u8], run: &'a PythonRun },
    /// [`Connection::stage`].
    Stage { bytes: &'a [u8], name: &'a str, executable: bool },
    /// [`Connection::unstage`] of the file staged at `path`.
    Unstage { path: &'a str },
    /// [`Connection::place`].
    Place { bytes: &'a [u8], path: &'a str, executable: bool },
    /// [`Connection::start_job`].
    StartJob { job: &'a JobSpec },
    /// [`Connection::home`].
    Home,
}

/// What became of a request, as [`Decorator::after`] is told.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// It was carried out.
    Done,
    /// A [`Request::Stage`] was carried out: the file is on the host.
    Staged(&'a StagedFile),
    /// It failed, with the error the caller gets.
    Failed(&'a ConnectionError),
}

/// What a decorator has of its inner link without opening it.
pub enum Held<'a> {
    Link(&'a dyn Connection),
    /// No inner link: `tried` says whether one has been asked for (and is being opened, or
    /// could not be).
    Unopened {
        tried: bool,
    },
}

/// A link that wraps another: implementing this implements [`Connection`], every method
/// reaching [`Decorator::inner`] through the hooks below (each does nothing unless
/// overridden).
pub trait Decorator: Send + Sync {
    /// The inner link, opened first if need be; an error is the request's (not told to
    /// [`Decorator::error`]).
    fn inner(&self) -> Result<&dyn Connection, ConnectionError>;

    /// The inner link as it stands, without opening it: what the questions about the link
    /// ([`Connection::is_open`], [`Connection::take_notes`]) ask, which must not open one.
    fn held(&self) -> Held<'_> {
        match self.inner() {
            Ok(link) => Held::Link(link),
            Err(_) => Held::Unopened { tried: true },
        }
    }

    /// Before each request: an error is the request's answer, and neither the inner link nor
    /// [`Decorator::after`] hears of it.
    fn before(&self, request: &Request<'_>) -> Result<(), ConnectionError> {
        let _ = request;
        Ok(())
    }

    /// The invocation the inner link runs `module` with.
    fn invocation<'i>(&self, module: &str, invocation: &'i Invocation) -> Cow<'i, Invocation> {
        let _ = module;
        Cow::Borrowed(invocation)
    }

    /// An error of the inner link's, as this link tells it.
    fn error(&self, error: ConnectionError) -> ConnectionError {
        error
    }

    /// After each request [`Decorator::before`] let through, whatever became of it.
    fn after(&self, request: &Request<'_>, outcome: Outcome<'_>) {
        let _ = (request, outcome);
    }

    /// Lines of this link's own to show, before its inner link's ([`Connection::take_notes`]).
    fn notes(&self) -> Vec<(u8, String)> {
        Vec::new()
    }
}

/// Carries `request` out on `link`'s inner link with `call`, through the hooks; `done` says
/// what a success made.
fn carry<D: Decorator, T>(
    link: &D,
    request: Request<'_>,
    call: impl FnOnce(&dyn Connection) -> Result<T, ConnectionError>,
    done: fn(&T) -> Outcome<'_>,
) -> Result<T, ConnectionError> {
    link.before(&request)?;
    let out = match link.inner() {
        Ok(inner) => call(inner).map_err(|e| link.error(e)),
        Err(e) => Err(e),
    };
    let outcome = match &out {
        Ok(value) => done(value),
        Err(e) => Outcome::Failed(e),
    };
    link.after(&request, outcome);
    out
}

fn done<T>(_: &T) -> Outcome<'_> {
    Outcome::Done
}

fn staged(file: &StagedFile) -> Outcome<'_> {
    Outcome::Staged(file)
}

impl<D: Decorator> Connection for D {
    fn connect(&self) -> Result<(), ConnectionError> {
        carry(self, Request::Connect, |inner| inner.connect(), done)
    }

    fn is_open(&self) -> bool {
        match self.held() {
            Held::Link(inner) => inner.is_open(),
            Held::Unopened { tried } => tried,
        }
    }

    fn run_module(
        &self,
        module: &str,
        invocation: &Invocation,
    ) -> Result<ModuleResult, ConnectionError> {
        let request = Request::RunModule { module, invocation };
        let call =
            |inner: &dyn Connection| inner.run_module(module, &self.invocation(module, invocation));
        carry(self, request, call, done)
    }

    fn exec_command(&self, cmd: &str, cwd: &Path) -> Result<ExecOutput, ConnectionError> {
        carry(self, Request::Exec { cmd, cwd }, |inner| inner.exec_command(cmd, cwd), done)
    }

    fn run_python(&self, payload: &[u8], run: &PythonRun) -> Result<PythonOutput, ConnectionError> {
        let request = Request::Python { payload, run };
        carry(self, request, |inner| inner.run_python(payload, run), done)
    }

    fn stage(
        &self,
        bytes: &[u8],
        name: &str,
        executable: bool,
    ) -> Result<StagedFile, ConnectionError> {
        let request = Request::Stage { bytes, name, executable };
        carry(self, request, |inner| inner.stage(bytes, name, executable), staged)
    }

    fn place(&self, bytes: &[u8], path: &str, executable: bool) -> Result<(), ConnectionError> {
        let request = Request::Place { bytes, path, executable };
        carry(self, request, |inner| inner.place(bytes, path, executable), done)
    }

    fn stage_limit(&self) -> Option<usize> {
        // A link that cannot be had stages nothing; its `stage` says why.
        self.inner().ok().and_then(|inner| inner.stage_limit())
    }

    fn unstage(&self, file: StagedFile) -> Result<(), ConnectionError> {
        // The file goes to the inner link; the hooks see where it was.
        let path = file.path().to_string();
        carry(self, Request::Unstage { path: &path }, |inner| inner.unstage(file), done)
    }

    fn start_job(&self, job: &JobSpec) -> Result<ModuleResult, ConnectionError> {
        carry(self, Request::StartJob { job }, |inner| inner.start_job(job), done)
    }

    fn take_notes(&self) -> Vec<(u8, String)> {
        let mut notes = self.notes();
        if let Held::Link(inner) = self.held() {
            notes.extend(inner.take_notes());
        }
        notes
    }

    fn home(&self) -> Result<String, ConnectionError> {
        carry(self, Request::Home, |inner| inner.home(), done)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A link that answers every method itself and records which were asked.
    #[derive(Default)]
    struct Recording {
        asked: Mutex<Vec<&'static str>>,
    }

    impl Recording {
        fn ask(&self, method: &'static str) {
            self.asked.lock().unwrap().push(method);
        }

        fn asked(&self) -> Vec<&'static str> {
            std::mem::take(&mut *self.asked.lock().unwrap())
        }
    }

    impl Connection for Recording {
        fn connect(&self) -> Result<(), ConnectionError> {
            self.ask("connect");
            Ok(())
        }

        fn is_open(&self) -> bool {
            self.ask("is_open");
            false
        }

        fn run_module(
            &self,
            _: &str,
            invocation: &Invocation,
        ) -> Result<ModuleResult, ConnectionError> {
            self.ask("run_module");
            let mut result = ModuleResult::new();
            result.insert("timeout".into(), invocation.timeout.into());
            Ok(result)
        }

        fn exec_command(&self, _: &str, _: &Path) -> Result<ExecOutput, ConnectionError> {
            self.ask("exec_command");
            Err(ConnectionError::Exec("inner".into()))
        }

        fn run_python(&self, _: &[u8], _: &PythonRun) -> Result<PythonOutput, ConnectionError> {
            self.ask("run_python");
            Ok(PythonOutput {
                rc: 0,
                stdout: String::new(),
                stderr: String::new(),
                tag: String::new(),
            })
        }

        fn stage(&self, _: &[u8], name: &str, _: bool) -> Result<StagedFile, ConnectionError> {
            self.ask("stage");
            Ok(StagedFile::agent(name.to_string()))
        }

        fn place(&self, _: &[u8], _: &str, _: bool) -> Result<(), ConnectionError> {
            self.ask("place");
            Ok(())
        }

        fn stage_limit(&self) -> Option<usize> {
            self.ask("stage_limit");
            Some(7)
        }

        fn unstage(&self, _: StagedFile) -> Result<(), ConnectionError> {
            self.ask("unstage");
            Ok(())
        }

        fn start_job(&self, _: &JobSpec) -> Result<ModuleResult, ConnectionError> {
            self.ask("start_job");
            Ok(ModuleResult::new())
        }

        fn take_notes(&self) -> Vec<(u8, String)> {
            self.ask("take_notes");
            vec![(2, "inner".into())]
        }

        fn home(&self) -> Result<String, ConnectionError> {
            self.ask("home");
            Ok("/home/someone".into())
        }
    }

    /// A decorator that adds nothing.
    struct Plain(Recording);

    impl Decorator for Plain {
        fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
            Ok(&self.0)
        }
    }

    fn python_run() -> PythonRun {
        PythonRun {
            hash: String::new(),
            fqn: "ansible.builtin.ping".into(),
            profile: String::new(),
            interpreter: "python3".into(),
            params: "{}".into(),
            environment: Default::default(),
            rlimit_nofile: None,
        }
    }

    fn job() -> JobSpec {
        JobSpec {
            module: "command".into(),
            args: Default::default(),
            check_mode: false,
            diff: false,
            environment: Default::default(),
            dir: "~/.ansible_async".into(),
            limit: 1,
            rlimit_nofile: None,
            python: None,
            program: None,
        }
    }

    /// Calls every method of `link` once, in the trait's order.
    fn use_every_method(link: &dyn Connection) {
        let _ = link.connect();
        let _ = link.is_open();
        let _ = link.run_module("ping", &Invocation::default());
        let _ = link.exec_command("true", Path::new("/"));
        let _ = link.run_python(b"", &python_run());
        let staged = link.stage(b"x", "file", false);
        let _ = link.place(b"x", "/tmp/file", true);
        let _ = link.stage_limit();
        if let Ok(file) = staged {
            let _ = link.unstage(file);
        }
        let _ = link.start_job(&job());
        let _ = link.take_notes();
        let _ = link.home();
    }

    const EVERY_METHOD: [&str; 12] = [
        "connect",
        "is_open",
        "run_module",
        "exec_command",
        "run_python",
        "stage",
        "place",
        "stage_limit",
        "unstage",
        "start_job",
        "take_notes",
        "home",
    ];

    #[test]
    fn a_decorator_with_no_hooks_forwards_every_method_with_its_answer() {
        let link = Plain(Recording::default());
        use_every_method(&link);
        assert_eq!(link.0.asked(), EVERY_METHOD);
        assert!(!link.is_open());
        assert_eq!(link.stage_limit(), Some(7));
        assert_eq!(link.take_notes(), [(2, "inner".to_string())]);
        assert_eq!(link.home().unwrap(), "/home/someone");
        assert!(matches!(
            link.exec_command("true", Path::new("/")),
            Err(ConnectionError::Exec(m)) if m == "inner"
        ));
    }

    /// The method names declared between `header` and the end of its block.
    fn methods(source: &str, header: &str) -> Vec<String> {
        let start = source.find(header).unwrap();
        let block = &source[start..];
        let block = &block[..block.find("\n}\n").unwrap()];
        let mut names: Vec<String> = block
            .lines()
            .filter_map(|line| line.strip_prefix("    fn "))
            .map(|rest| rest.split(['(', '<']).next().unwrap().to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_method_of_the_trait_is_forwarded_and_tested() {
        let declared =
            methods(include_str!("connection.rs"), "pub trait Connection: Send + Sync {");
        let forwarded =
            methods(include_str!("decorate.rs"), "impl<D: Decorator> Connection for D {");
        assert_eq!(forwarded, declared, "a Connection method is not forwarded by Decorator");
        let mut tested: Vec<String> = EVERY_METHOD.iter().map(|m| m.to_string()).collect();
        tested.sort();
        assert_eq!(tested, declared, "a Connection method is not in use_every_method");
    }

    /// A decorator with every hook, telling what each saw.
    struct Hooked {
        inner: Recording,
        said: Mutex<Vec<String>>,
    }

    impl Hooked {
        fn tell(&self, line: String) {
            self.said.lock().unwrap().push(line);
        }
    }

    impl Decorator for Hooked {
        fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
            Ok(&self.inner)
        }

        fn before(&self, request: &Request<'_>) -> Result<(), ConnectionError> {
            match request {
                Request::Home => Err(ConnectionError::Exec("refused".into())),
                Request::RunModule { .. } => {
                    self.tell("before run_module".into());
                    Ok(())
                }
                _ => {
                    self.tell("before".into());
                    Ok(())
                }
            }
        }

        fn invocation<'i>(&self, _: &str, invocation: &'i Invocation) -> Cow<'i, Invocation> {
            Cow::Owned(Invocation { timeout: Some(3), ..invocation.clone() })
        }

        fn error(&self, error: ConnectionError) -> ConnectionError {
            ConnectionError::Exec(format!("told: {error}"))
        }

        fn after(&self, _: &Request<'_>, outcome: Outcome<'_>) {
            let outcome = match outcome {
                Outcome::Done => "done".to_string(),
                Outcome::Staged(file) => format!("staged {}", file.path()),
                Outcome::Failed(e) => format!("failed {e}"),
            };
            self.tell(outcome);
        }

        fn notes(&self) -> Vec<(u8, String)> {
            vec![(1, "own".into())]
        }
    }

    #[test]
    fn the_hooks_come_in_order_around_each_request() {
        let link = Hooked { inner: Recording::default(), said: Mutex::new(Vec::new()) };
        let result = link.run_module("ping", &Invocation::default()).unwrap();
        assert_eq!(result["timeout"], 3);
        assert!(link.stage(b"x", "there", false).is_ok());
        let failed = link.exec_command("true", Path::new("/")).unwrap_err().to_string();
        assert_eq!(
            failed,
            "could not run the command on the host: told: could not run the command on the host: inner"
        );
        assert!(link.home().is_err());
        assert_eq!(link.take_notes(), [(1, "own".to_string()), (2, "inner".to_string())]);
        assert_eq!(link.inner.asked(), ["run_module", "stage", "exec_command", "take_notes"]);
        assert_eq!(
            *link.said.lock().unwrap(),
            [
                "before run_module",
                "done",
                "before",
                "staged there",
                "before",
                &format!("failed {failed}"),
            ]
        );
    }
}
