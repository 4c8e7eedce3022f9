from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """An action with no module of its name."""

    _VALID_ARGS = frozenset(('value',))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result['doubled'] = self._task.args['value'] * 2
        return result
