from __future__ import annotations

from ansible.plugins.action import ActionBase


class Unpicklable:
    def __getstate__(self):
        raise Exception('no pickles here')


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        return {'obj': Unpicklable()}
