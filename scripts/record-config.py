#!/usr/bin/env python3
"""Record how ansible-core 2.21.5 resolves its configuration, for tack-config's tests.

usage: scripts/record-config.py [FIXTURE_DIR ...]

With no argument every fixture under crates/tack-config/tests/fixtures/ is recorded. A fixture
is a directory laid out as the case needs it:

| file              | meaning                                                                   |
|-------------------|---------------------------------------------------------------------------|
| `env`             | extra environment, one `NAME=value` per line; `<CASE>` is the staged path |
| `cwd`             | the working directory, relative to the fixture (default: the fixture)     |
| `world-writable`  | directories (relative, one a line) made world-writable when staged        |
| `home/`           | `$HOME` (created empty when absent), e.g. `home/.ansible.cfg`             |
| `etc/ansible/`    | what ansible sees as `/etc/ansible/` (an empty directory when absent)     |
| anything else     | the case's files: `ansible.cfg`, directories named by `ANSIBLE_CONFIG`... |

The fixture is copied to /tmp/tack-config-fixtures/<case> and run there with an environment of
only PATH, HOME, LANG=C.UTF-8 and the `env` file, in a private mount namespace whose /etc has
the fixture's `etc/` laid over it (so the system-wide rule is measured without touching the
machine's /etc; this needs root and `unshare`). Two things are run:

1. a probe in the reference's python that imports `ansible.constants` exactly as the CLI does,
   recording for every core setting its resolved value (as JSON, ansible's types) and origin,
   then the same for the options of the plugins tack reads (connection/ssh, callback/default,
   shell/sh); or the error that stopped it;
2. `ansible-playbook --version`, recording its exit code, the `config file = ` line it prints,
   and its stderr (warnings, deprecations, errors).

Everything goes to `<fixture>/expected.json`. Normalised: the staged path is written `<CASE>`;
`DEFAULT_LOCAL_TMP` (a `tmppath`: ansible creates `ansible-local-<pid><random>` under the
configured directory at start-up) is recorded as that directory; and the Python traceback that
ansible prints after a start-up error is cut off, as it describes ansible's own code.
Never edit expected.json by hand.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates" / "tack-config" / "tests" / "fixtures"
RUN_ROOT = Path("/tmp/tack-config-fixtures")
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))
PLUGINS = [("connection", "ssh"), ("callback", "default"), ("shell", "sh")]

PROBE = r"""
import json, os, sys
out_path = sys.argv[1]
plugins = json.loads(sys.argv[2])
from ansible import _internal
_internal.setup()
import ansible.config.manager as manager

origins = {}
_resolve = manager.ConfigManager.get_config_value_and_origin

def _recording(self, config, *args, **kwargs):
    value, origin = _resolve(self, config, *args, **kwargs)
    if kwargs.get('plugin_type') is None:
        origins.setdefault(config, origin)
    return value, origin

manager.ConfigManager.get_config_value_and_origin = _recording

def plain(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return repr(v)

def error(ex):
    return {
        "class": type(ex).__name__,
        "message": str(getattr(ex, "message", ex)),
        "help": getattr(ex, "_help_text", None),
    }

result = {"config_file": None, "settings": {}, "plugins": {}, "error": None}
try:
    from ansible import constants as C
except Exception as ex:
    result["error"] = error(ex)
else:
    result["config_file"] = C.CONFIG_FILE
    for name, d in C.config.get_configuration_definitions().items():
        value = getattr(C, name)
        if d.get('type') == 'tmppath' and value:
            value = os.path.dirname(value)
        result["settings"][name] = {"value": plain(value), "origin": origins.get(name, '')}
    from ansible.plugins.loader import init_plugin_loader
    import ansible.plugins.loader as loader
    init_plugin_loader([])
    for ptype, pname in plugins:
        getattr(loader, ptype + "_loader").get(pname, class_only=True)
        options = {}
        for opt in C.config.get_configuration_definitions(ptype, pname):
            try:
                value, origin = C.config.get_config_value_and_origin(
                    opt, plugin_type=ptype, plugin_name=pname)
                options[opt] = {"value": plain(value), "origin": origin}
            except Exception as ex:
                options[opt] = {"error": error(ex)}
        result["plugins"][f"{ptype}/{pname}"] = options
with open(out_path, "w") as f:
    json.dump(result, f)
"""


def fixtures(args: list[str]) -> list[Path]:
    if args:
        return [Path(a).resolve() for a in args]
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def stage(fixture: Path) -> tuple[Path, Path]:
    work = RUN_ROOT / fixture.name
    if work.exists():
        subprocess.run(["chmod", "-R", "u+rwx", str(work)], check=True)
        shutil.rmtree(work)
    shutil.copytree(fixture, work, symlinks=True, ignore=shutil.ignore_patterns("expected.json"))
    (work / "home").mkdir(exist_ok=True)
    (work / "etc" / "ansible").mkdir(parents=True, exist_ok=True)
    ww = fixture / "world-writable"
    if ww.exists():
        for rel in ww.read_text().split():
            os.chmod(work / rel, 0o777)
    cwd_file = fixture / "cwd"
    cwd = work / cwd_file.read_text().strip() if cwd_file.exists() else work
    return work, cwd


def environment(fixture: Path, work: Path) -> dict[str, str]:
    env = {"PATH": f"{REF / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(work / "home"),
           "LANG": "C.UTF-8"}
    env_file = fixture / "env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, value = line.partition("=")
                env[name] = value.replace("<CASE>", str(work))
    return env


def in_namespace(work: Path, argv: list[str]) -> list[str]:
    """argv run where /etc has the fixture's etc/ laid over it, visible to that process only."""
    script = f'mount -t overlay overlay -o lowerdir={work / "etc"}:/etc /etc && exec "$@"'
    return ["unshare", "--mount", "--", "sh", "-c", script, "sh", *argv]


def normalise(text: str, work: Path) -> str:
    return text.replace(str(work), "<CASE>")


def record(fixture: Path) -> None:
    work, cwd = stage(fixture)
    env = environment(fixture, work)
    probe_out = RUN_ROOT / f"{fixture.name}.probe.json"
    probe = subprocess.run(
        in_namespace(work, [str(REF / "bin" / "python"), "-c", PROBE, str(probe_out),
                            json.dumps(PLUGINS)]),
        cwd=cwd, env=env, capture_output=True, text=True,
    )
    if probe.returncode != 0 or not probe_out.exists():
        raise SystemExit(f"{fixture.name}: the probe failed:\n{probe.stderr}")
    result = json.loads(normalise(probe_out.read_text(), work))
    probe_out.unlink()

    cli = subprocess.run(
        in_namespace(work, [str(REF / "bin" / "ansible-playbook"), "--version"]),
        cwd=cwd, env=env, capture_output=True, text=True,
    )
    stderr = cli.stderr.split("\n\nTraceback (most recent call last):\n")[0]
    if stderr != cli.stderr:
        stderr += "\n"
    config_line = next((line for line in cli.stdout.splitlines()
                        if line.startswith("  config file = ")), None)
    result["cli"] = {
        "rc": cli.returncode,
        "stderr": normalise(stderr, work),
        "config_file_line": normalise(config_line, work) if config_line else None,
    }
    (fixture / "expected.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    error = result["error"]["message"].splitlines()[0] if result["error"] else "ok"
    print(f"{fixture.name}: rc={cli.returncode} {error}")


def main() -> None:
    if os.geteuid() != 0:
        raise SystemExit("recording needs root: it lays the fixture's etc/ over /etc in a "
                         "private mount namespace")
    for fixture in fixtures(sys.argv[1:]):
        record(fixture)


if __name__ == "__main__":
    main()
