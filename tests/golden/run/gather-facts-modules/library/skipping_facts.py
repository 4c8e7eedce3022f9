#!/usr/bin/python
from __future__ import annotations
from ansible.module_utils.basic import AnsibleModule
m = AnsibleModule(argument_spec=dict())
m.exit_json(skipped=True, msg="nothing here", ansible_facts={})
