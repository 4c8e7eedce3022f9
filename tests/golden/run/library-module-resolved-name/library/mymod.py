#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
m = AnsibleModule(argument_spec=dict(a=dict()))
m.exit_json(seen=m.params)
