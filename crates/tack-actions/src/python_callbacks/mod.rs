//! Callback plugins written in Python (`callbacks_enabled`, and those ansible loads without
//! being asked: a `callback_plugins/` plugin beside a playbook or on the configured path that
//! does not say it needs enabling), run by ansible-core's own code in one worker process of
//! the controller's ansible-core: tack's stdout callback prints the transcript, and each
//! event then goes to the worker, which calls the plugins with ansible's own objects (`Task`,
//! `Play`, `Host`, `CallbackTaskResult`, `AggregateStats`). What they print through ansible's
//! display comes back and is printed in its place, so the transcript keeps ansible's order.
//!
//! Owns the process, the wire format and the [`WithPythonCallbacks`] wrapper; which
//! callbacks are asked for is the binary's. The worker starts only when there may be such
//! plugins, and a run without any pays nothing.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Map, Value as Json, json};
use tack_report::callback::{Callback, Stats, TaskParams, TaskView};
use tack_report::result::HostResult;

use crate::python_plugins::to_wire;

/// Our worker script, after what every worker shares (`python_wire.py`).
const WORKER: &str = concat!(include_str!("../python_wire.py"), include_str!("worker.py"));

/// What the worker is started with.
#[derive(Debug, Clone, Default)]
pub struct CallbackSetup {
    /// Playbook directories (their `callback_plugins/`), in load order.
    pub dirs: Vec<PathBuf>,
    pub collections: Vec<PathBuf>,
    pub basedir: PathBuf,
    pub config_file: Option<PathBuf>,
    pub verbosity: u8,
    /// The `-e` values (a plugin's options may name variables).
    pub extra_vars: tack_yaml::Mapping,
    /// The `stdout_callback` when it is none tack prints itself: the plugin prints the
    /// transcript in tack's place.
    pub stdout: Option<String>,
}

/// Why the run's Python callbacks cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    #[error("the callback plugins need ansible-core on the controller to run them: {0}")]
    NoAnsibleCore(String),
    #[error("could not start {python} for the callback plugins: {source}")]
    Spawn {
        python: String,
        #[source]
        source: std::io::Error,
    },
    #[error("loading the callback plugins failed: {0}")]
    Setup(String),
    /// ansible's own error for a stdout callback it cannot load.
    #[error("{0}")]
    CannotLoad(String),
}

/// The worker's process (`crate::python_lines`).
type Worker = crate::python_lines::Lines;

/// Starts the worker and loads the plugins: `None` when no plugin is active (the worker is
/// stopped then), with what loading printed.
fn start(setup: &CallbackSetup) -> Result<(Option<Worker>, Vec<Printed>), CallbackError> {
    let Some(core) = crate::python_path::core() else {
        // Without ansible-core no plugin can be loaded: for a stdout callback that is
        // ansible's own load error.
        if let Some(name) = &setup.stdout {
            return Err(CallbackError::CannotLoad(format!(
                "Could not load '{name}' callback plugin."
            )));
        }
        return Err(CallbackError::NoAnsibleCore(crate::python_path::why_not()));
    };
    let mut command =
        crate::python_path::worker_command(&core.python, WORKER, setup.config_file.as_deref());
    let grace = std::time::Duration::from_secs(5);
    let mut worker =
        Worker::spawn(&mut command, "the callback worker", grace).map_err(|source| {
            CallbackError::Spawn { python: core.python.display().to_string(), source }
        })?;
    let paths = |dirs: &[PathBuf]| -> Vec<String> {
        dirs.iter().map(|d| d.display().to_string()).collect()
    };
    let request = json!({
        "dirs": paths(&setup.dirs),
        "collections": paths(&setup.collections),
        "basedir": setup.basedir.display().to_string(),
        "verbosity": setup.verbosity,
        "extra_vars": to_wire(&tack_yaml::Value::Map(setup.extra_vars.clone())),
        "stdout": setup.stdout,
    });
    worker.send(&request).map_err(CallbackError::Setup)?;
    let reply = worker.receive().map_err(CallbackError::Setup)?;
    if let Some(fatal) = reply.get("fatal").and_then(Json::as_str) {
        return Err(CallbackError::Setup(fatal.to_string()));
    }
    if let Some(message) = reply.get("cannot_load").and_then(Json::as_str) {
        // What the loader said first (ansible's warning naming why), then its error.
        for (text, stderr) in shown(&reply) {
            let _ = if stderr {
                std::io::stderr().write_all(text.as_bytes())
            } else {
                std::io::stdout().write_all(text.as_bytes())
            };
        }
        return Err(CallbackError::CannotLoad(message.to_string()));
    }
    let shown = shown(&reply);
    let loaded = reply.get("loaded").and_then(Json::as_array).is_some_and(|l| !l.is_empty());
    Ok((loaded.then_some(worker), shown))
}

/// What a plugin printed, and whether to stderr.
type Printed = (String, bool);

fn shown(reply: &Map<String, Json>) -> Vec<Printed> {
    reply
        .get("shown")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|pair| {
            let text = pair.get(0)?.as_str()?.to_string();
            Some((text, pair.get(1).and_then(Json::as_bool).unwrap_or(false)))
        })
        .collect()
}

/// A stdout callback followed by the run's Python callback plugins, for every event.
pub struct WithPythonCallbacks<C> {
    inner: C,
    worker: Option<Worker>,
    /// A Python stdout callback prints the transcript: `inner` is left only what ansible's
    /// display prints outside any callback (an action's announcement, `-v` notes).
    replaced: bool,
}

impl<C: Callback> WithPythonCallbacks<C> {
    /// `inner` alone: the run has no Python callback plugins to look for.
    pub fn none(inner: C) -> Self {
        WithPythonCallbacks { inner, worker: None, replaced: false }
    }

    /// `inner` followed by the plugins `setup` finds; a run without any active plugin keeps
    /// no worker.
    pub fn new(mut inner: C, setup: &CallbackSetup) -> Result<Self, CallbackError> {
        let (worker, printed) = start(setup)?;
        show(&mut inner, printed);
        let replaced = setup.stdout.is_some();
        Ok(WithPythonCallbacks { inner, worker, replaced })
    }

    /// Hands `event` to the plugins and prints what they printed.
    fn send(&mut self, event: Json) {
        let Some(worker) = self.worker.as_mut() else { return };
        let answered = worker.send(&event).and_then(|()| worker.receive());
        match answered {
            Ok(reply) => show(&mut self.inner, shown(&reply)),
            Err(why) => {
                // ansible's callbacks failing never stop a run: said once, then no more calls.
                tack_diag::warn(&tack_diag::Diagnostic::new(format!(
                    "the callback plugins stopped: {why}"
                )));
                self.worker = None;
            }
        }
    }
}

fn show<C: Callback>(inner: &mut C, printed: Vec<Printed>) {
    for (text, stderr) in printed {
        let text = text.strip_suffix('\n').unwrap_or(&text);
        if stderr {
            eprintln!("{text}");
        } else {
            inner.display(text);
        }
    }
}

fn task(view: &TaskView) -> Json {
    let path = view
        .origin
        .as_ref()
        .and_then(|o| o.path.as_ref().map(|p| format!("{}:{}", p.display(), o.line)));
    // The same task (name and place) is the same object to the plugins for the whole run.
    let id = format!("{}\u{0}{}\u{0}{}", view.name, view.action, path.clone().unwrap_or_default());
    json!({ "id": id, "name": view.name, "action": view.action, "path": path })
}

fn outcome(result: &HostResult) -> &'static str {
    let flag = |k: &str| result.data.get(k).is_some_and(|v| v.value.is_truthy());
    // ansible's strategy hands an unreachable result to the callbacks as such, ignored or not.
    if flag("unreachable") {
        "unreachable"
    } else if flag("failed") {
        "failed"
    } else if flag("skipped") {
        "skipped"
    } else {
        "ok"
    }
}

fn result(event: &str, view: &TaskView, result: &HostResult) -> Json {
    json!({
        "event": event,
        "task": task(view),
        "host": result.host,
        "result": to_wire(&tack_yaml::Value::Map(result.data.clone())),
        "no_log": result.no_log,
        "ignored": result.ignored,
        "verbose_always": result.verbose_always,
        // The task's error as ansible's display shows it (`_handle_exception`).
        "error": result.error.as_ref().map(|d| d.render().replace("\r\n", "\n")),
        "verbose_override": result.verbose_override,
        "connection": result.connection,
    })
}

impl<C: Callback> Callback for WithPythonCallbacks<C> {
    fn wants_params(&self) -> bool {
        self.inner.wants_params()
    }

    fn task_params(&mut self, task: &TaskView, params: &TaskParams) {
        if !self.replaced {
            self.inner.task_params(task, params);
        }
    }

    fn play_check_mode(&mut self, check_mode: bool) {
        self.inner.play_check_mode(check_mode);
    }

    fn play_start(&mut self, name: &str) {
        if !self.replaced {
            self.inner.play_start(name);
        }
        self.send(json!({ "event": "play_start", "name": name }));
    }

    fn no_hosts_matched(&mut self) {
        if !self.replaced {
            self.inner.no_hosts_matched();
        }
        self.send(json!({ "event": "no_hosts_matched" }));
    }

    fn no_hosts_remaining(&mut self) {
        if !self.replaced {
            self.inner.no_hosts_remaining();
        }
        self.send(json!({ "event": "no_hosts_remaining" }));
    }

    fn task_start(&mut self, view: &TaskView) {
        if !self.replaced {
            self.inner.task_start(view);
        }
        self.send(json!({ "event": "task_start", "task": task(view) }));
    }

    fn included(&mut self, file: &str, hosts: &[String], item: Option<&str>) {
        if !self.replaced {
            self.inner.included(file, hosts, item);
        }
        self.send(json!({ "event": "include", "file": file, "hosts": hosts, "item": item }));
    }

    fn handler_start(&mut self, view: &TaskView) {
        if !self.replaced {
            self.inner.handler_start(view);
        }
        self.send(json!({ "event": "handler_start", "task": task(view) }));
    }

    fn host_result(&mut self, view: &TaskView, host_result: &HostResult) {
        if !self.replaced {
            self.inner.host_result(view, host_result);
        }
        self.send(result(outcome(host_result), view, host_result));
    }

    fn item_result(&mut self, view: &TaskView, host_result: &HostResult) {
        if !self.replaced {
            self.inner.item_result(view, host_result);
        }
        let event = match outcome(host_result) {
            "failed" => "item_failed",
            "skipped" => "item_skipped",
            _ => "item_ok",
        };
        self.send(result(event, view, host_result));
    }

    fn file_diff(&mut self, view: &TaskView, host_result: &HostResult) {
        if !self.replaced {
            self.inner.file_diff(view, host_result);
        }
        self.send(result("file_diff", view, host_result));
    }

    fn retry(&mut self, view: &TaskView, host_result: &HostResult) {
        if !self.replaced {
            self.inner.retry(view, host_result);
        }
        self.send(result("retry", view, host_result));
    }

    fn stats(&mut self, stats: &Stats) {
        if !self.replaced {
            self.inner.stats(stats);
        }
        let hosts: Map<String, Json> = stats
            .hosts()
            .map(|(host, s)| {
                let counts = json!({
                    "ok": s.ok, "changed": s.changed, "failures": s.failures,
                    "dark": s.unreachable, "skipped": s.skipped, "rescued": s.rescued,
                    "ignored": s.ignored,
                });
                (host.to_string(), counts)
            })
            .collect();
        let custom: Map<String, Json> = stats
            .custom
            .iter()
            .map(|(host, data)| (host.clone(), to_wire(&tack_yaml::Value::Map(data.clone()))))
            .collect();
        self.send(json!({ "event": "stats", "hosts": hosts, "custom": custom }));
    }

    fn playbook_start(&mut self, playbook: &tack_playbook::Playbook, first: bool) {
        if !self.replaced {
            self.inner.playbook_start(playbook, first);
        }
        let file = playbook.basedir.join(
            playbook.path.file_name().map(PathBuf::from).unwrap_or_else(|| playbook.path.clone()),
        );
        self.send(json!({ "event": "playbook_start", "file": file.display().to_string() }));
    }

    fn verbose_line(&mut self, level: u8, msg: &str) {
        self.inner.verbose_line(level, msg);
    }

    fn display(&mut self, text: &str) {
        self.inner.display(text);
    }

    fn async_note(&mut self, text: &str) {
        // A Python stdout callback prints a job's notes itself, from its events.
        if !self.replaced {
            self.inner.async_note(text);
        }
    }

    fn handler_notified(&mut self, handler: &TaskView, host: &str) {
        if !self.replaced {
            self.inner.handler_notified(handler, host);
        }
        self.send(json!({ "event": "notify", "task": task(handler), "host": host }));
    }

    fn vars_prompt(&mut self, entry: &tack_yaml::Mapping) {
        self.inner.vars_prompt(entry);
        self.send(json!({ "event": "vars_prompt", "entry": to_wire(&tack_yaml::Value::Map(entry.clone())) }));
    }

    fn include_result(&mut self, view: &TaskView, host_result: &HostResult) {
        self.inner.include_result(view, host_result);
        self.send(result("ok", view, host_result));
    }

    fn host_start(&mut self, view: &TaskView, host: &str, handler: bool) {
        if !self.replaced {
            self.inner.host_start(view, host, handler);
        }
        let event =
            json!({ "event": "host_start", "task": task(view), "host": host, "handler": handler });
        self.send(event);
    }

    fn async_event(&mut self, view: &TaskView, event: &str, host_result: &HostResult) {
        self.inner.async_event(view, event, host_result);
        self.send(result(&format!("async_{event}"), view, host_result));
    }

    fn batch_start(&mut self, index: usize, count: usize) {
        self.inner.batch_start(index, count);
    }

    fn task_hosts(&mut self, count: usize) {
        self.inner.task_hosts(count);
    }
}
