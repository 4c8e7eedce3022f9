#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's templar makes of each filter unit case.

usage: scripts/record-filter-units.py [FAMILY ...]

Cases are written by hand in crates/tack-template/tests/filters/cases/FAMILY.yml:

    vars:            # variables every case of the file sees
      xs: [3, 1, 2]
    cases:
      - name: sort_plain
        expr: xs | sort          # a Jinja2 expression, templated as "{{ expr }}"
      - name: sort_reverse
        expr: xs | sort(reverse=true)
        vars: {more: 1}          # extra variables for this case only

Each case is rendered by ansible's own Templar (as a task argument is), and the outcome is
written to crates/tack-template/tests/filters/FAMILY.json: the case, the variables it saw, and
either `result` ({"type": the Python type name ansible reports (`type_debug`'s), "value": the
value as JSON, tuples as lists}) or
`error` (ansible's message). Only this script writes those files.

Cases run with PYTHONHASHSEED=0 (so sets of strings iterate in a reproducible order), TZ=UTC, HOME=/nonexistent-home/tack and the fixture directory
crates/tack-template/tests/filters/fixture as the working directory; the Rust test sets the same.
The reference is $ANSIBLE_REF (default /opt/ansible-ref); the script re-runs itself with its
python when ansible is not importable.
"""

import datetime
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "crates" / "tack-template" / "tests" / "filters"
FIXTURE = UNITS / "fixture"
HOME = "/nonexistent-home/tack"

from reflib import run_under_reference  # noqa: E402

run_under_reference(__file__, hash_seed_zero=True)

import yaml  # noqa: E402

from ansible.errors import AnsibleError  # noqa: E402
from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.module_utils.datatag import native_type_name  # noqa: E402
from ansible.template import Templar, trust_as_template  # noqa: E402


def plain(value):
    """The value as JSON data: tuples as lists, dates as their isoformat with a marker."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (undecodable bytes kept by ansible) have no JSON form.
            return {"__repr__": repr(value)}
        return value
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: plain(v) for k, v in value.items()}
    if isinstance(value, (datetime.datetime, datetime.date)):
        return {"__repr__": repr(value)}
    return {"__repr__": repr(value)}


def outcome(templar, case):
    try:
        result = templar.template(trust_as_template("{{ " + case["expr"] + " }}"))
    except AnsibleError as ex:
        return {"error": ex.message}
    return {"result": {"type": native_type_name(result), "value": plain(result)}}


def record(family: str) -> None:
    # ansible 2.21 does not decode backslash escapes inside Jinja string literals, so text with
    # backslashes or newlines belongs in `vars`, where YAML gives it its characters.
    spec = yaml.safe_load((UNITS / "cases" / f"{family}.yml").read_text())
    shared = spec.get("vars") or {}
    out = []
    for case in spec["cases"]:
        variables = {**shared, **(case.get("vars") or {})}
        templar = Templar(loader=DataLoader(), variables=variables)
        entry = {"name": case["name"], "expr": case["expr"], "vars": variables}
        entry.update(outcome(templar, case))
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
    os.chdir(FIXTURE)
    families = sys.argv[1:] or sorted(p.stem for p in (UNITS / "cases").glob("*.yml"))
    for family in families:
        record(family)


if __name__ == "__main__":
    main()
