#!/usr/bin/python
# A module that read bytes as text with surrogateescape and returns them.
from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec={})
module.exit_json(changed=False, msg=b"caf\xe9".decode("utf-8", "surrogateescape"))
