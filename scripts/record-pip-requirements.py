#!/usr/bin/env python3
"""Record how ansible-core 2.21.5's pip module reads package names.

usage: scripts/record-pip-requirements.py

Cases are written by hand in crates/tack-agent/tests/pip/requirements.yml; for each, ansible's
own `_recover_package_name` and `Package` (ansible/modules/pip.py, imported from the reference
install) give the package list: per package `package_name`, `str(package)`,
`has_version_specifier`, `has_requirement` and `is_satisfied_by(v)` for every `installed`
version. The outcome goes to crates/tack-agent/tests/pip/requirements.json (only this script
writes it); `pip_req.rs`'s unit test compares tack's reading with it.
"""

import json
import os
import sys
from pathlib import Path

try:
    import yaml
    from ansible.modules import pip as pipmod
except ImportError:  # re-run with the reference's python, which has ansible and PyYAML
    _ref_python = os.path.join(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"), "bin", "python")
    os.execv(_ref_python, [_ref_python, __file__, *sys.argv[1:]])

ROOT = Path(__file__).resolve().parent.parent
DIR = ROOT / "crates" / "tack-agent" / "tests" / "pip"


def main():
    cases = yaml.safe_load((DIR / "requirements.yml").read_text())["cases"]
    out = []
    for case in cases:
        names = pipmod._recover_package_name(case["names"])
        packages = [pipmod.Package(n) for n in names]
        if case.get("version") is not None:
            packages[0] = pipmod.Package(str(packages[0]), case["version"])
        got = []
        for p in packages:
            got.append({
                "package_name": p.package_name,
                "str": str(p),
                "has_version_specifier": p.has_version_specifier,
                "has_requirement": p.has_requirement,
                "satisfied": {v: p.is_satisfied_by(v) for v in case.get("installed", [])},
            })
        out.append({"case": case, "recovered": names, "packages": got})
    (DIR / "requirements.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"pip requirements: {len(out)} cases")


if __name__ == "__main__":
    main()
