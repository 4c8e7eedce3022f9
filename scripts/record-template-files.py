#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's `template` action writes for each template-file case.

usage: scripts/record-template-files.py

The corpus is crates/tack-template/tests/corpus/: every top-level `NAME.j2` whose name does
not start with `_` is a case; `NAME.vars.yml` beside it (optional) holds its variables, loaded
as the play's `vars_files`. Files starting with `_` and files in subdirectories are only
included or imported by the cases.

The recording runs ansible-playbook itself, as a user would:

    PLAY/                      a fresh temporary directory
      site.yml                 one play per case: vars_files, then one `template:` task
      templates/               a copy of the corpus, every file's mtime set to MTIME
      out/NAME                 the task's `dest`

Each play is `hosts: localhost`, `connection: local`, `gather_facts: false`; its `template:`
task has `src: NAME.j2` (found in PLAY/templates, as the action searches), `dest:
PLAY/out/NAME`, `ignore_errors: true` and is registered; a second task writes the registered
`failed`/`msg` as JSON. The expected result is the bytes written to `dest` (as UTF-8 text) or
the failure's `msg`.

A case with `NAME.ansible.cfg` beside it (the `ansible_managed` setting, say) is run by an
ansible-playbook of its own with that file as its configuration; the others see an empty one.

Normalised: the temporary directory's path is written `<PLAY>`. Nothing else varies: TZ=UTC,
the files' mtime is fixed, no case prints the host name, the user, or the run date themselves
(cases test their shape, or replace the value by a marker, instead), and no other
configuration file is read (ANSIBLE_CONFIG points at the case's or an empty file).

Writes crates/tack-template/tests/corpus/expected.json: {NAME: {"output": TEXT} or {"error":
MSG}}. Only this script writes that file. The reference is $ANSIBLE_REF (default
/opt/ansible-ref).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "crates" / "tack-template" / "tests" / "corpus"
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))
# 2023-11-14 22:13:20 UTC; the Rust test sets the same mtime on its copy.
MTIME = 1_700_000_000


def cases():
    return sorted(
        p.stem for p in CORPUS.glob("*.j2") if p.is_file() and not p.name.startswith("_")
    )


def playbook(play: Path, names):
    plays = []
    for name in names:
        vars_file = CORPUS / f"{name}.vars.yml"
        out = play / "out" / name
        plays.append(
            {
                "name": name,
                "hosts": "localhost",
                "connection": "local",
                "gather_facts": False,
                "vars_files": [f"templates/{vars_file.name}"] if vars_file.exists() else [],
                "tasks": [
                    {
                        "name": "render",
                        "template": {"src": f"{name}.j2", "dest": str(out)},
                        "register": "r",
                        "ignore_errors": True,
                    },
                    {
                        "name": "capture",
                        "copy": {
                            "content": "{{ {'failed': r.failed | default(false), "
                            "'msg': r.msg | default('')} | to_json }}",
                            "dest": f"{out}.result.json",
                        },
                    },
                ],
            }
        )
    return json.dumps(plays, indent=1)


def run_playbook(play: Path, names, config: Path) -> None:
    (play / "site.yml").write_text(playbook(play, names))
    env = {
        "PATH": f"{REF / 'bin'}:/usr/bin:/bin",
        "HOME": str(play),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "ANSIBLE_CONFIG": str(config),
        "ANSIBLE_LOCAL_TEMP": str(play / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
    }
    run = subprocess.run(
        [str(REF / "bin" / "ansible-playbook"), "-i", "inventory", "site.yml"],
        cwd=play,
        env=env,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        sys.exit(f"ansible-playbook failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")


def main() -> None:
    names = cases()
    play = Path(tempfile.mkdtemp(prefix="tack-template-files-"))
    try:
        shutil.copytree(CORPUS, play / "templates")
        (play / "templates" / "expected.json").unlink(missing_ok=True)
        (play / "templates" / "known-divergences.toml").unlink(missing_ok=True)
        for path in (play / "templates").rglob("*"):
            os.utime(path, (MTIME, MTIME))
        (play / "out").mkdir()
        (play / "ansible.cfg").write_text("")
        (play / "inventory").write_text(
            f"localhost ansible_python_interpreter={REF / 'bin' / 'python'}\n"
        )
        own_config = [n for n in names if (CORPUS / f"{n}.ansible.cfg").exists()]
        run_playbook(play, [n for n in names if n not in own_config], play / "ansible.cfg")
        for name in own_config:
            run_playbook(play, [name], play / "templates" / f"{name}.ansible.cfg")
        expected = {}
        for name in names:
            out = play / "out" / name
            result = json.loads((play / "out" / f"{name}.result.json").read_text())
            if result["failed"]:
                expected[name] = {"error": result["msg"].replace(str(play), "<PLAY>")}
            else:
                text = out.read_bytes().decode("utf-8")
                expected[name] = {"output": text.replace(str(play), "<PLAY>")}
    finally:
        shutil.rmtree(play, ignore_errors=True)
    path = CORPUS / "expected.json"
    path.write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    failed = sum(1 for v in expected.values() if "error" in v)
    print(f"{len(expected)} cases recorded ({failed} errors) in {path}")


if __name__ == "__main__":
    main()
