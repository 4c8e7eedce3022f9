//! `no_log`: whether a task's result is hidden, decided per run and loop item from the task's
//! (or its block's, or play's) `no_log`. Hiding is the report's (`tack_report::no_log`).

use tack_playbook::tables::Keyword;
use tack_template::Scope;

use crate::task::TaskRun;

impl TaskRun<'_> {
    /// The task's (or its block's, or play's) `no_log`, rendered in `scope`; a value that does
    /// not render hides the result, as ansible masks output it cannot decide about.
    pub(crate) fn no_log(&self, scope: &Scope) -> bool {
        let Some(node) = self.ctx.inherited(Keyword::NoLog) else { return false };
        match self.templar.render(node, scope) {
            Ok(rendered) => rendered.value.value.is_truthy(),
            Err(_) => true,
        }
    }
}
