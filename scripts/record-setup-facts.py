#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's `setup` module returns on this machine.

usage: scripts/record-setup-facts.py            # record: write the recording file
       scripts/record-setup-facts.py --print    # one live run of every case, JSON on stdout
       scripts/record-setup-facts.py --units    # record the text-parser units (units.json)

Cases are written by hand in crates/tack-agent/tests/setup/cases.yml (a name and the module's
arguments; `@FIXTURE@` in a string stands for crates/tack-agent/tests/setup/fixture, in the arguments and
in the stored results). Each case
runs ansible's setup module the way AnsiballZ does, under the interpreter tack's setup reports
(`python3` on PATH, resolved to the executable it reports), in this script's environment; the
outcome is the result the controller records for the task (success or failure; see run_case).

Recording runs every case twice and writes crates/tack-agent/tests/setup/recorded.json:
  {"python3": the interpreter used,
   "cases": {name: {"args": ..., "result": first run's result}},
   "varying": sorted list of fact paths whose value differed between the two runs}
A path is the keys from the top of the result joined with "/", list indexes as "[]"
("ansible_facts/ansible_date_time/epoch"). Only this script writes that file.

`--units` runs each input of crates/tack-agent/tests/setup/units.yml through the ansible
function that parses that kind of text (kernel command line, resolv.conf, a Debian-family
release file, /proc/cpuinfo, `lsb_release -a` output, bytes_to_human, the fact filter, an
interface's `ip addr show` output with /sys stubbed to a MAC and an MTU, `ip route get`) and
writes units.json: {kind: [{"input": ..., "result": ...}]}. It needs the reference's python
(it imports ansible); the cpuinfo results leave out processor_nproc, which ansible takes from
the process's CPU affinity rather than from the text.

`--print` is what tests/setup.rs calls when the reference exists: it prints
{"python3": ..., "cases": {name: result}} for one run, writing nothing.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP = ROOT / "crates" / "tack-agent" / "tests" / "setup"
FIXTURE = SETUP / "fixture"
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))


def load_cases():
    sys.path.insert(0, str(next((REF / "lib").glob("python3*/site-packages"))))
    import yaml

    cases = yaml.safe_load((SETUP / "cases.yml").read_text())

    return [(c["name"], c["args"]) for c in cases]


def replace_strings(v, old, new):
    if isinstance(v, str):
        return v.replace(old, new)
    if isinstance(v, list):
        return [replace_strings(x, old, new) for x in v]
    if isinstance(v, dict):
        return {k: replace_strings(x, old, new) for k, x in v.items()}
    return v


def python3():
    found = shutil.which("python3")
    if not found:
        sys.exit("record-setup-facts: no python3 on PATH")
    return found


def real_interpreter(interpreter):
    """The interpreter's own path (a pyenv shim re-executes the real one, which reports it)."""
    out = subprocess.run([interpreter, "-c", "import sys; print(sys.executable)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def run_case(args, interpreter):
    """The module's result as the controller records it for the task.

    The module runs as AnsiballZ runs it (runpy of ansible.modules.setup with the arguments
    file) under `interpreter`, in this script's own environment, so its `env` facts are the
    caller's. The controller then adds `changed: false` when the module says nothing about it;
    the traceback a failure carries (`exception`) is only shown by ansible at -vvv and is
    dropped here.
    """
    site = str(next((REF / "lib").glob("python3*/site-packages")))
    boot = (
        "import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); "
        "runpy.run_module('ansible.modules.setup', run_name='__main__', alter_sys=True)"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        # The controller names the module in its arguments; its errors quote the name.
        args = replace_strings(args, "@FIXTURE@", str(FIXTURE))
        json.dump({"ANSIBLE_MODULE_ARGS": {**args, "_ansible_module_name": "setup"}}, f)
        f.flush()
        proc = subprocess.run([interpreter, "-c", boot, site, f.name],
                              capture_output=True, text=True, cwd=str(ROOT))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        sys.exit(f"record-setup-facts: no result for {args}:\n{proc.stdout}\n{proc.stderr}")
    result = json.loads(lines[-1])
    result.pop("exception", None)
    result.setdefault("changed", False)
    # Warnings travel to the controller as tagged summaries; the task result shows their text.
    if "warnings" in result:
        result["warnings"] = [w["event"]["msg"] if isinstance(w, dict) else w
                              for w in result["warnings"]]
    return replace_strings(result, str(FIXTURE), "@FIXTURE@")


def diff_paths(a, b, prefix, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in set(a) | set(b):
            if k in a and k in b:
                diff_paths(a[k], b[k], f"{prefix}/{k}" if prefix else k, out)
            else:
                out.add(f"{prefix}/{k}" if prefix else k)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for x, y in zip(a, b):
            diff_paths(x, y, f"{prefix}/[]", out)
    elif a != b:
        out.add(prefix)


def record_units():
    sys.path.insert(0, str(next((REF / "lib").glob("python3*/site-packages"))))
    import yaml
    from unittest import mock

    from ansible.module_utils.common.text.formatters import bytes_to_human
    from ansible.module_utils.facts import ansible_collector
    from ansible.module_utils.facts.hardware import linux as hw_linux
    from ansible.module_utils.facts.system import dns as dns_mod
    from ansible.module_utils.facts.system.cmdline import CmdLineFactCollector
    from ansible.module_utils.facts.system.distribution import DistributionFiles
    from ansible.module_utils.facts.system.lsb import LSBFactCollector

    units = yaml.safe_load((SETUP / "units.yml").read_text())
    out = {}

    def cmdline(text):
        c = CmdLineFactCollector()
        data = text.strip()
        return {"cmdline": c._parse_proc_cmdline(data), "proc_cmdline": c._parse_proc_cmdline_facts(data)}

    def dns(text):
        with mock.patch.object(dns_mod, "get_file_content", lambda path, default=None: text.strip()):
            return dns_mod.DnsFactCollector().collect()

    def debian(case):
        files = DistributionFiles(module=None)
        parsed, facts = files._parse_dist_file("Debian", case["data"].strip(), case["path"],
                                               {"distribution_release": "bookworm"})
        return {"parsed": parsed, "facts": facts}

    def cpuinfo(case):
        lines = case["text"].strip().splitlines()

        def fake_lines(path, *a, **kw):
            return lines if path == "/proc/cpuinfo" else []

        with mock.patch.object(hw_linux, "get_file_lines", fake_lines):
            facts = hw_linux.LinuxHardware(module=None).get_cpu_facts(
                collected_facts={"ansible_architecture": case["arch"]})
        facts.pop("processor_nproc", None)
        return facts

    class FakeModule:
        def __init__(self, output):
            self.output = output

        def get_bin_path(self, name, *a, **kw):
            return "/usr/bin/lsb_release"

        def run_command(self, *a, **kw):
            return 0, self.output, ""

    def lsb(text):
        with mock.patch("os.path.exists", lambda p: False):
            return LSBFactCollector().collect(module=FakeModule(text))

    def flt(case):
        facts = {k: True for k in case["keys"]}
        found = ansible_collector.AnsibleFactCollector()._filter(facts, case["filter"])
        return sorted({k for k, _ in found})

    from ansible.module_utils.facts.network import linux as net_linux

    class NetModule:
        def __init__(self, outputs):
            self.outputs = outputs

        def get_bin_path(self, name, *a, **kw):
            return None  # no ethtool

        def run_command(self, args, **kw):
            for word, out in self.outputs.items():
                if word in args:
                    return 0, out, ""
            return 1, "", ""

    def addresses(case):
        base = "/sys/class/net/" + case["device"]
        files = {base + "/address": case["mac"], base + "/mtu": "1500"}
        module = NetModule({"primary": case["primary"], "secondary": case["secondary"]})
        d4, d6 = dict(case["default_ipv4"]), dict(case["default_ipv6"])
        with mock.patch.object(net_linux.glob, "glob", lambda p: [base] if p == "/sys/class/net/*" else []), \
                mock.patch.object(net_linux.os.path, "isdir", lambda p: p == base), \
                mock.patch.object(net_linux.os.path, "exists", lambda p: p in files), \
                mock.patch.object(net_linux, "get_file_content", lambda p, default=None: files.get(p, default)):
            interfaces, ips = net_linux.LinuxNetwork(module).get_interfaces_info("/sbin/ip", d4, d6)
        return {"interfaces": interfaces, "default_ipv4": d4, "default_ipv6": d6, **ips}

    def route_get(case):
        family = "-6" if ":" in case["target"] else "-4"
        other = "2404:6800:400a:800::1012" if family == "-4" else "8.8.8.8"
        module = NetModule({case["target"]: case["out"], other: ""})
        d4, d6 = net_linux.LinuxNetwork(module).get_default_interfaces("/sbin/ip")
        return d4 if family == "-4" else d6

    runners = {"addresses": addresses, "route_get": route_get, "cmdline": cmdline, "dns": dns, "debian": debian, "cpuinfo": cpuinfo,
               "lsb_release": lsb, "bytes_to_human": lambda n: bytes_to_human(float(n)),
               "filter": flt}
    for kind, inputs in units.items():
        out[kind] = [{"input": i, "result": runners[kind](i)} for i in inputs]
    (SETUP / "units.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"recorded {sum(len(v) for v in out.values())} units")


def main():
    if sys.argv[1:] == ["--units"]:
        record_units()
        return
    cases = load_cases()
    interpreter = real_interpreter(python3())
    if sys.argv[1:] == ["--print"]:
        # Cases are independent; running a few at once keeps the comparison test short.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=4) as pool:
            results = pool.map(lambda c: run_case(c[1], interpreter), cases)
            out = dict(zip((name for name, _ in cases), results))
        json.dump({"python3": interpreter, "cases": out}, sys.stdout, sort_keys=True)
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    first = {name: run_case(args, interpreter) for name, args in cases}
    second = {name: run_case(args, interpreter) for name, args in cases}
    varying = set()
    for name in first:
        diff_paths(first[name], second[name], "", varying)
    recorded = {
        "python3": interpreter,
        "cases": {name: {"args": args, "result": first[name]} for name, args in cases},
        "varying": sorted(varying),
    }
    (SETUP / "recorded.json").write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(cases)} cases; {len(varying)} varying paths")


if __name__ == "__main__":
    main()
