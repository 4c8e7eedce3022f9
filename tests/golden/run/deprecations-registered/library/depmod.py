#!/usr/bin/python
from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec={})
module.deprecate("from the module", version="9.9", collection_name="ns.col")
module.exit_json(changed=False)
