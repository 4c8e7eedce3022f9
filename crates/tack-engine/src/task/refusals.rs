//! The task refusals that depend on the host a task runs on, shared by a run and a plan: a
//! link or become tack cannot open (so a plan's `would run` never promises what the run
//! refuses).

use tack_actions::{self as actions, ActionOutput};
use tack_report::result::HostResult;
use tack_template::Scope;

use super::TaskRun;

impl TaskRun<'_> {
    /// A plan's `would run` for a task the run would refuse on this host (a become method or
    /// connection tack does not run): the refusal,
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
        if !self.action.touches_host() {
            return None;
        }
        let host = planned.host.as_str();
        self.task_links().link_target(host, scope).err().map(actions::errored)
    }
}
