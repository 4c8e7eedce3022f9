//! A task's result for one host, as ansible's `TaskResult` carries it: the result dictionary
//! (with ansible's `_ansible_*` control keys kept apart) and what the run decided about it.

use tack_yaml::{Mapping, Node, Value};

/// What happened to a task on one host, as the recap counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Changed,
    Skipped,
    Failed,
    /// The host could not be reached (`unreachable` in the result).
    Unreachable,
}

/// One host's result for one task (or one loop item of it).
#[derive(Debug, Clone)]
pub struct HostResult {
    pub host: String,
    /// The result dictionary as `register` stores it (no `_ansible_*` keys).
    pub data: Mapping,
    /// Print the result even at verbosity 0 (`_ansible_verbose_always`: debug, assert).
    pub verbose_always: bool,
    /// Never print the result (`_ansible_verbose_override`: gathered facts).
    pub verbose_override: bool,
    /// A failure that `ignore_errors` let pass.
    pub ignored: bool,
    /// The task's `ignore_unreachable`: an unreachable result counts as ok and ignored, and
    /// the host carries on.
    pub ignore_unreachable: bool,
    /// The loop item label, for `(item=...)`.
    pub item_label: Option<Node>,
    /// The task's error, printed as an `[ERROR]:` block before the `fatal:` line.
    pub error: Option<tack_diag::Diagnostic>,
    /// `no_log` hides the result from the callback (see `crate::no_log`).
    pub no_log: bool,
    /// A loop's result: which of its `results` no_log hides, in order (each item is shown
    /// censored inside the loop's result, as it was on its own line).
    pub hidden_items: Vec<bool>,
    /// The host a delegated run ran on (`[host -> delegated]`).
    pub delegated: Option<String>,
    /// `tack plan`: what the plan could not know (see `crate::plan_mark`); `None` for a result
    /// that is real (a check-mode run, a skip, an error).
    pub plan: Option<crate::plan_mark::PlanMark>,
    /// The action a templated name (`action: '{{ m }}'`) rendered to for this host or item:
    /// the callback cleans the result as that action's (ansible's worker sends back the task
    /// it post-validated).
    pub action: Option<String>,
    /// Warnings of the result that ansible shows with where they came from (a label that
    /// failed to render): the block to show for each such text of `warnings`.
    pub warning_blocks: std::collections::BTreeMap<String, tack_diag::Diagnostic>,
    /// How many of the first `deprecations` were shown already (a loop's, with its items):
    /// the callback shows the others.
    pub shown_deprecations: usize,
    /// How the first of `deprecations` are shown: those raised while the task ran
    /// (`tack_diag::recording_deprecations`), with where they came from, then those a module
    /// brought, with their help text.
    pub raised_deprecations: Vec<tack_diag::RecordedDeprecation>,
    /// The connection the task reached its host with, by ansible's resolved name
    /// (`ansible.builtin.ssh`): what callback plugins read as `task.connection`. `None` when
    /// the task did not run there (a skip).
    pub connection: Option<String>,
    /// The result holds nothing a host said: a `set_fact` whose values all came from what
    /// the user wrote. `register` keeps it trusted, as ansible keeps those values' tags.
    pub written_by_user: bool,
    /// Values of `data` a module tagged `Deprecated`: `register` keeps the tags, and a
    /// template reading such a value warns.
    pub deprecated_values: Vec<tack_yaml::tagged::DeprecatedAt>,
    /// Places in `data` that are the user's though a host said the rest (a loop's item,
    /// which ansible keeps as the playbook gave it): `register` keeps them trusted.
    pub trusted_values: Vec<Vec<tack_yaml::tagged::PathStep>>,
}

/// A deprecation as a result's `deprecations` keeps it (`deprecation_as_dict`, then the
/// deprecator): `msg`, `collection_name`, `date` or else `version` (null when neither),
/// `deprecator: {resolved_name, type}`.
pub fn deprecation_entry(what: &tack_diag::Deprecated) -> Node {
    let text = |t: Option<&str>| t.map_or_else(|| Node::bare(Value::Null), s);
    let mut deprecator = Mapping::new();
    deprecator.insert(s("resolved_name"), text(what.deprecator.resolved_name.as_deref()));
    deprecator.insert(s("type"), text(what.deprecator.kind.as_deref()));
    let mut entry = Mapping::new();
    entry.insert(s("msg"), s(&what.msg));
    entry.insert(s("collection_name"), text(what.deprecator.collection_name().as_deref()));
    match &what.date {
        Some(date) => entry.insert(s("date"), s(date)),
        None => entry.insert(s("version"), text(what.version.as_deref())),
    };
    entry.insert(s("deprecator"), Node::bare(Value::Map(deprecator)));
    Node::bare(Value::Map(entry))
}

/// The deprecation a result's `deprecations` entry describes ([`deprecation_entry`]'s shape).
pub fn deprecation_of(entry: &Mapping) -> tack_diag::Deprecated {
    let text =
        |n: Option<&Node>| n.filter(|n| !n.is_null()).map(|n| tack_yaml::pyrepr::str(&n.value));
    let deprecator = entry.get("deprecator").and_then(Node::as_map);
    tack_diag::Deprecated {
        msg: text(entry.get("msg")).unwrap_or_default(),
        help: None,
        version: text(entry.get("version")),
        date: text(entry.get("date")),
        deprecator: tack_diag::Deprecator {
            resolved_name: text(deprecator.and_then(|d| d.get("resolved_name"))),
            kind: text(deprecator.and_then(|d| d.get("type"))),
        },
    }
}

pub fn s(text: &str) -> Node {
    Node::bare(Value::Str(text.to_string()))
}

pub fn b(value: bool) -> Node {
    Node::bare(Value::Bool(value))
}

impl HostResult {
    pub fn new(host: &str, data: Mapping) -> HostResult {
        HostResult {
            host: host.to_string(),
            data,
            verbose_always: false,
            verbose_override: false,
            ignored: false,
            ignore_unreachable: false,
            item_label: None,
            error: None,
            no_log: false,
            hidden_items: Vec::new(),
            delegated: None,
            plan: None,
            action: None,
            warning_blocks: std::collections::BTreeMap::new(),
            shown_deprecations: 0,
            raised_deprecations: Vec::new(),
            connection: None,
            written_by_user: false,
            deprecated_values: Vec::new(),
            trusted_values: Vec::new(),
        }
    }

    /// Puts the deprecations raised while the task ran (the callback shows them) before those the
    /// result brought (a module's), as ansible's worker keeps them ([`deprecation_entry`]).
    pub fn add_raised_deprecations(&mut self, raised: Vec<tack_diag::RecordedDeprecation>) {
        if raised.is_empty() {
            return;
        }
        let mut list: Vec<Node> = raised.iter().map(|d| deprecation_entry(&d.what)).collect();
        if let Some(Value::Seq(brought)) = self.data.get("deprecations").map(|n| &n.value) {
            list.extend(brought.iter().cloned());
        }
        self.data.insert(s("deprecations"), Node::bare(Value::Seq(list)));
        let earlier = std::mem::take(&mut self.raised_deprecations);
        self.raised_deprecations = raised;
        self.raised_deprecations.extend(earlier);
    }

    /// `_ansible_verbose_always`, which a censored result loses.
    pub fn always_shown(&self) -> bool {
        self.verbose_always && !self.no_log
    }

    /// `host_label`: the host, and the delegated one after an arrow.
    pub fn label(&self) -> String {
        match &self.delegated {
            Some(other) => format!("{} -> {other}", self.host),
            None => self.host.clone(),
        }
    }

    /// Unreachable, and not ignored: the host leaves the run (ansible's unreachable hosts).
    pub fn lost(&self) -> bool {
        self.outcome() == Outcome::Unreachable && !self.ignore_unreachable
    }

    /// Whether the result notifies the task's handlers: it changed, or (in a plan) its
    /// outcome is not known, so a handler may run after all.
    pub fn notifies(&self) -> bool {
        self.flag("changed") || crate::plan_mark::PlanMark::unknown_in(self)
    }

    pub fn flag(&self, key: &str) -> bool {
        self.data.get(key).is_some_and(|v| v.value.is_truthy())
    }

    pub fn outcome(&self) -> Outcome {
        if self.flag("failed") {
            Outcome::Failed
        } else if self.flag("unreachable") {
            Outcome::Unreachable
        } else if self.flag("skipped") {
            Outcome::Skipped
        } else if self.flag("changed") {
            Outcome::Changed
        } else {
            Outcome::Ok
        }
    }
}

/// The result of a task skipped by its `when`.
pub fn skipped(host: &str, condition: &Node) -> HostResult {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("false_condition"), condition.clone());
    data.insert(s("skip_reason"), s("Conditional result was False"));
    data.insert(s("skipped"), b(true));
    HostResult::new(host, data)
}
