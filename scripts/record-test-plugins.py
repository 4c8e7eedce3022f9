#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's templar makes of each test-plugin case (`x is NAME(...)`).

usage: scripts/record-test-plugins.py [FAMILY ...]

Cases are written by hand in crates/tack-template/tests/test_plugins/cases/FAMILY.yml, in the
shape of the filter unit cases (scripts/record-filter-units.py):

    vars:                     # variables every case of the file sees
      s: abc
    cases:
      - name: string_str
        expr: s is string     # a Jinja2 expression, templated as "{{ expr }}"
        vars: {more: 1}       # extra variables for this case only

The file is loaded with ansible's DataLoader (so `!vault` values are ansible's encrypted
strings; the vault password is `secret-pw`), and each case is rendered by ansible's Templar as a
task argument is. The outcome goes to crates/tack-template/tests/test_plugins/FAMILY.json:
the case's name and expression, and either `result` ({"type": the Python type name, "value":
the value as JSON}) or `error` (ansible's message), plus `warnings` (the texts of
`Display.warning`/`Display.deprecated` calls the case made) when there were any. Only this
script writes those files.

Cases run with PYTHONHASHSEED=0, TZ=UTC, HOME=/nonexistent-home/tack and the fixture directory
crates/tack-template/tests/test_plugins/fixture as the working directory; the symlinks the path
tests need are (re)created there first (the Rust test does the same). The reference is
$ANSIBLE_REF (default /opt/ansible-ref); the script re-runs itself with its python when ansible
is not importable.
"""

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "crates" / "tack-template" / "tests" / "test_plugins"
FIXTURE = UNITS / "fixture"
HOME = "/nonexistent-home/tack"
PASSWORD = b"secret-pw"

# name -> target, relative to the fixture directory.
SYMLINKS = {
    "link-to-file": "plain.txt",
    "link-to-dir": "sub",
    "broken-link": "no-such-target",
}

from reflib import plain, run_under_reference  # noqa: E402

run_under_reference(__file__, hash_seed_zero=True)

from ansible.errors import AnsibleError  # noqa: E402
from ansible.module_utils.datatag import native_type_name  # noqa: E402
from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.parsing.vault import VaultSecret, VaultSecretsContext  # noqa: E402
from ansible.template import Templar, trust_as_template  # noqa: E402
from ansible.utils.display import Display  # noqa: E402

WARNINGS = []


def capture_warnings():
    """Collect what the tests tell the user instead of printing it."""

    def warning(self, msg, *args, **kwargs):
        WARNINGS.append(str(msg))

    def deprecated(self, msg, *args, **kwargs):
        WARNINGS.append(str(msg))

    Display.warning = warning
    Display.deprecated = deprecated


def make_symlinks():
    for name, target in SYMLINKS.items():
        link = FIXTURE / name
        if link.is_symlink() and os.readlink(link) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(target, link)


def outcome(templar, expr):
    WARNINGS.clear()
    try:
        result = templar.template(trust_as_template("{{ " + expr + " }}"))
        out = {"result": {"type": native_type_name(result), "value": plain(result)}}
    except AnsibleError as ex:
        out = {"error": ex.message}
    if WARNINGS:
        out["warnings"] = list(WARNINGS)
    return out


def record(family: str) -> None:
    loader = DataLoader()
    loader.set_vault_secrets([("default", VaultSecret(PASSWORD))])
    spec = loader.load_from_file(str(UNITS / "cases" / f"{family}.yml"), cache="none")
    shared = spec.get("vars") or {}
    out = []
    for case in spec["cases"]:
        variables = {**shared, **(case.get("vars") or {})}
        templar = Templar(loader=loader, variables=variables)
        entry = {"name": str(case["name"]), "expr": str(case["expr"])}
        entry.update(outcome(templar, str(case["expr"])))
        out.append(entry)
    names = [c["name"] for c in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        sys.exit(f"{family}: duplicate case names {sorted(dupes)}")
    (UNITS / f"{family}.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"{family}: {len(out)} cases")


def main() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ["HOME"] = HOME
    capture_warnings()
    VaultSecretsContext.initialize(VaultSecretsContext([("default", VaultSecret(PASSWORD))]))
    make_symlinks()
    os.chdir(FIXTURE)
    families = sys.argv[1:] or sorted(p.stem for p in (UNITS / "cases").glob("*.yml"))
    for family in families:
        record(family)


if __name__ == "__main__":
    main()
