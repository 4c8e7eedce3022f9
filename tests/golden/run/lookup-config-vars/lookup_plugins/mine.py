from __future__ import annotations

DOCUMENTATION = """
    name: mine
    short_description: returns its terms
    description: returns its terms
    options:
      _terms:
        description: terms
      needed:
        description: a required option
        type: string
        required: True
      level:
        description: an option a variable sets
        type: int
        default: 3
        vars:
          - name: mine_level
"""

from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        return terms
