#!/usr/bin/env python3
"""ansible-core 2.21.5's own integration targets as tack's conformance gate.

usage:
  scripts/conformance.py reference [--runs N] [--missing] [TARGET ...]
      run each runnable target under the reference (twice by default) and record the verdicts
      in tests/conformance/reference.tsv (the checked-in list; not run in CI); --missing runs
      only the targets the list has no verdict for yet
  scripts/conformance.py tack [--tack BIN] [--list FILE] [TARGET ...]
      run every target the list says passes under the reference (or the TARGETs named), under
      tack; print the count and write tests/conformance/tack.tsv (named targets update it)
  scripts/conformance.py tack --ssh [--tack BIN] [TARGET ...]
  scripts/conformance.py reference --ssh [--runs N] TARGET ...
      the same over ssh: `testhost` is reached through a throw-away sshd on 127.0.0.1
      (scripts/sshd-loopback.sh) with key login; tack's verdicts go to
      tests/conformance/tack-ssh.tsv, the reference's to tests/conformance/reference-ssh.tsv
  scripts/conformance.py ci [--tack BIN]
      the gate CI runs: every target tests/conformance/tack.tsv says tack passes, and every
      third of tests/conformance/tack-ssh.tsv's passes over ssh; fails when one fails twice
  scripts/conformance.py plan
      print how the suite's targets divide (runnable, excluded and why), nothing run
  scripts/conformance.py report
      the counts for docs/conformance.md, from the reference list and the last tack run

The targets come from ansible-core 2.21.5's source distribution, downloaded with pip into
target/conformance/ at run time (never committed). Each target runs as `ansible-test
integration` would run it on this machine, with `ansible_connection=local`: a target with a
`runme.sh` through that script (`ansible-playbook`, `ansible`, `ansible-inventory`,
`ansible-vault` on PATH being the runner's), any other as a role in a play on `testhost`, facts
gathered unless its aliases say `gather_facts/no`, with `output_dir` set. The environment is
ansible-test's for a controller target (its `ansible_environment` settings that change
behaviour), not this shell's.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "conformance"
LIST = ROOT / "tests" / "conformance" / "reference.tsv"
# tack's verdicts, local and over ssh: written by `tack` runs, read by `ci`.
TACK_LIST = LIST.with_name("tack.tsv")
TACK_SSH_LIST = LIST.with_name("tack-ssh.tsv")
VERSION = "2.21.5"
# The sdist pip downloads, checked before it is unpacked.
SDIST_SHA256 = "65bb3148c58ebb843cd5074004c805f404f152114d98476dd823324616c9c6cb"
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))
COMMANDS = ["ansible-playbook", "ansible", "ansible-inventory", "ansible-vault"]
TIMEOUT = int(os.environ.get("CONFORMANCE_TIMEOUT", "600"))

# Aliases that say a target needs what this machine cannot give, with the reason listed.
EXCLUDED = [
    ("disabled", "disabled in ansible-core's own CI"),
    ("unsupported", "unsupported in ansible-core's own CI"),
    ("hidden", "a helper, not a test"),
    ("windows", "needs a Windows host"),
    ("shippable/windows", "needs a Windows host"),
    ("network", "needs a network device"),
    ("cloud/", "needs a cloud service or a container ansible-test starts"),
    ("needs/httptester", "needs ansible-test's HTTP test container"),
    ("skip/docker", "skipped by ansible-core inside a container, as this machine is"),
    ("destructive", "changes the machine's shared state (packages, users, services)"),
    # ansible-test runs these in a throw-away container; here they write system files
    # (`/etc/ansible/facts.d`, ...) that other runs would then read.
    ("needs/root", "writes system files as root (ansible-test gives it a throw-away container)"),
    ("needs/ssh", "needs ssh to localhost set up by ansible-test"),
    ("needs/target/ansible-test", "runs ansible-test itself"),
    ("shippable/galaxy", "needs a Galaxy server"),
    ("shippable/targeted/", "needs a second OS"),
    ("needs/privileged", "needs a privileged container"),
]


def sdist() -> Path:
    """The extracted source distribution, downloaded with pip once."""
    root = WORK / f"ansible_core-{VERSION}"
    if (root / "test" / "integration" / "targets").is_dir():
        return root
    WORK.mkdir(parents=True, exist_ok=True)
    python = REF / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "download", "-q", f"ansible-core=={VERSION}",
                    "--no-deps", "--no-binary", ":all:", "-d", str(WORK)], check=True)
    archive = next(WORK.glob(f"ansible_core-{VERSION}.tar.gz"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        sys.exit(f"{archive}: sha256 {digest}, expected {SDIST_SHA256}")
    subprocess.run(["tar", "xzf", str(archive), "-C", str(WORK)], check=True)
    return root


def aliases(target: Path) -> list[str]:
    path = target / "aliases"
    return path.read_text().split() if path.exists() else []


def matches(mark: str, alias: str) -> bool:
    """`alias` names `mark` itself or a group it is in (`cloud/` any cloud, `windows` and
    `windows/...`)."""
    if alias.endswith("/"):
        return mark.startswith(alias)
    return mark == alias or mark.startswith(alias + "/")


def classify(targets: Path) -> tuple[list[str], dict[str, str]]:
    """The runnable targets, and each excluded one with its reason."""
    runnable, excluded = [], {}
    for target in sorted(p for p in targets.iterdir() if p.is_dir()):
        name = target.name
        if name.startswith(("setup_", "prepare_")):
            continue
        marks = aliases(target)
        if name.startswith("ansible-test"):
            excluded[name] = "tests ansible-test itself, not what a playbook run does"
            continue
        reason = next((why for alias, why in EXCLUDED if any(matches(m, alias) for m in marks)),
                      None)
        if reason is None and not (target / "runme.sh").exists() \
                and not (target / "tasks" / "main.yml").exists():
            reason = "neither a runme.sh nor a role"
        if reason:
            excluded[name] = reason
        else:
            runnable.append(name)
    return runnable, excluded


def bin_dir(runner: str) -> Path:
    """A directory whose ansible-* entries are the runner's."""
    # One directory per runner binary: runs of different builds may go on at once.
    tag = "reference" if runner == "reference" else "tack-" + str(Path(runner).resolve()).strip("/").replace("/", "-")
    out = WORK / "bin" / tag
    out.mkdir(parents=True, exist_ok=True)
    for name in COMMANDS + ["ansible-config", "ansible-doc", "ansible-galaxy", "ansible-test"]:
        link = out / name
        if link.is_symlink() or link.exists():
            link.unlink()
        if runner == "reference":
            source = REF / "bin" / name
        elif name in COMMANDS:
            # Absolute: a relative target would be read from the link's own directory.
            source = Path(runner).resolve()
        else:
            # What tack does not provide stays the reference's, as a user's PATH would have it.
            source = REF / "bin" / name
        if source.exists():
            link.symlink_to(source)
    return out


def start_sshd() -> str:
    """A loopback sshd for `--ssh` runs; returns the inventory variables that reach it."""
    state = WORK / "sshd"
    subprocess.run(["sh", str(ROOT / "scripts" / "sshd-loopback.sh"), "start", str(state)],
                   check=True, stdout=subprocess.DEVNULL)
    port = (state / "port").read_text().strip()
    user = (state / "user").read_text().strip()
    return (f"ansible_connection=ssh ansible_host=127.0.0.1 ansible_port={port} "
            f"ansible_user={user} ansible_ssh_private_key_file={state / 'client_key'}")


def stop_sshd() -> None:
    subprocess.run(["sh", str(ROOT / "scripts" / "sshd-loopback.sh"), "stop", str(WORK / "sshd")],
                   check=False, stdout=subprocess.DEVNULL)


# What a target's files name of the other targets: a path into one (`../setup_x/`,
# `targets/x`), or a line of YAML that is one name alone (`- setup_x`, `role: x`, `name: x`,
# as meta dependencies, `roles:` lists and include_role name them). Generous on purpose: a
# directory copied for nothing costs little, one missed fails the run.
PATH_REF = re.compile(r"(?:\.\./|targets/)([A-Za-z0-9_][A-Za-z0-9_.-]*)")
LINE_REF = re.compile(
    r"""^\s*(?:-\s*)?(?:(?:role|name)\s*:\s*)?["']?([A-Za-z0-9_][A-Za-z0-9_.-]*)["']?\s*$""",
    re.M)
_REFS: dict[Path, set[str]] = {}


def named_targets(targets: Path, name: str) -> set[str]:
    directory = targets / name
    if directory not in _REFS:
        names = {p.name for p in targets.iterdir() if p.is_dir()}
        found: set[str] = set()
        for f in directory.rglob("*"):
            if not f.is_file() or f.is_symlink():
                continue
            text = f.read_text(errors="replace")
            found |= set(PATH_REF.findall(text))
            if f.suffix in (".yml", ".yaml", "") or f.name.startswith("inventory"):
                found |= set(LINE_REF.findall(text))
        _REFS[directory] = (found & names) - {name}
    return _REFS[directory]


def reached(targets: Path, name: str) -> set[str]:
    """The target, every shared `setup_*`/`prepare_*` role, and what they name, transitively."""
    todo = [name] + [p.name for p in targets.iterdir()
                     if p.is_dir() and p.name.startswith(("setup_", "prepare_"))]
    seen = set(todo)
    while todo:
        for other in named_targets(targets, todo.pop()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def run_target(root: Path, name: str, runner: str, reach: str = "ansible_connection=local",
               log_name: str = "") -> tuple[bool, float, str]:
    """Runs one target (on `testhost` reached by the inventory variables `reach`); returns
    whether it passed, its seconds and its output's tail."""
    work = Path(tempfile.mkdtemp(prefix=f"conf-{name}-", dir=WORK))
    # Each run gets its own copy of the integration tree, as ansible-test gives each a copy
    # of the content: what a target leaves behind in its directory never reaches the next
    # run (module_defaults' runme.sh makes symlinks there and fails when they exist).
    integration = work / "integration"
    targets = integration / "targets"
    targets.mkdir(parents=True)
    # Only the directories this target reaches (`cp -a`: links kept as links, modes and times
    # kept): the whole tree is 6,000 files, and copying it cost 1-3 s of file-system time per
    # run, a third of the gate's wall time.
    pristine = root / "test" / "integration" / "targets"
    subprocess.run(["cp", "-a", *(str(pristine / n) for n in sorted(reached(pristine, name))),
                    str(targets)], check=True)
    target = targets / name
    output_dir = work / "output"
    output_dir.mkdir()
    # ansible-test writes the inventory where targets' scripts look for it (`../../inventory`).
    inventory = integration / "inventory"
    python = REF / "bin" / "python"
    inventory.write_text(
        "[testgroup]\n"
        f"testhost {reach} ansible_pipelining=yes ansible_python_interpreter={python}\n"
    )
    path = f"{bin_dir(runner)}:{REF / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "ANSIBLE_FORCE_COLOR": "false",
        "ANSIBLE_FORCE_HANDLERS": "true",
        "ANSIBLE_HOST_PATTERN_MISMATCH": "error",
        "ANSIBLE_INVENTORY": "/dev/null",
        "ANSIBLE_DEPRECATION_WARNINGS": "false",
        "ANSIBLE_HOST_KEY_CHECKING": "false",
        "ANSIBLE_RETRY_FILES_ENABLED": "false",
        "ANSIBLE_LIBRARY": "/dev/null",
        "ANSIBLE_DEVEL_WARNING": "false",
        "ANSIBLE_ROLES_PATH": str(targets),
        "ANSIBLE_TEST_ANSIBLE_VERSION": VERSION,
        "OUTPUT_DIR": str(output_dir),
        "INVENTORY_PATH": str(inventory),
        "PAGER": "/bin/cat",
        "ANSIBLE_TEST_PYTHON_INTERPRETER": str(python),
    }
    # A target that ships a collection of its own finds it as ansible-test arranges.
    if (target / "ansible_collections").is_dir():
        env["ANSIBLE_COLLECTIONS_PATH"] = str(target)
    if (target / "runme.sh").exists():
        cmd, cwd = ["bash", "./runme.sh", "-v"], target
    else:
        marks = aliases(target)
        gather = not any(m.startswith("gather_facts/no") for m in marks)
        play = ("- hosts: testhost\n"
                f"  gather_facts: {str(gather).lower()}\n"
                f"  vars:\n    output_dir: {output_dir}\n"
                f"  roles:\n    - {name}\n")
        playbook = work / f"{name}.yml"
        playbook.write_text(play)
        cmd, cwd = ["ansible-playbook", str(playbook), "-i", str(inventory), "-v"], work
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
        ok, text = done.returncode == 0, done.stdout.decode("utf-8", "replace")
        if not ok:
            text += f"\n(exit code {done.returncode})"
    except subprocess.TimeoutExpired as e:
        ok, text = False, (e.stdout or b"").decode("utf-8", "replace") + f"\n(timed out after {TIMEOUT} s)"
    seconds = time.monotonic() - start
    log = WORK / "logs" / (log_name or ("reference" if runner == "reference" else "tack"))
    log.mkdir(parents=True, exist_ok=True)
    (log / f"{name}.log").write_text(text)
    shutil.rmtree(work, ignore_errors=True)
    return ok, seconds, reason_of(text)


def verdict_of(runs: list[tuple[bool, str]]) -> tuple[str, str]:
    """A target's verdict from its runs: `pass` when every run passed, `flaky` (with the first
    failure's reason) when some did, else `fail` with the last reason."""
    if all(ok for ok, _ in runs):
        return ("pass", "")
    if any(ok for ok, _ in runs):
        return ("flaky", next(w for ok, w in runs if not ok))
    return ("fail", runs[-1][1])


def reason_of(text: str) -> str:
    """A failure's last error line (earlier ones may be failures a target expects), one line,
    for the list."""
    for line in reversed(text.splitlines()):
        if line.startswith(("[ERROR]", "ERROR!", "fatal:", "FAILED")) or "FAILED!" in line:
            return " ".join(line.split())[:240]
    tail = [l for l in text.splitlines() if l.strip()][-1:] or [""]
    return " ".join(tail[0].split())[:240]


def read_list(path: Path) -> dict[str, tuple[str, str]]:
    rows = {}
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, verdict, reason = (line.split("\t") + ["", ""])[:3]
        rows[name] = (verdict, reason)
    return rows


def write_list(path: Path, header: str, rows: dict[str, tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# {l}" for l in header.splitlines()]
    lines += [f"{name}\t{verdict}\t{reason}" for name, (verdict, reason) in sorted(rows.items())]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["reference", "tack", "ci", "plan", "report"])
    parser.add_argument("targets", nargs="*")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--missing", action="store_true")
    parser.add_argument("--tack", default=str(ROOT / "target" / "release" / "tack"))
    parser.add_argument("--list", default=str(LIST))
    parser.add_argument("--ssh", action="store_true")
    args = parser.parse_intermixed_args()
    root = sdist()
    runnable, excluded = classify(root / "test" / "integration" / "targets")
    if args.mode == "plan":
        print(f"{len(runnable)} runnable, {len(excluded)} excluded")
        for name, why in sorted(excluded.items()):
            print(f"  {name}: {why}")
        return 0
    if args.mode == "report":
        return report(root, runnable, excluded, Path(args.list))
    if args.mode == "ci":
        return ci(root, args.tack)
    if args.ssh:
        return over_ssh(root, args)
    if args.mode == "reference":
        rows = read_list(Path(args.list)) if Path(args.list).exists() else {}
        for name, why in excluded.items():
            rows[name] = ("excluded", why)
        write_list(Path(args.list), HEADER, rows)
        wanted = args.targets or runnable
        if args.missing:
            wanted = [n for n in wanted if n not in rows]
        for name in wanted:
            verdicts = []
            for _ in range(args.runs):
                ok, seconds, why = run_target(root, name, "reference")
                verdicts.append((ok, why))
                print(f"{name}: {'pass' if ok else 'fail'} {seconds:.1f}s {'' if ok else why}",
                      flush=True)
            rows[name] = verdict_of(verdicts)
            write_list(Path(args.list), HEADER, rows)
        return 0
    rows = read_list(Path(args.list))
    wanted = args.targets or [n for n, (v, _) in rows.items() if v == "pass"]
    # A run of named targets updates the last verdicts; a whole run replaces them.
    earlier = TACK_LIST
    results = read_list(earlier) if args.targets and earlier.exists() else {}
    results = {n: v for n, v in results.items() if n not in wanted}
    for name in wanted:
        ok, seconds, why = run_target(root, name, args.tack)
        results[name] = ("pass", "") if ok else ("fail", why)
        print(f"{name}: {'pass' if ok else 'fail'} {seconds:.1f}s {'' if ok else why}", flush=True)
    write_list(TACK_LIST, TACK_HEADER, results)
    ran = {n: results[n] for n in wanted}
    passed = sum(1 for v, _ in ran.values() if v == "pass")
    print(f"tack: {passed} of {len(ran)} targets pass")
    return 0 if passed == len(ran) else 1


def over_ssh(root: Path, args: argparse.Namespace) -> int:
    """`tack --ssh` / `reference --ssh`: the named targets (for tack, by default every target
    tack passes locally) on `testhost` over ssh to a loopback sshd."""
    if args.mode == "tack":
        rows = read_list(TACK_LIST) if TACK_LIST.exists() else {}
        wanted = args.targets or [n for n, (v, _) in rows.items() if v == "pass"]
        out, runner, runs, log = TACK_SSH_LIST, args.tack, 1, "tack-ssh"
    else:
        wanted = args.targets
        out, runner, runs, log = LIST.with_name("reference-ssh.tsv"), "reference", args.runs, "reference-ssh"
    results = read_list(out) if out.exists() else {}
    reach = start_sshd()
    try:
        for name in wanted:
            verdicts = []
            for _ in range(runs):
                ok, seconds, why = run_target(root, name, runner, reach, log)
                verdicts.append((ok, why))
                print(f"{name}: {'pass' if ok else 'fail'} {seconds:.1f}s {'' if ok else why}",
                      flush=True)
            results[name] = verdict_of(verdicts)
            header = "reference's verdicts over ssh" if runner == "reference" else TACK_SSH_HEADER
            write_list(out, header, results)
    finally:
        stop_sshd()
    ran = {n: results[n] for n in wanted}
    passed = sum(1 for v, _ in ran.values() if v == "pass")
    print(f"{'reference' if runner == 'reference' else 'tack'} over ssh: {passed} of {len(ran)} targets pass")
    return 0 if passed == len(ran) else 1


def report(root: Path, runnable: list[str], excluded: dict[str, str], listed: Path) -> int:
    """The counts: the suite, what is runnable here, the reference's verdicts, tack's."""
    targets = [p for p in (root / "test" / "integration" / "targets").iterdir() if p.is_dir()]
    helpers = [p for p in targets if p.name.startswith(("setup_", "prepare_"))]
    rows = read_list(listed) if listed.exists() else {}
    verdicts = {n: v for n, (v, _) in rows.items() if n in runnable}
    tack = read_list(TACK_LIST) if TACK_LIST.exists() else {}
    ref_pass = [n for n, v in verdicts.items() if v == "pass"]
    tack_pass = [n for n in ref_pass if tack.get(n, ("", ""))[0] == "pass"]
    print(f"targets in the suite: {len(targets)} ({len(helpers)} setup_/prepare_ helpers)")
    print(f"excluded here: {len(excluded)}; runnable: {len(runnable)}")
    print(f"recorded under the reference: {len(verdicts)} of {len(runnable)}")
    for verdict in ("pass", "fail", "flaky"):
        print(f"  {verdict}: {sum(1 for v in verdicts.values() if v == verdict)}")
    print(f"passing under tack (local): {len(tack_pass)} of {len(ref_pass)} run: "
          f"{sum(1 for n in ref_pass if n in tack)}")
    return 0


def ci(root: Path, tack: str) -> int:
    """The gate CI runs: every target tack passed locally at its last recorded run, and every
    third of those it passed over ssh (in name order), each must pass again. A failure is
    run once more: one that passes then is reported flaky, and does not fail the gate; one
    that fails twice does."""
    failed, flaky = [], []
    began = time.monotonic()

    def gate(names: list[str], reach: str, log: str) -> None:
        for name in names:
            began = time.monotonic()
            ok, seconds, why = run_target(root, name, tack, reach, log)
            if not ok:
                ok, seconds, why_again = run_target(root, name, tack, reach, log)
                (flaky if ok else failed).append(f"{name}{' (ssh)' if log.endswith('ssh') else ''}")
                why = why if ok else why_again
            # The wall time (copying the tree, cleaning up, a second run) beside the run's own.
            wall = time.monotonic() - began
            print(f"{name}: {'pass' if ok else 'fail'} {seconds:.1f}s (wall {wall:.1f}s) "
                  f"{why if not ok else ''}", flush=True)

    local = [n for n, (v, _) in read_list(TACK_LIST).items() if v == "pass"]
    over_ssh_passes = sorted(n for n, (v, _) in read_list(TACK_SSH_LIST).items() if v == "pass")
    third = over_ssh_passes[::3]
    gate(local, "ansible_connection=local", "tack")
    reach = start_sshd()
    try:
        gate(third, reach, "tack-ssh")
    finally:
        stop_sshd()
    print(f"conformance gate: {len(local)} targets locally, {len(third)} over ssh; "
          f"{len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; "
          f"{len(flaky)} passed on a second run{': ' + ', '.join(flaky) if flaky else ''}; "
          f"{time.monotonic() - began:.0f} s")
    return 1 if failed else 0


TACK_HEADER = """tack's verdicts on the targets the reference passes (ansible_connection=local), written by
scripts/conformance.py tack; `ci` runs every `pass` here. Never edit by hand."""
TACK_SSH_HEADER = """tack's verdicts over ssh on the targets it passes locally, written by
scripts/conformance.py tack --ssh; `ci` runs every third `pass` here (in name order)."""

HEADER = """ansible-core 2.21.5's integration targets under the reference, on a machine of this kind
(ansible_connection=local), recorded by scripts/conformance.py reference; never edit by hand.
target<TAB>verdict (pass, fail, flaky, excluded)<TAB>reason"""

if __name__ == "__main__":
    sys.exit(main())
