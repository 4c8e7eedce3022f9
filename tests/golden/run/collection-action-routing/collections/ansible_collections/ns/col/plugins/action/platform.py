from __future__ import annotations

from ansible.plugins.action.normal import ActionModule as NormalAction


class ActionModule(NormalAction):
    """Runs the task's module as ansible's normal action does, and says it was here."""

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result['action_plugin'] = 'platform'
        return result
