//! `loop_control.label` of an item, rendered once the item ran (ansible 2.21's order).

use tack_diag::Diagnostic;
use tack_report::result::HostResult;
use tack_template::Scope;
use tack_yaml::Node;

use super::TaskRun;

/// Where a loop item's label is rendered: the item and its scope (which carries the earlier
/// items' results when the task reads `_task`).
pub(super) struct LabelAt<'a> {
    pub(super) item: &'a Node,
    pub(super) scope: &'a Scope,
}

impl TaskRun<'_> {
    /// `loop_control.label` for an item, rendered as ansible 2.21 renders it once the item
    /// ran: the task's `register` name and `_task` are the item's result (`_task.loop_result`
    /// the loop's so far). A label that does not render is a warning on the item's result
    /// (`Failed to template loop_control label: ...`), and the item shows as itself.
    pub(super) fn item_label(
        &self,
        label: &Node,
        at: &LabelAt<'_>,
        result: &mut HostResult,
    ) -> Node {
        let scope = self.reading.with_registered(at.scope, &result.data);
        match self.reading.templar.render(label, &scope) {
            Ok(rendered) => rendered.value,
            Err(e) => {
                let message = format!("Failed to template loop_control label: {}", e.message);
                let origin = e.origin.or_else(|| label.origin.clone());
                crate::task::judge::append_warnings(
                    &mut result.data,
                    [message.clone()].into_iter(),
                );
                result.warning_blocks.insert(message.clone(), Diagnostic::at(message, origin));
                at.item.clone()
            }
        }
    }
}
