# A lookup rendering with its own templar, and with one it makes from the variables it was handed
from __future__ import annotations

from ansible.plugins.lookup import LookupBase
from ansible.template import trust_as_template


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        out = []
        for term in terms:
            expr = trust_as_template("{{ " + term + " }}")
            out.append(self._templar.template(expr))
            templar = self._templar.copy_with_new_env(available_variables=variables)
            out.append(templar.template(expr))
        return out
