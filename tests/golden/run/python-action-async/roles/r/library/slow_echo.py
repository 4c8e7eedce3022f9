#!/usr/bin/python
# Waits a moment, then says what it was told.
from __future__ import annotations

import time

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(text=dict(type='str', required=True),
                                              wait=dict(type='int', default=0)))
    time.sleep(module.params['wait'])
    module.exit_json(changed=True, said=module.params['text'])


main()
