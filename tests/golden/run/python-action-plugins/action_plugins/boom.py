from __future__ import annotations

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        how = self._task.args.get('how')
        if how == 'fail':
            raise AnsibleActionFail('it failed on purpose')
        if how == 'ansible':
            raise AnsibleError('an ansible error')
        if how == 'dict':
            return dict(failed=True, msg='sorry, it broke', extra=1)
        raise Exception('boom')
