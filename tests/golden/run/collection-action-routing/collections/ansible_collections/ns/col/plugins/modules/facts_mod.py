#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(option=dict(type='str')), supports_check_mode=True)
    module.exit_json(changed=False, module='facts_mod', option=module.params['option'])


if __name__ == '__main__':
    main()
