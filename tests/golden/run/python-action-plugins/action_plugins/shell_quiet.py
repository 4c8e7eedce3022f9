from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """Runs the shell action and drops its failure (as ansible's own test plugin does)."""

    def run(self, tmp=None, task_vars=None):
        self._task.args['_raw_params'] = self._task.args.pop('cmd')
        shell = self._shared_loader_obj.action_loader.get(
            'ansible.legacy.shell', task=self._task, connection=self._connection,
            play_context=self._play_context, loader=self._loader, templar=self._templar,
            shared_loader_obj=self._shared_loader_obj)
        result = shell.run(task_vars=task_vars)
        result.pop('failed', None)
        return result
