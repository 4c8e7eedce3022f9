#!/usr/bin/env python3
"""Record what ansible-core 2.21.5 makes of each lookup case.

usage: scripts/record-lookups.py [FAMILY ...]

Cases are written by hand in crates/tack-template/tests/lookups/cases/FAMILY.yml:

    vars:                      # variables every case of the file sees
      xs: [a, b]
    cases:
      - name: items_two
        expr: lookup('items', xs)      # a Jinja2 expression, templated as "{{ expr }}"
      - name: with_items_two
        with: items                    # a task's `with_items: <loop>`, as TaskExecutor runs it
        loop: "{{ xs }}"
        vars: {more: 1}                # extra variables for this case only

The text `<FIXTURE>` in a cases file stands for the fixture directory
(crates/tack-template/tests/lookups/fixture, the DataLoader's base directory, as a playbook's
directory is) and `<TMP>` for a fresh temporary directory (password files are written there).
Both are written back in the results, which go to tests/lookups/FAMILY.json: each case with
`result` ({"type": ansible's type name, "value": JSON}) or `error` (ansible's message), and
`files` (the text of each file under <TMP> afterwards) when the case wrote any.

Variables are loaded as a vars file is (trusted templates). The vault password for
fixture/vault.txt and `!vault` values is `lookup-pw`. Cases run with TZ=UTC,
HOME=/nonexistent-home/tack, LOOKUP_ENV_SET=from-env in the environment and the fixture
directory as the working directory; the Rust test sets the same. The reference is
$ANSIBLE_REF (default /opt/ansible-ref); the script re-runs itself with its python when
ansible is not importable. Only this script writes the JSON files.
"""

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "crates" / "tack-template" / "tests" / "lookups"
FIXTURE = UNITS / "fixture"
HOME = "/nonexistent-home/tack"
PASSWORD = b"lookup-pw"

from reflib import plain, run_under_reference  # noqa: E402

run_under_reference(__file__, hash_seed_zero=False)

from ansible.errors import AnsibleError  # noqa: E402
from ansible.module_utils.datatag import native_type_name  # noqa: E402
from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.parsing.vault import VaultLib, VaultSecret, VaultSecretsContext  # noqa: E402
from ansible.plugins.loader import init_plugin_loader  # noqa: E402
from ansible.template import Templar, trust_as_template  # noqa: E402
from ansible.utils.display import Display  # noqa: E402
from ansible._internal._templating._jinja_plugins import _invoke_lookup, _DirectCall  # noqa: E402
from ansible._internal._datatag._utils import str_problematic_strip  # noqa: E402


def with_loop(templar, name, loop):
    """What TaskExecutor._get_loop_items does for `with_NAME: loop`."""
    terms = loop
    if isinstance(terms, str):
        terms = templar._engine.resolve_to_container(str_problematic_strip(terms))
    if not isinstance(terms, list):
        terms = [terms]

    @_DirectCall.mark
    def invoke_lookup():
        return _invoke_lookup(plugin_name=name, lookup_terms=terms, lookup_kwargs=dict(wantlist=True), invoked_as_with=True)

    return templar.evaluate_expression(trust_as_template("invoke_lookup()"), local_variables=dict(invoke_lookup=invoke_lookup))


def outcome(templar, case):
    try:
        if "with" in case:
            result = with_loop(templar, case["with"], case["loop"])
        else:
            result = templar.template(trust_as_template("{{ " + case["expr"] + " }}"))
    except AnsibleError as ex:
        return {"error": ex.message}
    return {"result": {"type": native_type_name(result), "value": plain(result)}}


def ensure_vault_file():
    path = FIXTURE / "vault.txt"
    if not path.exists():
        vault = VaultLib([("default", VaultSecret(PASSWORD))])
        path.write_bytes(vault.encrypt(b"unvaulted secret\nsecond line\n"))


def record(family):
    text = (UNITS / "cases" / f"{family}.yml").read_text()
    out = []
    names = []
    for index in range(len(__import__("yaml").safe_load(text)["cases"])):
        tmp = tempfile.mkdtemp(prefix="tack-lookups-")
        try:
            loader = DataLoader()
            loader.set_basedir(str(FIXTURE))
            loader.set_vault_secrets([("default", VaultSecret(PASSWORD))])
            case_file = Path(tmp) / "cases.yml"
            case_file.write_text(text.replace("<FIXTURE>", str(FIXTURE)).replace("<TMP>", tmp))
            doc = loader.load_from_file(str(case_file), cache="none", trusted_as_template=True)
            case = doc["cases"][index]
            variables = dict(doc.get("vars") or {})
            variables.update(case.get("vars") or {})
            templar = Templar(loader=loader, variables=variables)
            entry = {"name": case["name"]}
            for key in ("expr", "with", "loop"):
                if key in case:
                    entry[key] = plain(case[key])
            result = outcome(templar, case)
            files = {}
            for dirpath, _dirs, filenames in os.walk(tmp):
                for fn in filenames:
                    p = Path(dirpath) / fn
                    if p == case_file:
                        continue
                    files[str(p.relative_to(tmp))] = p.read_text(errors="replace")
            if files:
                result["files"] = dict(sorted(files.items()))
            blob = json.dumps(result, ensure_ascii=False)
            blob = blob.replace(str(FIXTURE), "<FIXTURE>").replace(tmp, "<TMP>")
            entry.update(json.loads(blob))
            entry_blob = json.dumps(entry, ensure_ascii=False).replace(str(FIXTURE), "<FIXTURE>").replace(tmp, "<TMP>")
            out.append(json.loads(entry_blob))
            names.append(case["name"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        sys.exit(f"{family}: duplicate case names {sorted(dupes)}")
    (UNITS / f"{family}.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"{family}: {len(out)} cases")


def main():
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ["HOME"] = HOME
    os.environ["LOOKUP_ENV_SET"] = "from-env"
    os.environ.pop("LOOKUP_ENV_UNSET", None)
    os.chdir(FIXTURE)
    init_plugin_loader()
    Display().deprecation_warnings = False
    VaultSecretsContext.initialize(VaultSecretsContext([("default", VaultSecret(PASSWORD))]))
    ensure_vault_file()
    families = sys.argv[1:] or sorted(p.stem for p in (UNITS / "cases").glob("*.yml"))
    for family in families:
        record(family)


if __name__ == "__main__":
    main()
