#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
def main():
    m = AnsibleModule({'facts': {'type': 'dict'}})
    m.exit_json(ansible_facts=m.params['facts'])
if __name__ == '__main__':
    main()
