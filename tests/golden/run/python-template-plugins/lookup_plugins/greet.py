from __future__ import annotations
from ansible.plugins.lookup import LookupBase

class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        who = variables['who']
        if kwargs.get('fail'):
            raise RuntimeError('asked to fail')
        return ['%s says hello to %s' % (who, t) for t in terms]
