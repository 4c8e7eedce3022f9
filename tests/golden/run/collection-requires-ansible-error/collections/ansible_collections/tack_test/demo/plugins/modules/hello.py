#!/usr/bin/python
from __future__ import annotations

DOCUMENTATION = r'''
module: hello
short_description: says hello
options:
  name:
    type: str
    required: true
  secret:
    type: str
    no_log: true
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.tack_test.demo.plugins.module_utils.greeting import greeting


def main():
    module = AnsibleModule(
        argument_spec=dict(name=dict(type='str', required=True), secret=dict(type='str', no_log=True)),
        supports_check_mode=True,
    )
    changed = not module.check_mode
    module.exit_json(changed=changed, msg=greeting(module.params['name']), checked=module.check_mode)


if __name__ == '__main__':
    main()
