# A connection that runs nothing: each command comes back as its stdout, with what the
# connection knows (its become plugin, how many `counted` commands it ran) on stderr.
from __future__ import annotations

DOCUMENTATION = """
name: canned
short_description: answers every command with the command itself
description: [for tack's golden tests]
author: tack
"""

from ansible.errors import AnsibleError
from ansible.plugins.connection import ConnectionBase


class Connection(ConnectionBase):
    transport = 'canned'

    def __init__(self, *args, **kwargs):
        self._ran = 0
        super().__init__(*args, **kwargs)

    @property
    def connected(self):
        return True

    def _connect(self):
        return self

    def exec_command(self, cmd, in_data=None, sudoable=True):
        if 'become_test' in cmd:
            stderr = "become - %s" % (self.become.name if self.become else None)
        elif 'counted' in cmd:
            self._ran += 1
            stderr = "ran - %d" % self._ran
        else:
            raise AnsibleError("canned has no answer for %s" % cmd)
        return 0, cmd.encode(), stderr.encode()

    def put_file(self, in_path, out_path):
        return

    def fetch_file(self, in_path, out_path):
        return

    def close(self):
        return
