from __future__ import annotations

DOCUMENTATION = r'''
name: fleet
short_description: a small fleet from a count
options:
  plugin:
    description: the name of this plugin
    required: true
    choices: ['fleet']
  count:
    description: how many hosts
    type: int
    default: 2
'''

from ansible.plugins.inventory import BaseInventoryPlugin


class InventoryModule(BaseInventoryPlugin):
    NAME = 'fleet'

    def verify_file(self, path):
        return super().verify_file(path) and path.endswith('.fleet.yml')

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        inventory.add_group('fleet')
        for n in range(self.get_option('count')):
            name = 'node%d' % n
            inventory.add_host(name, group='fleet')
            inventory.set_variable(name, 'index', n)
        inventory.set_variable('fleet', 'role', 'worker')
