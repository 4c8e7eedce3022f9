#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

m = AnsibleModule(argument_spec=dict(when=dict(default='version')))
m.warn("old ways are going")
if m.params['when'] == 'date':
    m.deprecate("the date form is going", date="2030-01-01")
else:
    m.deprecate("the version form is going", version="9.9")
m.exit_json()
