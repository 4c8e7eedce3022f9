from __future__ import annotations

DOCUMENTATION = '''
    name: asked
    type: notification
    short_description: runs only when enabled
    description: prints what failed, was skipped or looped
    options:
      prefix:
        description: what each line starts with
        default: 'ASKED'
        ini:
          - section: callback_asked
            key: prefix
'''

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'notification'
    CALLBACK_NAME = 'asked'
    CALLBACK_NEEDS_ENABLED = True

    def _say(self, text):
        self._display.display('%s: %s' % (self.get_option('prefix'), text))

    def v2_playbook_on_play_start(self, play):
        self._say('play %s' % play.get_name())

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._say('failed %s: %s (ignored=%s)' % (result.host.get_name(), result.result.get('msg'), ignore_errors))

    def v2_runner_on_skipped(self, result):
        self._say('skipped %s' % result.task.get_name())

    def v2_runner_item_on_ok(self, result):
        self._say('item %s' % result.result.get('item'))

    def v2_playbook_on_handler_task_start(self, task):
        self._say('handler %s' % task.get_name())

    def v2_runner_on_ok(self, result):
        if result.task.no_log:
            # (sorted: ansible builds a censored result in a set's order, which varies by run)
            self._say('hidden %s' % sorted(result.result.items()))
