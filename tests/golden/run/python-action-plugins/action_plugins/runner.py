from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()


class ActionModule(ActionBase):
    _VALID_ARGS = frozenset(('word', 'path'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        word = self._task.args.get('word', 'none')
        pong = self._execute_module(module_name='ansible.legacy.ping', module_args=dict(data=word), task_vars=task_vars)
        stat = self._execute_module(module_name='stat', module_args=dict(path=self._task.args['path']), task_vars=task_vars)
        low = self._low_level_execute_command('echo low-%s' % word)
        greeting = self._templar.template('{{ greeting }} from {{ inventory_hostname }}')
        display.warning('runner says %s' % word)
        display.deprecated('the runner is old', version='9.99')
        result.update(
            pong=pong['ping'],
            exists=stat['stat']['exists'],
            low=low['stdout'].strip(),
            rc=low['rc'],
            greeting=greeting,
            check=self._task.check_mode,
            changed=True,
        )
        return result
