from __future__ import annotations

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """Puts text in a temporary file on the host, reads it back and cleans up."""

    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        tmpdir = self._connection._shell.tmpdir
        target = self._connection._shell.join_path(tmpdir, 'staged.txt')
        self._transfer_data(target, self._task.args['text'])
        stat = self._execute_remote_stat(target, all_vars=task_vars, follow=False)
        read = self._low_level_execute_command('cat %s' % target)
        who = self._execute_module(module_name='ansible.legacy.command', module_args=dict(_raw_params='id -un'), task_vars=task_vars)
        self._remove_tmp_path(tmpdir)
        gone = self._low_level_execute_command('test -e %s' % tmpdir)
        result.update(
            size=stat['size'],
            read=read['stdout'],
            user=who['stdout'],
            tmp_removed=gone['rc'] != 0,
        )
        return result
