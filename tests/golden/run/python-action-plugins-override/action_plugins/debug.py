from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """Takes the place of ansible's own debug for the short name."""

    def run(self, tmp=None, task_vars=None):
        return {'msg': 'the plugin beside the playbook: %s' % self._task.args.get('msg')}
