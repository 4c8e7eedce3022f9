from __future__ import annotations

DOCUMENTATION = """
    name: names
    short_description: Prints the name of every event it hears
    description: Prints the name of every event it hears.
    type: aggregate
"""

import functools

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'names'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in (cb for cb in dir(self) if cb.startswith('v2_') and cb != 'v2_on_any'):
            setattr(self, name, functools.partial(self._named, name))

    def _named(self, name, *args, **kwargs):
        self._display.display('EVENT %s' % name)
