# Replaces ansible's `normal` action for this play: every module without an action plugin of
# its own runs through here, and says so in its result.
from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    _supports_async = True
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result.update(self._execute_module(task_vars=task_vars, wrap_async=self._task.async_val))
        if not self._task.async_val:
            result["seen_by"] = "the play's normal action"
        return result
