#!/usr/bin/env python3
"""Record how ansible-core's templar renders the engine cases.

Reads crates/tack-template/tests/engine/cases.yml and writes expected.json next to it: for each
case, {"type": <Python type name>, "json": <json.dumps of the value>} or {"error": <message>}. Run with
ansible-core's Python:

    $ANSIBLE_REF/bin/python scripts/record-template-engine.py

The cases file is loaded once per case with ansible's DataLoader as a trusted vars file (as a
playbook's vars files are), so that each case starts from fresh variables; its directory is
written as <CASES> in messages, so that origins compare on any machine.
"""

import json
import os
import sys

from ansible.parsing.dataloader import DataLoader
from ansible.parsing.vault import VaultSecret, VaultSecretsContext
from ansible.template import Templar, trust_as_template
from ansible.utils.display import Display

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, '..', 'crates', 'tack-template', 'tests', 'engine')
CASES = os.path.normpath(CASES)
CASES_FILE = os.path.join(CASES, 'cases.yml')
PASSWORD = b'secret-pw'


def type_name(value):
    """The plain Python type name (ansible's tagged subclasses name their base type)."""
    for base in type(value).__mro__:
        if base.__module__ == 'builtins' and base is not object:
            return base.__name__
    return type(value).__name__


def plain(value):
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, (str, int, float, bool)) else k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def main():
    Display().deprecation_warnings = False
    # ansible-playbook sets this up at startup; `!vault` values are decrypted through it.
    VaultSecretsContext.initialize(VaultSecretsContext([('default', VaultSecret(PASSWORD))]))
    results = {}
    names = None
    while True:
        loader = DataLoader()
        loader.set_vault_secrets([('default', VaultSecret(PASSWORD))])
        doc = loader.load_from_file(CASES_FILE, cache='none', trusted_as_template=True)
        if names is None:
            names = [c['name'] for c in doc['cases']]
            pending = list(names)
        if not pending:
            break
        name = pending.pop(0)
        case = next(c for c in doc['cases'] if c['name'] == name)
        variables = dict(doc['defaults'])
        variables.update(case.get('vars') or {})
        templar = Templar(loader=loader, variables=variables)
        template = case['template']
        try:
            if case.get('mode') == 'conditional':
                value = templar.evaluate_conditional(template)
            else:
                value = templar.template(template)
            results[name] = {'type': type_name(value), 'json': json.dumps(plain(value))}
        except Exception as ex:  # the message is the expected result
            results[name] = {'error': str(ex).replace(CASES, '<CASES>')}
    out = os.path.join(CASES, 'expected.json')
    with open(out, 'w') as f:
        json.dump(results, f, indent=1, sort_keys=False, ensure_ascii=True, default=repr)
        f.write('\n')
    print(f'{len(results)} cases recorded in {out}', file=sys.stderr)


if __name__ == '__main__':
    main()
