from __future__ import annotations

from ansible.plugins.lookup import LookupBase
from ansible.template import trust_as_template


class LookupModule(LookupBase):
    """Evaluates each term as an expression over the task's variables."""

    def run(self, terms, variables=None, **kwargs):
        templar = self._templar.copy_with_new_env(available_variables=variables.copy())
        return [templar.evaluate_expression(trust_as_template(term)) for term in terms]
