from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """On the configured action plugin path: runs the ping module itself."""

    def run(self, tmp=None, task_vars=None):
        result = self._execute_module(module_name='ansible.builtin.ping', module_args=dict(data='via configured'), task_vars=task_vars)
        result['from'] = 'configured'
        return result
