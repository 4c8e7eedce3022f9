//! The task refusals that depend on the host a task runs on, shared by a run and a plan: a
//! Python action plugin of the task's name, and a link or become tack cannot open (so a plan's
//! `would run` never promises what the run refuses).

use tack_actions::{self as actions, ActionOutput};
use tack_diag::Diagnostic;
use tack_report::result::HostResult;
use tack_template::Scope;

use super::TaskRun;

impl TaskRun<'_> {
    /// A plan's `would run` for a task the run would refuse on this host (a Python action
    /// plugin of its name, a become method or connection tack does not run): the refusal,
    /// as the run reports it, so the plan does not promise what the run cannot do.
    pub(super) fn refused_unrun(
        &self,
        planned: &HostResult,
        scope: &Scope,
    ) -> Option<ActionOutput> {
        let tack_report::plan_mark::PlanOutcome::WouldRun { .. } =
            tack_report::plan_mark::outcome(planned)
        else {
            return None;
        };
        if let Some(refused) = self.action_plugin_refusal() {
            return Some(refused);
        }
        if !self.action.touches_host() {
            return None;
        }
        let host = planned.host.as_str();
        self.task_links().link_target(host, scope).err().map(actions::errored)
    }

    /// The task's Python action plugin, refused by name (tack does not run them yet).
    pub(super) fn action_plugin_refusal(&self) -> Option<ActionOutput> {
        let task = self.reading.ctx.task;
        let plugin = task.action_plugin.as_ref()?;
        let cause = Diagnostic::at(
            format!(
                "tack does not run action plugins written in Python yet: '{}' has one ({})",
                task.action,
                plugin.display()
            ),
            task.action_origin.clone(),
        );
        Some(actions::errored(Diagnostic::caused_by("Task failed.", self.reading.origin(), cause)))
    }
}
