from __future__ import annotations

DOCUMENTATION = """
    name: events
    short_description: Notes each result event with the task's connection
    description: Notes each result event with the task's connection.
    type: aggregate
"""

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'events'
    CALLBACK_NEEDS_ENABLED = True

    def _note(self, event, result):
        self._display.display('EVENT %s %s on %s via %s' % (
            event, result.task.name, result.host.get_name(), result.task.connection))

    def v2_runner_on_ok(self, result):
        self._note('ok', result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._note('failed', result)

    def v2_runner_item_on_ok(self, result):
        self._note('item_ok', result)

    def v2_runner_on_async_ok(self, result):
        self._note('async_ok', result)

    def v2_runner_on_async_failed(self, result):
        self._note('async_failed', result)
