#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(
        word=dict(type='str', required=True),
        secret=dict(type='str', no_log=True),
        count=dict(type='int', default=3),
    ))
    module.exit_json(changed=False, said=module.params['word'])


if __name__ == '__main__':
    main()
