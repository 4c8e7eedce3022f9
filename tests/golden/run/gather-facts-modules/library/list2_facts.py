#!/usr/bin/python
from __future__ import annotations
from ansible.module_utils.basic import AnsibleModule
m = AnsibleModule(argument_spec=dict())
m.exit_json(ansible_facts={"custom_list": [2, 3], "custom_map": {"b": 2}})
