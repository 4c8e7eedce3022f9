#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

m = AnsibleModule(argument_spec=dict(n=dict(type='int', required=True)), supports_check_mode=True)
m.exit_json(changed=not m.check_mode, doubled=m.params['n'] * 2)
