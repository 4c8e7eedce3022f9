#!/usr/bin/python
# A module beside the playbook that has a builtin's name: it wins over ansible's own.
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.playbook_util import shout

m = AnsibleModule(argument_spec=dict(data=dict(default='pong')))
m.exit_json(ping=shout(m.params['data']), source='playbook library')
