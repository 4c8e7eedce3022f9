#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
AnsibleModule(argument_spec=dict(name=dict())).exit_json(changed=False, msg='legacy hello')
