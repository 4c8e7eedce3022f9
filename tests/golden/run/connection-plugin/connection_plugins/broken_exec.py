from __future__ import annotations

from ansible.errors import AnsibleConnectionFailure
from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):
    def exec_command(self, cmd, in_data=None, sudoable=True):
        raise AnsibleConnectionFailure('the link went down')
