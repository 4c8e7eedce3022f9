#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's `validate_argument_spec` action makes of each case.

usage: scripts/record-argspec.py

Cases are written by hand in crates/tack-actions/tests/argspec/cases.yml:

    cases:
      - name: required_missing
        spec: {a: {type: str, required: true}}     # the argument_spec (options)
        params: {}                                 # provided_arguments
        vars: {a: x}                               # task variables (optional, plain values)

All cases run as tasks of one playbook under ansible-playbook itself (so values are loaded,
tagged and templated as the action sees them in a real run): each task calls
`ansible.builtin.validate_argument_spec` with the case's spec and arguments, its `vars` as
task variables, registers the result and ignores the failure. The outcomes are written to
crates/tack-actions/tests/argspec/cases.json: the case itself, then `errors` (the result's
`argument_errors`, empty when validation passed) and `msg`, or `raised` (the message of an
error the action raised). Only this script writes that file.

Runs use PYTHONHASHSEED=0: ansible lists its boolean spellings in a frozenset's order, which
is fixed only then. The reference is $ANSIBLE_REF (default /opt/ansible-ref).
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "crates" / "tack-actions" / "tests" / "argspec"
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))


def load_cases():
    sys.path.insert(0, str(REF / "lib" / "python3.13" / "site-packages"))
    import yaml

    data = yaml.safe_load((CASES / "cases.yml").read_text())
    cases = data["cases"]
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        raise SystemExit("case names must be unique")
    return cases


def playbook(cases, out: Path) -> list:
    tasks = []
    for n, case in enumerate(cases):
        task = {
            "name": f"case {case['name']}",
            "ansible.builtin.validate_argument_spec": {
                "argument_spec": case["spec"],
                "provided_arguments": case.get("params", {}),
            },
            "register": f"r_{n}",
            "ignore_errors": True,
        }
        if case.get("vars"):
            task["vars"] = case["vars"]
        tasks.append(task)
    collected = ", ".join(f"'{n}': r_{n}" for n in range(len(cases)))
    tasks.append(
        {
            "name": "write the outcomes",
            "ansible.builtin.copy": {
                "content": "{{ {" + collected + "} | to_json }}",
                "dest": str(out),
            },
        }
    )
    return [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]


def main() -> None:
    cases = load_cases()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out = tmp / "outcomes.json"
        (tmp / "site.yml").write_text(json.dumps(playbook(cases, out), indent=1))
        (tmp / "inv").write_text(
            f"localhost ansible_connection=local ansible_python_interpreter={REF}/bin/python\n"
        )
        env = {
            "PATH": f"{REF}/bin:/usr/bin:/bin",
            "HOME": str(tmp),
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "ANSIBLE_NOCOLOR": "1",
        }
        proc = subprocess.run(
            [str(REF / "bin" / "ansible-playbook"), "-i", "inv", "site.yml"],
            cwd=tmp, env=env, capture_output=True, text=True,
        )
        if not out.exists():
            sys.stderr.write(proc.stdout + proc.stderr)
            raise SystemExit("the recording playbook did not finish")
        outcomes = json.loads(out.read_text())
    recorded = []
    for n, case in enumerate(cases):
        result = outcomes[str(n)]
        entry = {
            "name": case["name"],
            "spec": case["spec"],
            "params": case.get("params", {}),
            "vars": case.get("vars", {}),
        }
        if "argument_errors" in result:
            entry["errors"] = result["argument_errors"]
            entry["msg"] = result["msg"]
        elif result.get("failed"):
            entry["raised"] = result.get("msg")
        else:
            entry["errors"] = []
            entry["msg"] = result["msg"]
        recorded.append(entry)
    (CASES / "cases.json").write_text(json.dumps({"cases": recorded}, indent=1) + "\n")
    print(f"{len(recorded)} cases recorded")


if __name__ == "__main__":
    main()
