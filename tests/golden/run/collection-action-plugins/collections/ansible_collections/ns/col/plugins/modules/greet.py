#!/usr/bin/python
from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(name=dict(type='str', required=True), loud=dict(type='bool', default=False)))
    text = 'hello %s' % module.params['name']
    module.exit_json(changed=False, greeting=text.upper() if module.params['loud'] else text)


if __name__ == '__main__':
    main()
