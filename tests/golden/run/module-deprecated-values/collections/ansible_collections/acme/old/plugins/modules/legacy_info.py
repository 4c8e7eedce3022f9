# A module whose result carries values it marks as going away, and deprecations of its own.
from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.datatag import deprecate_value


def main() -> None:
    module = AnsibleModule({'flavour': {'type': 'str', 'default': 'plain'}})
    module.deprecate("The plain flavour goes away.", version='3.0.0', collection_name='acme.old',
                     help_text="Ask for the spicy flavour.")
    module.deprecate("Calling without a date or version.")
    module.deprecate("Going on a date.", date='2031-05-06', collection_name='acme.old')
    old_name = deprecate_value('legacy-host-7', msg="The old_name value is deprecated.",
                               collection_name='acme.old', version='3.0.0',
                               help_text="Read new_name instead.")
    old_list = deprecate_value([1, 2, 3], msg="The old_list value is deprecated.",
                               collection_name='acme.old', version='4.0.0')
    module.exit_json(new_name='host-7', old_name=old_name, nested={'old_list': old_list, 'kept': True})


if __name__ == '__main__':
    main()
