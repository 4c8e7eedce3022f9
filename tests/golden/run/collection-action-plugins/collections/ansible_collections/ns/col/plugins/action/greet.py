from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible_collections.ns.col.plugins.module_utils.naming import shout


class ActionModule(ActionBase):
    """Runs the collection's module of its name, then adds to what it said."""

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result.update(self._execute_module(task_vars=task_vars))
        result['shouted'] = shout(result['greeting'])
        return result
