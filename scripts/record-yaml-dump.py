#!/usr/bin/env python3
"""Record how ansible-core 2.21.5 writes values as YAML.

usage: $ANSIBLE_REF/bin/python scripts/record-yaml-dump.py

Writes crates/tack-yaml/tests/corpus/dump.json: for each value below and each way ansible dumps
(`ansible-inventory -y`, the `to_yaml` and `to_nice_yaml` filters, and those filters with
`indent`, `width`, `sort_keys` and `default_flow_style`), the exact text PyYAML's libyaml
emitter produced under ansible's `AnsibleDumper`. The value is stored as typed JSON (the same
form scripts/record-yaml.py writes) so the Rust test can rebuild it.

The values are written by hand; the outputs are recorded. Never edit dump.json by hand.
"""

import datetime
import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "tack-yaml" / "tests" / "corpus" / "dump.json"

TZ = datetime.timezone


def values():
    long_words = " ".join(f"word{i}" for i in range(40))
    return [
        None, True, False, 0, -1, 42, 2**70, -(2**64), 1.5, -0.0, 0.1, 1e17, 1e-05, 1e16,
        123456789.123, float("nan"), float("inf"), float("-inf"), 3.0,
        "", "plain", "yes", "No", "null", "~", "123", "0o17", "1.5", "1e3", "0x1A", ".inf",
        "2001-12-14", "=", "<<", "-", "- a", "-a", ":", "a: b", "a:b", "a #b", "a#b", "#x",
        "@x", "`x`", "!x", "&x", "*x", "%x", "|", ">", "'", '"', "a'b", 'a"b', "it's \"q\"",
        "  lead", "trail  ", " ", "multi\nline", "multi\nline\n", "\nlead break",
        "trailing\n\n", "tab\there", "\ttab first", "ctrl\x07", "del\x7f", "nel\x85x",
        "nbsp\xa0x", "ls\u2028x", "bom\ufeffx", "unicode é ☺", "emoji 😀", "{a}", "[a]",
        "a, b", "a,b", "?", "? x", "x?", "---", "...", "--- x", "a\\b", "{{ template }}",
        long_words, "x" * 120, "short " + "y" * 90, "line one\nline two that is long " + "z " * 40,
        datetime.date(2001, 12, 14), datetime.datetime(2001, 12, 14, 21, 59, 43, 100000),
        datetime.datetime(2001, 12, 14, 21, 59, 43, tzinfo=TZ(datetime.timedelta(hours=-5))),
        datetime.datetime(2001, 12, 15, 2, 59, 43, tzinfo=TZ.utc),
        [], {}, [1, "two", None], [[1, 2], [3, [4]]], {"b": 1, "a": 2, "C": 3, "_": 4},
        {"z": {"y": [1, {"x": None}], "w": {}}, "list": [], "s": "yes"},
        [{"name": "a", "value": 1}, {"name": "b", "value": [True, False]}],
        {1: "int key", 2.5: "float key", True: "bool key"},
        {"str": 1, 2: "mixed"},
        {None: "none key"},
        {"multi": "line\nvalue", "empty": "", "spaces": "a b"},
        {"deep": {"er": {"est": {"leaf": ["a", {"b": ["c"]}]}}}},
        ["a" * 30, "b" * 30, "c" * 30],
        {"k" * 140: "long key"},
        {"key with spaces": 1, "key:colon": 2, "-dash": 3, "?q": 4},
        {"all": {"children": {"web": {"hosts": {"web1": {"ansible_host": "10.0.0.1", "port": 22}}}},
                 "vars": {"ntp": ["a.pool", "b.pool"], "enabled": True}}},
        [datetime.date(2020, 1, 1), 1.5, "1.5"],
        {"nested_empty": [[], {}], "emptystr": [""]},
    ]


# (name, function of (yaml, AnsibleDumper, value) -> text)
def modes(yaml, AnsibleDumper):
    def dump(**kwargs):
        return lambda v: yaml.dump(v, Dumper=AnsibleDumper, allow_unicode=True, **kwargs)

    return {
        "inventory": dump(default_flow_style=False),
        "to_yaml": dump(default_flow_style=None),
        "to_nice_yaml": dump(indent=4, default_flow_style=False),
        "to_nice_yaml_indent2": dump(indent=2, default_flow_style=False),
        "to_yaml_width40": dump(default_flow_style=None, width=40),
        "to_nice_yaml_unsorted": dump(indent=4, default_flow_style=False, sort_keys=False),
        "to_yaml_flow": dump(default_flow_style=True),
        "to_nice_yaml_width200": dump(indent=4, default_flow_style=False, width=200),
    }

MODE_OPTIONS = {
    "inventory": {"indent": None, "width": None, "flow": False, "sort_keys": True},
    "to_yaml": {"indent": None, "width": None, "flow": None, "sort_keys": True},
    "to_nice_yaml": {"indent": 4, "width": None, "flow": False, "sort_keys": True},
    "to_nice_yaml_indent2": {"indent": 2, "width": None, "flow": False, "sort_keys": True},
    "to_yaml_width40": {"indent": None, "width": 40, "flow": None, "sort_keys": True},
    "to_nice_yaml_unsorted": {"indent": 4, "width": None, "flow": False, "sort_keys": False},
    "to_yaml_flow": {"indent": None, "width": None, "flow": True, "sort_keys": True},
    "to_nice_yaml_width200": {"indent": 4, "width": 200, "flow": False, "sort_keys": True},
}


def typed(value):
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "repr": repr(value)}
    if isinstance(value, float):
        return {"type": "float", "repr": repr(value)}
    if isinstance(value, str):
        return {"type": "str", "value": value, "trusted": True}
    if isinstance(value, datetime.datetime):
        off = value.utcoffset()
        return {
            "type": "datetime",
            "parts": [value.year, value.month, value.day, value.hour, value.minute, value.second,
                      value.microsecond, None if off is None else int(off.total_seconds() // 60)],
        }
    if isinstance(value, datetime.date):
        return {"type": "date", "parts": [value.year, value.month, value.day]}
    if isinstance(value, list):
        return {"type": "list", "items": [typed(v) for v in value]}
    if isinstance(value, dict):
        return {"type": "dict", "items": [[typed(k), typed(v)] for k, v in value.items()]}
    raise SystemExit(f"unexpected {type(value)!r}")


def main():
    import yaml
    from ansible.parsing.yaml.dumper import AnsibleDumper
    from ansible.parsing.vault import EncryptedString
    from ansible._internal._yaml._dumper import VaultDecryptionContext, VaultBehaviors

    cases = []
    for name, fn in modes(yaml, AnsibleDumper).items():
        for value in values():
            cases.append({"mode": name, "options": MODE_OPTIONS[name], "value": typed(value), "output": fn(value)})
    # Vaulted values: kept encrypted (ansible-inventory, and to_yaml with vault_behavior) or redacted.
    ciphertext = "$ANSIBLE_VAULT;1.1;AES256\n61626364\n65666768\n"
    for behavior in ("keep_encrypted", "redact"):
        for value in (EncryptedString(ciphertext=ciphertext), {"secret": EncryptedString(ciphertext=ciphertext), "a": 1}):
            with VaultDecryptionContext(VaultBehaviors(behavior)):
                out = yaml.dump(value, Dumper=AnsibleDumper, allow_unicode=True, default_flow_style=False)
            typed_value = (
                {"type": "vault", "ciphertext": ciphertext}
                if isinstance(value, EncryptedString)
                else {"type": "dict", "items": [[typed("secret"), {"type": "vault", "ciphertext": ciphertext}], [typed("a"), typed(1)]]}
            )
            cases.append({"mode": f"vault_{behavior}", "options": {**MODE_OPTIONS["inventory"], "vault": behavior},
                          "value": typed_value, "output": out})
    OUT.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(cases)} cases ({len(values())} values)")


if __name__ == "__main__":
    main()
