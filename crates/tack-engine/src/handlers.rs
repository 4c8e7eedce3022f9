//! A play's handlers: which handler a notification names (by name first, the last defined of
//! that name; then every handler listening to it), which hosts each is notified for, and the
//! order they run in at a flush (definition order, each once per notified host).
//!
//! Handler names are rendered once with the play's variables, as ansible does; a name that
//! cannot be rendered makes a handler reachable only through its `listen` topics.

use std::collections::BTreeSet;

use tack_diag::Diagnostic;
use tack_playbook::TaskKind;
use tack_playbook::walk::TaskInContext;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value};

/// One handler and the hosts it is notified for.
pub struct Handler<'a> {
    pub ctx: TaskInContext<'a>,
    name: Option<String>,
    /// `role : name` for a role's handler.
    role_name: Option<String>,
    listen: Vec<String>,
    notified: BTreeSet<String>,
}

/// Every handler of a play, in definition order.
pub struct Handlers<'a> {
    pub list: Vec<Handler<'a>>,
}

fn strings(node: &Node) -> Vec<String> {
    match &node.value {
        Value::Seq(items) => items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect(),
        Value::Null => Vec::new(),
        other => vec![tack_yaml::pyrepr::str(other)],
    }
}

impl<'a> Handlers<'a> {
    pub fn new(
        play: &tack_playbook::Play,
        tasks: Vec<TaskInContext<'a>>,
        templar: &Templar,
        vars: &Mapping,
    ) -> Handlers<'a> {
        let mut handlers = Handlers { list: Vec::new() };
        handlers.extend(play, tasks, templar, vars);
        handlers
    }

    /// Adds `tasks` after the handlers already known (an `include_role` brings its role's,
    /// as ansible adds them to the play's handlers).
    pub fn extend(
        &mut self,
        play: &tack_playbook::Play,
        tasks: Vec<TaskInContext<'a>>,
        templar: &Templar,
        vars: &Mapping,
    ) {
        self.list.extend(tasks.into_iter().map(|ctx| {
            let name = ctx.task.name().and_then(|n| {
                templar
                    .render_with_vars(n, vars)
                    .ok()
                    .map(|r| tack_yaml::pyrepr::str(&r.value))
                    .filter(|s| !s.is_empty())
            });
            let listen = match &ctx.task.kind {
                TaskKind::Handler { listen } => listen.iter().flat_map(strings).collect(),
                _ => Vec::new(),
            };
            let role_name = match (&name, ctx.task.role) {
                (Some(n), Some(r)) => Some(format!("{} : {n}", play.role(r).name)),
                _ => None,
            };
            Handler { ctx, name, role_name, listen, notified: BTreeSet::new() }
        }));
    }

    /// The handlers `notification` names: the last one defined with that name, else every
    /// handler listening to it (each name once).
    fn find(&self, notification: &str) -> Vec<usize> {
        let named = |h: &Handler<'_>| {
            h.name.as_deref() == Some(notification) || h.role_name.as_deref() == Some(notification)
        };
        if let Some(i) = (0..self.list.len()).rev().find(|i| named(&self.list[*i])) {
            return vec![i];
        }
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (i, h) in self.list.iter().enumerate().rev() {
            if h.listen.iter().any(|l| l == notification) {
                if let Some(name) = &h.name
                    && !seen.insert(name.clone())
                {
                    continue;
                }
                out.push(i);
            }
        }
        out.reverse();
        out
    }

    /// Records that `host` notified each of `notifications`.
    pub fn notify(&mut self, host: &str, notifications: &[String]) -> Result<(), Diagnostic> {
        for notification in notifications {
            let found = self.find(notification);
            if found.is_empty() {
                return Err(Diagnostic::new(format!(
                    "The requested handler '{notification}' was not found in either the main \
                     handlers list nor in the listening handlers list"
                )));
            }
            for i in found {
                self.list[i].notified.insert(host.to_string());
            }
        }
        Ok(())
    }

    /// The hosts of `among` notified for handler `index`, in `among`'s order, now no longer
    /// notified.
    pub fn take(&mut self, index: usize, among: &[String]) -> Vec<String> {
        let handler = &mut self.list[index];
        let hosts: Vec<String> =
            among.iter().filter(|h| handler.notified.contains(*h)).cloned().collect();
        for h in &hosts {
            handler.notified.remove(h);
        }
        hosts
    }
}
