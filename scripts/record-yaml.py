#!/usr/bin/env python3
"""Record how ansible-core 2.21.5's own YAML loader types and places values.

usage: $ANSIBLE_REF/bin/python scripts/record-yaml.py

Writes crates/tack-yaml/tests/corpus/{scalars,structures}.json. Each case is loaded with
ansible's `AnsibleLoader` exactly as a playbook is (a trusted, file-tagged stream through
`yaml.load`), and the result is written as typed JSON: every value with its Python type, its
`repr()` where the text matters (ints, floats, dates), whether a string is trusted as a template
(false under `!unsafe`), and the line and column of its `Origin` tag when it has one. Failures
are recorded as ansible's `AnsibleYAMLParserError` message, position and help text; warnings
and deprecations as ansible's constructor raised them.

The inputs below are written by hand; everything else in the JSON is recorded. Never edit the
JSON files by hand.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "tack-yaml" / "tests" / "corpus"

SCALARS = [
    # plain scalars through every resolver branch
    "~", "null", "Null", "NULL", "nULL", "", "yes", "Yes", "YES", "yEs", "no", "No", "NO",
    "true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off",
    "OFF", "y", "Y", "n", "N",
    "0", "-0", "+0", "1", "+1", "-1", "007", "0o17", "017", "018", "0b1010", "-0b11",
    "0b_1_0", "0x1A", "0x_1A", "-0xff", "0xFFFFFFFFFFFFFFFFFFFF", "1_000", "1__0", "1_",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "123456789012345678901234567890", "1:30", "190:20:30", "-1:30", "1:60", "1:5", "0:30",
    "1.5", "1.", "-1.5", "+1.5", ".5", "-.5", "1.5e3", "1.5e+3", "1.5E-3", "1e3", "1e+3",
    "1_000.5", "1.5_5", "1e16", "10000000000000000.0", "0.0001", "0.00001", "1.0", "100.0",
    "3.14159265358979323846", "190:20:30.15", "1:30.5", ".inf", ".Inf", ".INF", "-.inf",
    "+.inf", ".nan", ".NaN", ".NAN", "NaN", "nan", "inf", "-.nan", ".5e3", "1.e5",
    "2001-12-14", "2001-1-14", "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5", "2001-12-14 21:59:43.10 +05:30", "2001-12-15T02:59:43.1Z",
    "2001-12-15 2:59:43.10", "2001-12-15T02:59:43", "2001-12-15 02:59:43.1234567",
    "2001-12-15 02:59:43 Z", "2002-12-14\t21:59:43", "2001-13-14", "2001-02-29",
    "2000-02-29", "2001-12-14 25:00:00", "2001-12-14 21:59:43 +25",
    "=", "<<", "a=b", "hello world", "  padded", "multi\n  line", "# not a comment?",
    "a # comment", "100%", "-", "--", ".", "..", "~~", "nullx", "1.2.3", "1-2", "1:2:3:4",
    "0x", "0b", "+", "+-1", "12e3", "0.5.5",
    # quoted and block scalars are strings whatever they look like
    "'yes'", '"1"', '"~"', "''", '""', '"2001-12-14"', "'1.5'", '"\\t tab"', '"\\u263A"',
    "'it''s'", "|\n  literal\n  text\n", ">\n  folded\n  text\n", "|-\n  kept\n",
    ">+\n  kept\n\n", "|2\n    indented\n",
    # explicit tags
    "!!str 3", "!!str yes", "!!str ~", "!!str", "!!int \"3\"", "!!int '0x1A'", "!!int 0o17",
    "!!int 1.5", "!!int abc", "!!int ''", "!!int 0b", "!!int ' 42 '", "!!int 1:30",
    "!!float 1", "!!float '1e3'", "!!float 1_0", "!!float abc", "!!float .inf",
    "!!float -1:30", "!!float ''", "!!bool yes", "!!bool 'on'", "!!bool y", "!!bool 1",
    "!!null anything", "!!null ''", "!!timestamp 2001-12-14", "!!timestamp '2001-12-14 1:2:3'",
    "!!timestamp nope", "!!binary aGVsbG8=", "! 3", "! '3'", "! yes", "!foo bar",
    "!!foo bar", "!<tag:yaml.org,2002:int> 12", "!<!> 12", "!!python/unicode x",
    # ansible's tags
    "!unsafe '{{ x }}'", "!unsafe 3", "!unsafe '3'", "!unsafe yes", "!unsafe ''",
    "!unsafe \"a\\n\"", "!unsafe '2001-12-14'", "!unsafe =", "!unsafe '<<'",
    "!vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6130\n", "!vault '3'", "!vault 3",
    "!vault ''", "!vault-encrypted abc",
]

STRUCTURES = [
    ("block map", "a: 1\nb: two\nc:\n  - x\n  - y: z\n"),
    ("flow map", "{a: 1, b: [x, {c: d}], e: }\n"),
    ("nested seqs", "- - a\n  - b\n- - c\n-\n"),
    ("empty containers", "a: {}\nb: []\nc:\nd: ''\n"),
    ("non-string keys", "1: int\n1.5: float\ntrue: bool\n~: null\n2001-12-14: date\n"),
    ("keys collide as in python", "1: a\ntrue: b\n1.0: c\n"),
    ("int and float keys", "0: a\n0.0: b\nfalse: c\n"),
    ("duplicate keys", "a: 1\nb: 2\na: 3\n"),
    ("duplicate keys thrice", "a: 1\na: 2\na: 3\n"),
    ("duplicate quoted key", "a: 1\n'a': 2\n"),
    ("duplicate null key", "~: 1\nnull: 2\n"),
    ("duplicate bool key", "yes: 1\ntrue: 2\n"),
    ("duplicate int key", "1: a\n0x1: b\n"),
    ("duplicate nested", "x:\n  a: 1\n  a: 2\ny:\n  - b: 1\n    b: 2\n"),
    ("duplicate order across levels", "x:\n  d: 1\n  d: 2\nc: 1\nc: 2\n"),
    ("duplicate unsafe key", "a: 1\n!unsafe a: 2\n"),
    ("anchors and aliases", "a: &x hello\nb: *x\nc: &y [1, 2]\nd: *y\n"),
    ("alias origin", "base: &b\n  k: v\nuse: *b\n"),
    ("alias as key", "k: &k key\n*k : value\n"),
    ("anchor redefined", "a: &x 1\nb: *x\n"),
    ("merge map", "base: &b {a: 1, c: 3}\nx:\n  <<: *b\n  a: 2\n"),
    ("merge list", "one: &o {a: 1, bb: 1}\ntwo: &t {a: 2, bb: 2, c: 2}\nx:\n  <<: [*o, *t]\n"),
    ("merge list inline", "x:\n  <<: [{a: 1}, {a: 2, b: 1}]\n"),
    ("merge list long keys", "x:\n  <<: [{aa: 1}, {aa: 2, b: 1}]\n"),
    ("merge twice", "x:\n  <<: [{aa: 1}, {aa: 2, b: 1}]\n  <<: {aa: 3}\n"),
    ("merge same anchor twice", "a: &a {kk: 1}\nx:\n  <<: [*a, *a]\n"),
    ("merge after keys", "x:\n  c: 1\n  <<: {c: 2, d: 3}\n"),
    ("merge nested merge", "a: &a {k: 1}\nb: &b {<<: *a, m: 2}\nx:\n  <<: *b\n  n: 3\n"),
    ("merge latin1 keys", "x:\n  <<: [{é: 1}, {é: 2}, {ĉ: 1}, {ĉ: 2}]\n"),
    ("merge empty key", "x:\n  <<: [{'': 1}, {'': 2}]\n"),
    ("merge quoted and int key", "x:\n  <<: [{1: a}, {'1': b}]\n"),
    ("merge into flow", "b: &b {x: 1}\nm: {<<: *b, y: 2}\n"),
    ("merge scalar", "x:\n  <<: 1\n"),
    ("merge seq of scalars", "x:\n  <<: [1]\n"),
    ("quoted merge key", "x:\n  '<<': {a: 1}\n"),
    ("value key", "=: 1\n"),
    ("value as value", "a: =\n"),
    ("unsafe map", "a: !unsafe {k: [b, 1, '{{ x }}'], 2: yes}\nb: c\n"),
    ("unsafe seq", "- !unsafe [a, {b: c}]\n- d\n"),
    ("unsafe anchor shared", "a: !unsafe &u '{{ x }}'\nb: *u\n"),
    ("unsafe alias of earlier", "a: &u '{{ x }}'\nb: !unsafe [*u]\n"),
    ("unsafe alias of deferred", "a: {k: &x foo}\nb: !unsafe [*x]\n"),
    ("vault map", "a: !vault {b: c}\n"),
    ("vault seq", "a: !vault [x]\n"),
    ("vault in seq", "- !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  3031\n"),
    ("omap", "a: !!omap [x: 1, y: 2]\n"),
    ("pairs", "a: !!pairs [x: 1, x: 2]\n"),
    ("omap not seq", "a: !!omap {x: 1}\n"),
    ("omap wide item", "a: !!omap [{x: 1, y: 2}]\n"),
    ("set", "a: !!set {x, y}\n"),
    ("explicit map on scalar", "a: !!map x\n"),
    ("explicit seq on map", "a: !!seq {x: 1}\n"),
    ("explicit str on seq", "a: !!str [1]\n"),
    ("explicit map on flow map", "a: !!map {x: 1}\n"),
    ("non-specific tag on seq", "a: ! [1, yes]\n"),
    ("unhashable key", "? [a]\n: 1\n"),
    ("unhashable map key", "x: {{ y }}\n"),
    ("block scalars positions", "a: |\n  text\nb: >-\n  more\nc:\n  - |\n    in seq\n"),
    # a text that ends inside a block scalar, with no final line break
    ("folded scalar at the end without a line break", "a: >\n  fo"),
    ("kept literal at the end without a line break", "a: |+\n  fo\n\n  bar"),
    ("stripped folded at the end without a line break", "a: >-\n  fo"),
    ("literal in a sequence at the end without a line break", "- x: |\n    deep\n    er"),
    ("plain scalar at the end without a line break", "a: b"),
    ("positions of keys", "top:\n    deep:\n        - one\n        -   two\n"),
    ("flow positions", "[a, {b: c}, [d]]\n"),
    ("document start", "---\na: 1\n"),
    ("document end marker", "a: 1\n...\n"),
    ("explicit empty document", "---\n...\n"),
    ("comment only", "# nothing\n"),
    ("empty stream", ""),
    ("multiple documents", "a: 1\n---\nb: 2\n"),
    ("multiple documents all", "a: 1\n---\nb: 2\n"),
    ("bom", "\ufeffa: 1\n"),
    ("crlf", "a: 1\r\nb:\r\n  - c\r\n"),
    ("unicode positions", "é: ü\nkey: [ä, ö]\n"),
    ("tag directive", "%TAG !e! tag:example.com,2000:\n---\na: !e!foo 1\n"),
    ("yaml directive", "%YAML 1.1\n---\na: 1\n"),
    ("long string", "a: " + "x" * 300 + "\n"),
    ("duplicate long key", "k" * 130 + ": 1\n" + "k" * 130 + ": 2\n"),
    ("recursive alias", "a: &a [1, *a]\n"),
    ("undefined alias", "a: *nope\n"),
    ("duplicate anchor", "a: &x 1\nb: &x 2\n"),
]

# Cases loaded with load_all (yaml.load_all) rather than a single-document load.
LOAD_ALL = {"multiple documents all"}

# Cases loaded with DUPLICATE_YAML_DICT_KEY set.
DUPLICATE_MODES = {
    "duplicate keys error": ("a: 1\nb: 2\na: 3\n", "error"),
    "duplicate keys ignore": ("a: 1\nb: 2\na: 3\n", "ignore"),
    "duplicate bool key error": ("yes: 1\ntrue: 2\n", "error"),
}


def origin_of(value, Origin):
    origin = Origin.get_tag(value)
    if origin is None:
        return {}
    return {"line": origin.line_num, "col": origin.col_num}


def typed(value, Origin, TrustedAsTemplate, EncryptedString):
    import datetime

    out = origin_of(value, Origin)
    if value is None:
        out["type"] = "null"
    elif isinstance(value, bool):
        out.update(type="bool", value=value)
    elif isinstance(value, int):
        out.update(type="int", repr=repr(int(value)))
    elif isinstance(value, float):
        out.update(type="float", repr=repr(float(value)))
    elif isinstance(value, EncryptedString):
        out.update(type="vault", ciphertext=value._ciphertext)
    elif isinstance(value, str):
        out.update(type="str", value=str(value), trusted=TrustedAsTemplate.is_tagged_on(value))
    elif isinstance(value, datetime.datetime):
        out.update(type="datetime", repr=repr(value), str=str(value))
    elif isinstance(value, datetime.date):
        out.update(type="date", repr=repr(value), str=str(value))
    elif isinstance(value, bytes):
        out.update(type="bytes", repr=repr(bytes(value)))
    elif isinstance(value, (set, frozenset)):
        out["type"] = "set"
    elif isinstance(value, tuple):
        out.update(type="tuple", items=[typed(v, Origin, TrustedAsTemplate, EncryptedString) for v in value])
    elif isinstance(value, list):
        out.update(type="list", items=[typed(v, Origin, TrustedAsTemplate, EncryptedString) for v in value])
    elif isinstance(value, dict):
        out.update(
            type="dict",
            items=[
                [typed(k, Origin, TrustedAsTemplate, EncryptedString), typed(v, Origin, TrustedAsTemplate, EncryptedString)]
                for k, v in value.items()
            ],
        )
    else:
        raise SystemExit(f"unexpected type {type(value)!r}")
    return out


class Recorder:
    """Stands in for the constructor's `display` to capture warnings and deprecations."""

    def __init__(self, Origin):
        self.events = []
        self.Origin = Origin

    def _obj(self, obj):
        if isinstance(obj, self.Origin):
            return {"line": obj.line_num, "col": obj.col_num}
        origin = self.Origin.get_tag(obj) if obj is not None else None
        return {"line": origin.line_num, "col": origin.col_num} if origin else {}

    def warning(self, msg, obj=None, help_text=None, **_):
        self.events.append({"kind": "warning", "message": msg, "help": help_text, **self._obj(obj)})

    def deprecated(self, msg, version=None, obj=None, help_text=None, **_):
        self.events.append(
            {"kind": "deprecated", "message": msg, "version": version, "help": help_text, **self._obj(obj)}
        )


def record_case(name, text, mode, duplicate_mode, modules, workdir):
    yaml, AnsibleLoader, Origin, TrustedAsTemplate, EncryptedString, AnsibleYAMLParserError, constructor = modules
    path = workdir / "case.yml"
    path.write_text(text, encoding="utf-8", newline="")
    recorder = Recorder(Origin)
    constructor.display = recorder
    if duplicate_mode:
        os.environ["ANSIBLE_DUPLICATE_YAML_DICT_KEY"] = duplicate_mode
    else:
        os.environ.pop("ANSIBLE_DUPLICATE_YAML_DICT_KEY", None)
    origin = Origin(path=str(path))
    data = TrustedAsTemplate().tag(origin.tag(text))
    case = {"name": name, "yaml": text, "mode": mode}
    if duplicate_mode:
        case["duplicate_keys"] = duplicate_mode
    try:
        if mode == "all":
            loaded = list(yaml.load_all(data, Loader=AnsibleLoader))
        else:
            loaded = yaml.load(data, Loader=AnsibleLoader)
    except Exception as ex:
        try:
            AnsibleYAMLParserError.handle_exception(ex, origin=origin)
        except AnsibleYAMLParserError as err:
            err_origin = err.obj if isinstance(err.obj, Origin) else None
            case["error"] = {
                "message": err.message,
                "line": err_origin.line_num if err_origin else None,
                "col": err_origin.col_num if err_origin else None,
                "help": err._help_text,
            }
    else:
        try:
            if mode == "all":
                case["result"] = [typed(d, Origin, TrustedAsTemplate, EncryptedString) for d in loaded]
            else:
                case["result"] = typed(loaded, Origin, TrustedAsTemplate, EncryptedString)
        except RecursionError:
            # PyYAML built a self-referencing object; tack refuses these by name.
            case["result"] = {"type": "recursive"}
    case["warnings"] = recorder.events
    return case


def main():
    import yaml
    from ansible._internal._yaml import _constructor as constructor
    from ansible._internal._yaml._loader import AnsibleLoader
    from ansible._internal._yaml._errors import AnsibleYAMLParserError
    from ansible._internal._datatag._tags import Origin, TrustedAsTemplate
    from ansible.parsing.vault import EncryptedString

    modules = (yaml, AnsibleLoader, Origin, TrustedAsTemplate, EncryptedString, AnsibleYAMLParserError, constructor)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        scalars = [record_case(text, text, "one", None, modules, workdir) for text in SCALARS]
        structures = [
            record_case(name, text, "all" if name in LOAD_ALL else "one", None, modules, workdir)
            for name, text in STRUCTURES
        ]
        structures += [
            record_case(name, text, "one", dup, modules, workdir) for name, (text, dup) in DUPLICATE_MODES.items()
        ]
    for name, cases in (("scalars", scalars), ("structures", structures)):
        target = OUT / f"{name}.json"
        target.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{target.relative_to(ROOT)}: {len(cases)} cases")


if __name__ == "__main__":
    if not sys.executable.startswith(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref")):
        print("run this with the reference's python: $ANSIBLE_REF/bin/python", file=sys.stderr)
    main()
