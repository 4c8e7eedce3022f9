#!/usr/bin/python
# Reports the open-files soft limit its own process runs under.
import resource

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    module.exit_json(changed=False, soft=soft)


if __name__ == '__main__':
    main()
