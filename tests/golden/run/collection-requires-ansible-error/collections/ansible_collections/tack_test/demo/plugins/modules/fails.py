#!/usr/bin/python
from __future__ import annotations
from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(code=dict(type='int', default=3)))
    module.fail_json(msg='failed with %d' % module.params['code'])


if __name__ == '__main__':
    main()
