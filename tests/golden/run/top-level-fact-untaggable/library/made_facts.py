#!/usr/bin/python
# Facts of each kind, for reading them as top-level variables.
from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={})
    module.exit_json(changed=False, ansible_facts={
        "made_null": None,
        "made_bool": True,
        "made_text": "text",
        "made_list": [1],
    })


main()
