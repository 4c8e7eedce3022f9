//! `tack plan --format json`: the plan as one JSON document for review tools and CI gates,
//! written when the run ends. Per play, per task (handlers marked), per host: the outcome
//! (`matched`, `would_change` with its fields, `would_run`, `deferred` with the tasks whose
//! output it waits for, `skipped`, `failed`, `unreachable`), a loop's items' outcomes, and
//! the recap's counters with whether the plan is complete.
//!
//! Nothing a task printed, and no argument, goes into the document: only outcomes, names and
//! the message of a failure (already what the transcript shows).

use serde_json::{Map, Value, json};

use super::{Callback, Stats, TaskView};
use crate::plan_mark::PlanOutcome;
use crate::result::HostResult;

#[derive(Default)]
pub struct PlanJson {
    plays: Vec<Value>,
    /// Items seen for the task now running, by host, until its host result comes.
    items: Map<String, Value>,
    stats: Option<Value>,
}

fn outcome_json(result: &HostResult) -> Map<String, Value> {
    let outcome = crate::plan_mark::outcome(result);
    let mut out = Map::new();
    out.insert("outcome".into(), outcome.name().into());
    match outcome {
        PlanOutcome::WouldChange { fields, deferred } => {
            out.insert("fields".into(), json!(fields));
            if !deferred.is_empty() {
                out.insert("deferred_by".into(), json!(deferred));
            }
        }
        PlanOutcome::WouldRun { deferred } if !deferred.is_empty() => {
            out.insert("deferred_by".into(), json!(deferred));
        }
        PlanOutcome::Deferred { producers } => {
            out.insert("deferred_by".into(), json!(producers));
        }
        PlanOutcome::Ran { changed } => {
            out.insert("changed".into(), changed.into());
        }
        PlanOutcome::Failed | PlanOutcome::Unreachable if !result.no_log => {
            if let Some(msg) = result.data.get("msg") {
                out.insert("msg".into(), tack_yaml::pyrepr::str(&msg.value).into());
            }
        }
        _ => {}
    }
    out
}

impl PlanJson {
    pub fn new() -> PlanJson {
        PlanJson::default()
    }

    /// The document, once the run has ended.
    pub fn document(&self) -> Value {
        json!({ "plays": self.plays, "stats": self.stats })
    }

    /// The document as indented text, with a closing newline.
    pub fn document_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.document()).unwrap_or_default();
        text.push('\n');
        text
    }

    fn tasks(&mut self) -> Option<&mut Vec<Value>> {
        self.plays.last_mut()?.get_mut("tasks")?.as_array_mut()
    }

    fn start(&mut self, task: &TaskView, handler: bool) {
        self.items.clear();
        let entry = json!({
            "name": task.name,
            "action": task.action,
            "handler": handler,
            "hosts": {},
        });
        if let Some(tasks) = self.tasks() {
            tasks.push(entry);
        }
    }
}

impl Callback for PlanJson {
    fn play_start(&mut self, name: &str) {
        self.plays.push(json!({ "name": name, "tasks": [] }));
    }
    fn no_hosts_matched(&mut self) {}
    fn no_hosts_remaining(&mut self) {}
    fn task_start(&mut self, task: &TaskView) {
        self.start(task, false);
    }
    fn included(&mut self, _file: &str, _hosts: &[String], _item: Option<&str>) {}
    fn handler_start(&mut self, task: &TaskView) {
        self.start(task, true);
    }
    fn host_result(&mut self, _task: &TaskView, result: &HostResult) {
        let mut entry = outcome_json(result);
        if let Some(items) = self.items.remove(&result.host) {
            entry.insert("items".into(), items);
        }
        let host = result.host.clone();
        if let Some(hosts) = self
            .tasks()
            .and_then(|t| t.last_mut())
            .and_then(|t| t.get_mut("hosts"))
            .and_then(Value::as_object_mut)
        {
            hosts.insert(host, Value::Object(entry));
        }
    }
    fn item_result(&mut self, _task: &TaskView, result: &HostResult) {
        let mut entry = outcome_json(result);
        let label = if result.no_log {
            crate::no_log::CENSORED_ITEM.to_string()
        } else {
            result.item_label.as_ref().map(|n| tack_yaml::pyrepr::str(&n.value)).unwrap_or_default()
        };
        entry.insert("item".into(), label.into());
        let list = self.items.entry(result.host.clone()).or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.push(Value::Object(entry));
        }
    }
    fn retry(&mut self, _task: &TaskView, _result: &HostResult) {}
    fn stats(&mut self, stats: &Stats) {
        let mut hosts = Map::new();
        for (host, t) in stats.hosts() {
            hosts.insert(
                host.to_string(),
                json!({
                    "ok": t.ok, "changed": t.changed, "unreachable": t.unreachable,
                    "failed": t.failures, "skipped": t.skipped, "rescued": t.rescued,
                    "ignored": t.ignored, "would_run": t.would_run, "deferred": t.deferred,
                }),
            );
        }
        self.stats = Some(json!({ "hosts": hosts, "complete": stats.deferred() == 0 }));
    }
    fn playbook_start(&mut self, _playbook: &tack_playbook::Playbook, _first: bool) {}
    fn verbose_line(&mut self, _level: u8, _msg: &str) {}
    fn display(&mut self, _text: &str) {}
}
