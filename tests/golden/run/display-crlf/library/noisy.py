#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule


def main():
    m = AnsibleModule({})
    m.warn("Hello\r\nNew\rAnsible\nWorld")
    m.exit_json()


if __name__ == '__main__':
    main()
