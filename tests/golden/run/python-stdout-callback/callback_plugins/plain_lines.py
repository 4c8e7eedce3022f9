from __future__ import annotations

DOCUMENTATION = '''
    name: plain_lines
    type: stdout
    short_description: one line per event
    description: one line per event, for tests
'''

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'plain_lines'

    def v2_playbook_on_play_start(self, play):
        self._display.display('play: %s' % play.get_name())

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._display.display('task: %s' % task.get_name())

    def v2_runner_on_ok(self, result):
        shown = self._dump_results(result.result) if result.task.action == 'debug' else ''
        self._display.display('  ok %s changed=%s %s' % (result.host.get_name(), result.is_changed(), shown))

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._display.display('  failed %s ignored=%s: %s' % (result.host.get_name(), ignore_errors, result.result.get('msg')))

    def v2_runner_on_skipped(self, result):
        self._display.display('  skipped %s' % result.host.get_name())

    def v2_playbook_on_stats(self, stats):
        for host in sorted(stats.processed):
            self._display.display('recap %s %s' % (host, stats.summarize(host)))
