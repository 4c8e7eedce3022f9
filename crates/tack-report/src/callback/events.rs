//! `--events FILE`: the run's events as JSON, one object per line, written beside the stdout
//! transcript (every event is forwarded unchanged to the callback it wraps).
//!
//! Lines, in run order: `play_start`, `task_start` (with the task's rendered input, see
//! [`TaskParams`]), `included`, `task_result` and `item_result` per host, `no_hosts_matched`,
//! and `recap`. Secrets never reach the file: inputs come masked from the engine, and every
//! string written has each `!vault` plaintext the run decrypted replaced by `********`; a host
//! whose input held a secret has its result's text (`stdout`, `stderr`, `msg`) masked whole.

use std::io::Write;
use std::time::Instant;

use tack_yaml::{JsonOptions, Mapping, Node, Value};

use super::MASK;
use super::{Callback, Stats, TaskParams, TaskView};
use crate::result::{HostResult, Outcome};

pub struct EventsCallback<W: Write, C: Callback> {
    out: W,
    inner: C,
    /// A task whose start is held until its input arrives (or another event comes first).
    pending: Option<(TaskView, bool)>,
    /// When the current task's last host finished (or the task started).
    mark: Instant,
    /// Hosts of the current task whose input held a secret.
    sealed_hosts: Vec<String>,
    /// The first write that failed; later events are dropped.
    error: Option<std::io::Error>,
}

impl<W: Write, C: Callback> EventsCallback<W, C> {
    pub fn new(out: W, inner: C) -> EventsCallback<W, C> {
        EventsCallback {
            out,
            inner,
            pending: None,
            mark: Instant::now(),
            sealed_hosts: Vec::new(),
            error: None,
        }
    }

    /// The file and the wrapped callback back, or the first write error.
    pub fn finish(mut self) -> Result<(W, C), std::io::Error> {
        self.flush_pending();
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.flush()?;
        Ok((self.out, self.inner))
    }

    fn write(&mut self, event: &str, fields: Vec<(&str, Node)>) {
        if self.error.is_some() {
            return;
        }
        let mut map = Mapping::new();
        map.insert(text("event"), text(event));
        for (key, value) in fields {
            map.insert(text(key), value);
        }
        let node = mask_texts(Node::bare(Value::Map(map)));
        let mut options = JsonOptions::compact();
        options.ensure_ascii = false;
        let line = match tack_yaml::to_json(&node, &options) {
            Ok(line) => line,
            Err(e) => format!("{{\"event\": \"unserialisable\", \"error\": {:?}}}", e.0),
        };
        if let Err(e) = writeln!(self.out, "{line}") {
            self.error = Some(e);
        }
    }

    fn write_task_start(&mut self, task: &TaskView, handler: bool, params: Option<&TaskParams>) {
        let mut fields = vec![
            ("task", text(&task.name)),
            ("action", text(&task.action)),
            ("handler", Node::bare(Value::Bool(handler))),
        ];
        match params {
            Some(p) => {
                fields.push(("params", p.shown.clone()));
                fields.push(("params_shared", Node::bare(Value::Bool(p.shared))));
                fields.push((
                    "hosts",
                    Node::bare(Value::Seq(p.hosts.iter().map(|h| text(h)).collect())),
                ));
                // Each host's own input where they differ (none where they agree).
                if !p.per_host.is_empty() {
                    let mut inputs = Mapping::new();
                    for (host, input) in &p.per_host {
                        inputs.insert(text(host), input.clone());
                    }
                    fields.push(("params_per_host", Node::bare(Value::Map(inputs))));
                }
            }
            None => fields.push(("params", Node::bare(Value::Null))),
        }
        self.write("task_start", fields);
    }

    fn flush_pending(&mut self) {
        if let Some((task, handler)) = self.pending.take() {
            self.write_task_start(&task, handler, None);
        }
    }

    fn start(&mut self, task: &TaskView, handler: bool) {
        self.flush_pending();
        self.pending = Some((task.clone(), handler));
        self.sealed_hosts.clear();
        self.mark = Instant::now();
    }

    fn result(&mut self, event: &str, task: &TaskView, result: &HostResult) {
        self.flush_pending();
        let now = Instant::now();
        let duration = now.duration_since(self.mark).as_secs_f64();
        if event == "task_result" {
            self.mark = now;
        }
        let status = match result.outcome() {
            Outcome::Ok => "ok",
            Outcome::Changed => "changed",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Unreachable => "unreachable",
        };
        let sealed = self.sealed_hosts.contains(&result.host);
        if sealed {
            remember_output(result);
        }
        let field = |key: &str| match result.data.get(key) {
            Some(_) if sealed => text(MASK),
            Some(value) => value.clone(),
            None => Node::bare(Value::Null),
        };
        let mut fields = vec![
            ("host", text(&result.host)),
            ("task", text(&task.name)),
            ("status", text(status)),
            ("changed", Node::bare(Value::Bool(result.flag("changed")))),
            ("ignored", Node::bare(Value::Bool(result.ignored))),
            ("rc", result.data.get("rc").cloned().unwrap_or(Node::bare(Value::Null))),
            ("stdout", field("stdout")),
            ("stderr", field("stderr")),
            ("msg", field("msg")),
        ];
        if let Some(label) = &result.item_label {
            fields.push(("item", if sealed { text(MASK) } else { label.clone() }));
        }
        // What a plan could not call unchanged, besides a change (`changed` says that).
        if let Some(mark) = result.plan.as_ref().filter(|m| m.unknown()) {
            fields.push(("plan", text(if mark.would_run { "would_run" } else { "deferred" })));
        }
        fields.push(("duration", Node::bare(Value::Float((duration * 1000.0).round() / 1000.0))));
        self.write(event, fields);
    }
}

fn text(s: &str) -> Node {
    Node::bare(Value::Str(s.to_string()))
}

/// Every string in `node` (keys too) with the secrets in it masked, by
/// `tack_vault::sealed`'s rule.
fn mask_texts(node: Node) -> Node {
    if tack_vault::sealed::is_empty() {
        return node;
    }
    let value = match node.value {
        Value::Str(s) => match tack_vault::sealed::mask(&s) {
            Some(masked) => Value::Str(masked),
            None => Value::Str(s),
        },
        Value::Seq(items) => Value::Seq(items.into_iter().map(mask_texts).collect()),
        Value::Map(map) => {
            Value::Map(map.into_iter().map(|(k, v)| (mask_texts(k), mask_texts(v))).collect())
        }
        other => other,
    };
    Node { value, ..node }
}

/// A sealed host's output is a secret from here on: what prints it later, or reads it
/// (a registered result, `ansible_failed_result`), is masked and sealed too.
fn remember_output(result: &HostResult) {
    for key in ["stdout", "stderr", "msg"] {
        if let Some(Value::Str(text)) = result.data.get(key).map(|n| &n.value) {
            tack_vault::sealed::remember(text);
        }
    }
}

impl<W: Write, C: Callback> Callback for EventsCallback<W, C> {
    fn wants_params(&self) -> bool {
        true
    }

    fn task_params(&mut self, task: &TaskView, params: &TaskParams) {
        self.sealed_hosts = params.sealed_hosts.clone();
        let handler = match self.pending.take() {
            Some((_, handler)) => handler,
            None => false,
        };
        self.write_task_start(task, handler, Some(params));
        self.inner.task_params(task, params);
    }

    fn play_check_mode(&mut self, check_mode: bool) {
        self.inner.play_check_mode(check_mode);
    }

    fn play_start(&mut self, name: &str) {
        self.flush_pending();
        self.write("play_start", vec![("play", text(name))]);
        self.inner.play_start(name);
    }

    fn no_hosts_matched(&mut self) {
        self.flush_pending();
        self.write("no_hosts_matched", Vec::new());
        self.inner.no_hosts_matched();
    }

    fn task_start(&mut self, task: &TaskView) {
        self.start(task, false);
        self.inner.task_start(task);
    }

    fn included(&mut self, file: &str, hosts: &[String], item: Option<&str>) {
        self.flush_pending();
        let mut fields = vec![
            ("file", text(file)),
            ("hosts", Node::bare(Value::Seq(hosts.iter().map(|h| text(h)).collect()))),
        ];
        if let Some(item) = item {
            fields.push(("item", text(item)));
        }
        self.write("included", fields);
        self.inner.included(file, hosts, item);
    }

    fn handler_start(&mut self, task: &TaskView) {
        self.start(task, true);
        self.inner.handler_start(task);
    }

    fn host_result(&mut self, task: &TaskView, result: &HostResult) {
        self.result("task_result", task, result);
        self.inner.host_result(task, result);
    }

    fn item_result(&mut self, task: &TaskView, result: &HostResult) {
        self.result("item_result", task, result);
        self.inner.item_result(task, result);
    }

    fn file_diff(&mut self, task: &TaskView, result: &HostResult) {
        self.inner.file_diff(task, result);
    }

    fn retry(&mut self, task: &TaskView, result: &HostResult) {
        self.result("retry_result", task, result);
        self.inner.retry(task, result);
    }

    fn no_hosts_remaining(&mut self) {
        self.flush_pending();
        self.inner.no_hosts_remaining();
    }

    fn playbook_start(&mut self, playbook: &tack_playbook::Playbook, first: bool) {
        self.inner.playbook_start(playbook, first);
    }

    fn verbose_line(&mut self, level: u8, msg: &str) {
        self.inner.verbose_line(level, msg);
    }

    fn display(&mut self, text: &str) {
        self.inner.display(text);
    }

    fn async_note(&mut self, text: &str) {
        self.inner.async_note(text);
    }

    fn async_event(&mut self, task: &TaskView, event: &str, result: &HostResult) {
        self.inner.async_event(task, event, result);
    }

    fn handler_notified(&mut self, handler: &TaskView, host: &str) {
        self.inner.handler_notified(handler, host);
    }

    fn vars_prompt(&mut self, entry: &tack_yaml::Mapping) {
        self.inner.vars_prompt(entry);
    }

    fn include_result(&mut self, task: &TaskView, result: &HostResult) {
        self.inner.include_result(task, result);
    }

    fn host_start(&mut self, task: &TaskView, host: &str, handler: bool) {
        self.inner.host_start(task, host, handler);
    }

    fn batch_start(&mut self, index: usize, count: usize) {
        self.inner.batch_start(index, count);
    }

    fn task_hosts(&mut self, count: usize) {
        self.inner.task_hosts(count);
    }

    fn stats(&mut self, stats: &Stats) {
        self.flush_pending();
        let mut hosts = Mapping::new();
        for (host, t) in stats.hosts() {
            let mut counts = Mapping::new();
            for (key, n) in [
                ("ok", t.ok),
                ("changed", t.changed),
                ("unreachable", t.unreachable),
                ("failed", t.failures),
                ("skipped", t.skipped),
                ("rescued", t.rescued),
                ("ignored", t.ignored),
            ] {
                counts.insert(text(key), Node::bare(Value::Int(i64::from(n))));
            }
            hosts.insert(text(host), Node::bare(Value::Map(counts)));
        }
        self.write("recap", vec![("hosts", Node::bare(Value::Map(hosts)))]);
        self.inner.stats(stats);
    }
}
