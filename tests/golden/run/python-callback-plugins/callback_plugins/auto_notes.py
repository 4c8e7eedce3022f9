from __future__ import annotations

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    """Loads without being asked (it does not say it needs enabling)."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'notification'
    CALLBACK_NAME = 'auto_notes'

    def v2_playbook_on_start(self, playbook):
        self._display.display('AUTO: playbook %s' % playbook._file_name.rsplit('/', 1)[-1])

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._display.display('AUTO: task %s (%s)' % (task.get_name(), task.action))

    def v2_runner_on_ok(self, result):
        self._display.display('AUTO: ok %s changed=%s' % (result.host.get_name(), result.is_changed()))

    def v2_playbook_on_stats(self, stats):
        for host in sorted(stats.processed):
            self._display.display('AUTO: %s %s' % (host, stats.summarize(host)))
