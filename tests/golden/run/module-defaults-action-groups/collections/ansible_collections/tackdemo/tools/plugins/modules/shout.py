#!/usr/bin/python
# Gives back the options it was called with, so a playbook can see which defaults reached it.
from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(
            greeting=dict(type='str'),
            target=dict(type='str'),
            loud=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    module.exit_json(changed=False, seen=module.params)


if __name__ == '__main__':
    main()
