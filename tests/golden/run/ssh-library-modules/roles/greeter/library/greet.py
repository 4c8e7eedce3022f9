#!/usr/bin/python
#<<INCLUDE_ANSIBLE_MODULE_COMMON>>
from ansible.module_utils.greeting import phrase


def main():
    m = AnsibleModule(
        argument_spec=dict(
            who=dict(type='str', required=True),
            token=dict(type='str', no_log=True),
            fail=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    if m.params['fail']:
        m.fail_json(msg='cannot greet %s' % m.params['who'])
    m.exit_json(changed=True, msg=phrase(m.params['who']), token_given=m.params['token'] is not None,
                check=m.check_mode)


main()
