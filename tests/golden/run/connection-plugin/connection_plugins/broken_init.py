from __future__ import annotations

from ansible.errors import AnsibleError
from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        raise AnsibleError('this plugin cannot be made')
