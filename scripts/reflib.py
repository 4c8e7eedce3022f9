"""What the recorders that drive ansible-core's own templar share.

Each recorder runs under the reference's interpreter ($ANSIBLE_REF/bin/python, default
/opt/ansible-ref) and turns what ansible returned into JSON data the Rust tests read.
"""

import os
import sys
from pathlib import Path


def run_under_reference(script: str, hash_seed_zero: bool) -> None:
    """Re-executes `script` under the reference's Python unless already there.

    With `hash_seed_zero`, Python's string hashing is fixed too: sets then iterate in one
    reproducible order, the order tack's set filters produce.
    """
    try:
        import ansible  # noqa: F401

        have_ansible = True
    except ImportError:
        have_ansible = False
    seeded = os.environ.get("PYTHONHASHSEED") == "0"
    if have_ansible and (seeded or not hash_seed_zero):
        return
    python = sys.executable
    if not have_ansible:
        python = str(Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref")) / "bin" / "python")
    env = dict(os.environ)
    if hash_seed_zero:
        env["PYTHONHASHSEED"] = "0"
    os.execve(python, [python, script, *sys.argv[1:]], env)


def plain(value):
    """A templar result as JSON data: tuples as lists, anything else unknown by its repr."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return {"__repr__": repr(value)}
