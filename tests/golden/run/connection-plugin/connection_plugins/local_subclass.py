# ansible's local connection under another name: modules run through a plugin's own
# exec_command and put_file.
from __future__ import annotations

from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):
    transport = 'local_subclass'
