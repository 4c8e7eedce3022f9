#!/usr/bin/env python3
"""Time ansible-core's templar rendering a typical task's arguments.

usage: scripts/bench-ansible-templar.py [--iterations N] [--new-engine] [--show]

Reads crates/tack-template/benches/task_args.json (the set crates/tack-template/benches/render.rs
times through tack) and renders its `args` once per loop item, the item bound as the loop
variable, N times over; prints the median, minimum and maximum wall time of one render. With
--new-engine a fresh Templar is built for every render (as ansible builds one per task);
otherwise one is reused. --show prints what one render of each item gives, as JSON, to check
that both engines render the same values (compare with `tack eval`).

Runs under ansible-core's Python ($ANSIBLE_REF/bin/python, default /opt/ansible-ref); the
script re-runs itself with it when ansible is not importable.
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASK = ROOT / "crates" / "tack-template" / "benches" / "task_args.json"

try:
    import ansible  # noqa: F401
except ImportError:
    ref = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref")) / "bin" / "python"
    os.execv(str(ref), [str(ref), __file__, *sys.argv[1:]])

from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.template import Templar, trust_as_template  # noqa: E402


def trusted(value):
    """Strings of the task file are templates, as a playbook's are."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, list):
        return [trusted(v) for v in value]
    if isinstance(value, dict):
        return {k: trusted(v) for k, v in value.items()}
    return value


def main():
    args = sys.argv[1:]
    iterations = int(args[args.index("--iterations") + 1]) if "--iterations" in args else 200
    new_engine = "--new-engine" in args
    task = json.loads(TASK.read_text())
    base = trusted(task["vars"])
    task_args = trusted(task["args"])
    loader = DataLoader()

    def render(item, templar=None):
        variables = dict(base)
        variables[task["loop_var"]] = item
        if templar is None:
            templar = Templar(loader=loader, variables=variables)
        else:
            templar.available_variables = variables
        return templar.template(task_args)

    if "--show" in args:
        for item in task["loop_items"]:
            print(json.dumps(render(item), sort_keys=True, default=str))
        return

    shared = None if new_engine else Templar(loader=loader, variables=base)
    times = []
    items = task["loop_items"]
    for n in range(iterations):
        start = time.perf_counter()
        render(items[n % len(items)], shared)
        times.append(time.perf_counter() - start)
    ms = [t * 1000 for t in times]
    mode = "a new Templar per render" if new_engine else "one Templar reused"
    print(
        f"{mode}: median {statistics.median(ms):.2f} ms, min {min(ms):.2f} ms, "
        f"max {max(ms):.2f} ms over {iterations} renders"
    )


if __name__ == "__main__":
    main()
