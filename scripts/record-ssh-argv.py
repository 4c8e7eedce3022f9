#!/opt/ansible-ref/bin/python
"""Records what ansible-core's ssh connection does for hand-written inventory variables.

  /opt/ansible-ref/bin/python scripts/record-ssh-argv.py

- crates/tack-connect/tests/ssh/argv-cases.yaml -> argv.json: the `ssh` command line ansible
  prints at -vvv (`SSH: EXEC ...`) for its first call, split with shlex, without the host and
  the remote command. $HOME is written as %H (the only part that differs between machines).
- crates/tack-connect/tests/ssh/fault-cases.yaml -> faults.json: against a loopback sshd
  (scripts/sshd-loopback.sh, in a temporary directory), whether the host was reachable and
  ansible's `msg` when it was not. The sshd's directory is written %D and its port %P.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "crates/tack-connect/tests/ssh")
ANSIBLE = os.path.join(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"), "bin/ansible")
HOME = os.path.expanduser("~")


def subst(value, d, port):
    if isinstance(value, str):
        value = value.replace("%D", d).replace("%P", str(port))
        return int(value) if value.isdigit() else value
    return value


def run(vars_, workdir):
    inv = os.path.join(workdir, "inv.yml")
    with open(inv, "w") as f:
        yaml.safe_dump({"all": {"hosts": {"h": dict(ansible_host="127.0.0.1",
        ansible_python_interpreter=sys.executable, **vars_)}}}, f)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    out = subprocess.run([ANSIBLE, "h", "-i", inv, "-m", "ping", "-vvv"], env=env, cwd=workdir,
                         capture_output=True, text=True, timeout=120)
    return out.stdout + out.stderr


def first_exec(text):
    m = re.search(r"SSH: EXEC (.*)", text)
    if not m:
        sys.exit("no SSH: EXEC line in:\n" + text)
    return shlex.split(m.group(1))


def outcome(text):
    m = re.search(r"^h \| (UNREACHABLE!|SUCCESS|FAILED!) => ", text, re.M)
    if not m:
        sys.exit("no result line in:\n" + text)
    result, _ = json.JSONDecoder().raw_decode(text[m.end():])
    return m.group(1), result


def norm(s, pairs):
    for a, b in pairs:
        s = s.replace(a, b)
    return s


def main():
    with tempfile.TemporaryDirectory() as work:
        cases = yaml.safe_load(open(os.path.join(HERE, "argv-cases.yaml")))
        recorded = []
        for case in cases:
            argv = first_exec(run(case["vars"], work))
            host, _cmd = argv[-2:]
            assert host == "127.0.0.1", argv
            recorded.append({"case": case, "argv": [norm(a, [(HOME, "%H")]) for a in argv[:-2]]})
        with open(os.path.join(HERE, "argv.json"), "w") as f:
            json.dump(recorded, f, indent=1)
            f.write("\n")
        print(f"argv.json: {len(recorded)} cases")

        sshd = os.path.join(work, "sshd")
        port = subprocess.run([os.path.join(ROOT, "scripts/sshd-loopback.sh"), "start", sshd],
                              check=True, capture_output=True, text=True).stdout.strip()
        try:
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            os.path.join(sshd, "wrong_key")], check=True)
            cases = yaml.safe_load(open(os.path.join(HERE, "fault-cases.yaml")))
            recorded = []
            for case in cases:
                vars_ = {k: subst(v, sshd, port) for k, v in case["vars"].items()}
                # A control master per case: a shared one would answer for the next case.
                vars_["ansible_control_path_dir"] = os.path.join(work, "cp-" + case["name"])
                status, result = outcome(run(vars_, work))
                pairs = [(sshd, "%D"), (port, "%P")]
                recorded.append({"case": case, "status": status,
                                 "msg": norm(result.get("msg", ""), pairs)})
            with open(os.path.join(HERE, "faults.json"), "w") as f:
                json.dump(recorded, f, indent=1)
                f.write("\n")
            print(f"faults.json: {len(recorded)} cases")
        finally:
            subprocess.run([os.path.join(ROOT, "scripts/sshd-loopback.sh"), "stop", sshd])


main()
