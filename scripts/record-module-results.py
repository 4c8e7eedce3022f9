#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's own modules return for each native-module case.

usage: scripts/record-module-results.py [MODULE ...]

Cases are written by hand in crates/tack-agent/tests/modules/cases/MODULE.yml:

    cases:
      - name: file_touch_new          # unique over all files; names the scratch dir
        module: file                  # optional, default: the file's name
        args: {path: "%D/f", state: touch}
        check: false                  # optional: run in check mode
        diff: false                   # optional: ask for the diff
        setup:                        # optional: what the scratch dir holds before the run
          - {path: f, content: "x\\n", mode: "0644"}
          - {path: d, dir: true, mode: "0755"}
          - {path: l, link: f}
          - {path: h, hard: f}
          - {path: b, content_base64: "//4="}   # bytes that are not UTF-8
          - {path: old, content: "x", mtime: 1000000000}   # atime and mtime set

`%D` in any string argument stands for the case's scratch directory, the fixed path
/tmp/tack-modules/CASE (made anew for each run), which is also the module's working
directory. Each case runs ansible's module through ansible's own module loader (what the
AnsiballZ payload calls on a host), with the internal arguments the
controller's action passes (`_ansible_module_name` as that action names the module,
`_ansible_check_mode`, `_ansible_diff`): what is recorded is exactly the module's printed
result, before the controller adds its own keys. `shell` runs as its action does: the
`command` module with `_uses_shell`.

The `argspec` family (cases/argspec.yml) checks argument handling alone: each case gives
`spec` (an `argument_spec` as a module writes it, plus optional `mutually_exclusive`,
`required_one_of`, `required_together`, `required_if` lists) and `args`; a probe module built
on ansible's own `AnsibleModule` with that spec returns `{"params": module.params}` (no_log
values masked as ansible masks every result), or ansible's failure.

The outcome is written to crates/tack-agent/tests/modules/MODULE.json: per case, the case,
`result` (the module's JSON result) and `files` (the scratch dir after the run: per relative
path its type, mode, and content sha1 or link target). Only this script writes those files.
Runs use PYTHONHASHSEED=0 (ansible lists its boolean spellings in set order), TZ=UTC,
LANG=C.UTF-8 and HOME=/nonexistent-home/tack; the Rust test sets the same HOME.
"""

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

try:
    import yaml
except ImportError:  # re-run with the reference's python, which has PyYAML
    _ref_python = os.path.join(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"), "bin", "python")
    os.execv(_ref_python, [_ref_python, __file__, *sys.argv[1:]])

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "crates" / "tack-agent" / "tests" / "modules"
SCRATCH = Path("/tmp/tack-modules")
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))
PYTHON = REF / "bin" / "python"
# A fixed home, so that `~` and $HOME expand alike in the recording and in the Rust test.
HOME = "/nonexistent-home/tack"

# The name each controller action gives the module it runs (shown in ansible's
# unsupported-parameters message).
ACTION_NAMES = {"command": "ansible.legacy.command", "shell": "ansible.legacy.command",
                "copy": "ansible.legacy.copy"}


def subst(value, d):
    if isinstance(value, str):
        return value.replace("%D", d)
    if isinstance(value, list):
        return [subst(v, d) for v in value]
    if isinstance(value, dict):
        return {k: subst(v, d) for k, v in value.items()}
    return value


def make_setup(scratch, setup):
    for entry in setup or []:
        p = scratch / entry["path"]
        p.parent.mkdir(parents=True, exist_ok=True)
        if entry.get("dir"):
            p.mkdir(exist_ok=True)
        elif "link" in entry:
            os.symlink(entry["link"], p)
        elif "hard" in entry:
            os.link(scratch / entry["hard"], p)
        elif "content_base64" in entry:
            p.write_bytes(base64.b64decode(entry["content_base64"]))
        else:
            p.write_bytes(entry.get("content", "").encode())
        if "mode" in entry and "link" not in entry:
            os.chmod(p, int(entry["mode"], 8))
        if "mtime" in entry:
            os.utime(p, (entry["mtime"], entry["mtime"]), follow_symlinks=False)


def file_state(scratch):
    state = {}
    for dirpath, dirnames, filenames in os.walk(scratch):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = str(p.relative_to(scratch))
            st = os.lstat(p)
            entry = {"mode": "%04o" % stat.S_IMODE(st.st_mode)}
            if stat.S_ISLNK(st.st_mode):
                entry = {"type": "link", "target": os.readlink(p)}
            elif stat.S_ISDIR(st.st_mode):
                entry["type"] = "directory"
            else:
                entry["type"] = "file"
                entry["sha1"] = hashlib.sha1(p.read_bytes()).hexdigest()
                entry["nlink"] = st.st_nlink
            state[rel] = entry
    return dict(sorted(state.items()))


# How AnsiballZ starts a module on the host: ansible's own loader, which also turns an
# exception escaping the module into the failure result the controller receives.
LOADER = """
import sys
from ansible.module_utils._internal._ansiballz import _loader
with open(sys.argv[2], "rb") as f:
    params = f.read()
_loader.run_module(json_params=params, profile="legacy", module_fqn=sys.argv[1],
                   modlib_path="/nonexistent", extensions={})
"""

PROBE = """
import json, os
from ansible.module_utils.basic import AnsibleModule
spec = json.loads(os.environ["TACK_ARGSPEC"])
checks = {k: spec.pop(k) for k in ("mutually_exclusive", "required_one_of", "required_together", "required_if") if k in spec}
module = AnsibleModule(argument_spec=spec["options"], supports_check_mode=True, **checks)
module.exit_json(params=module.params)
"""


def run_probe(case):
    SCRATCH.mkdir(parents=True, exist_ok=True)
    probe = SCRATCH / ".argspec_probe.py"
    probe.write_text(PROBE)
    args = dict(case.get("args") or {})
    args["_ansible_module_name"] = "probe"
    args_file = SCRATCH / f".{case['name']}.args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "TZ": "UTC", "LANG": "C.UTF-8",
           "HOME": HOME, "TACK_ARGSPEC": json.dumps(case["spec"]),
           "PYTHONPATH": str(REF / "lib" / "python3.13" / "site-packages")}
    proc = subprocess.run([str(PYTHON), str(probe), str(args_file)], env=env, capture_output=True, text=True)
    args_file.unlink()
    probe.unlink()
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise SystemExit(f"{case['name']}: no result\n{proc.stdout}\n{proc.stderr}")
    return {"case": case, "result": json.loads(lines[-1])}


def run_case(module, case):
    if module == "argspec":
        return run_probe(case)
    name = case["name"]
    scratch = SCRATCH / name
    if scratch.exists() or scratch.is_symlink():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    os.chmod(scratch, 0o755)
    make_setup(scratch, case.get("setup"))
    module = case.get("module", module)
    args = subst(dict(case.get("args") or {}), str(scratch))
    real = "command" if module == "shell" else module
    if module == "shell":
        args["_uses_shell"] = True
    args["_ansible_module_name"] = ACTION_NAMES.get(module, module)
    args["_ansible_check_mode"] = bool(case.get("check"))
    args["_ansible_diff"] = bool(case.get("diff"))
    args_file = SCRATCH / f".{name}.args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONHASHSEED": "0", "TZ": "UTC",
           "LANG": "C.UTF-8", "HOME": HOME}
    proc = subprocess.run([str(PYTHON), "-c", LOADER, f"ansible.modules.{real}", str(args_file)],
                          cwd=scratch, env=env, capture_output=True, text=True, input=case.get("stdin", ""))
    args_file.unlink()
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise SystemExit(f"{name}: no result\n{proc.stdout}\n{proc.stderr}")
    result = json.loads(lines[-1])
    files = file_state(scratch)
    shutil.rmtree(scratch)
    return {"case": case, "result": result, "files": files}


def main():
    # The scratch paths are fixed, so runs (this script, or tests/modules.rs in any worktree)
    # take turns on one lock.
    import fcntl
    lock = open("/tmp/tack-modules.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    wanted = set(sys.argv[1:])
    for path in sorted((CASES / "cases").glob("*.yml")):
        module = path.stem
        if wanted and module not in wanted:
            continue
        cases = yaml.safe_load(path.read_text())["cases"]
        out = [run_case(module, case) for case in cases]
        (CASES / f"{module}.json").write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
        print(f"{module}: {len(out)} cases")
    try:
        SCRATCH.rmdir()
    except OSError:
        pass


if __name__ == "__main__":
    main()
