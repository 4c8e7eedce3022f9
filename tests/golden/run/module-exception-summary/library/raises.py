from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule({'how': {'type': 'str', 'default': 'raise'}})
    if module.params['how'] == 'fail':
        module.fail_json(msg='it failed', exception='a traceback the module wrote')
    raise ValueError('kaboom')


main()
