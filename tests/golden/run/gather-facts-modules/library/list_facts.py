#!/usr/bin/python
from __future__ import annotations
from ansible.module_utils.basic import AnsibleModule
m = AnsibleModule(argument_spec=dict())
m.warn("list facts warns")
m.exit_json(ansible_facts={"custom_list": [1, 2], "custom_map": {"a": 1}})
