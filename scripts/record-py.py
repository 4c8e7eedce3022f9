#!/usr/bin/env python3
"""Record what CPython answers for the behaviours tack-py reproduces.

usage: $ANSIBLE_REF/bin/python scripts/record-py.py

Writes crates/tack-py/tests/corpus/{repr,text,textwrap,shlex,path,codecs,oserror,boolean}.json,
which crates/tack-py/tests/corpus.rs replays. Run it with the reference's interpreter (the Python
ansible-core 2.21.5 runs on): the answers are facts about that interpreter, and `boolean` is
ansible-core's own `boolean()` imported from it. The script re-runs itself with
PYTHONHASHSEED=0, the seed under which `boolean()`'s message lists its words in the order tack
prints. The inputs below are written by hand; every answer in the JSON is recorded. Never edit
the JSON files by hand.

Floats travel as the hex text of their IEEE bits so no JSON reader can round them; bytes as
lists of numbers (hex text for encoded output, which can be long). Path cases that touch the file system are run inside a tree this script builds
from a description stored with the cases, so the replay can build the same tree.
"""

import encodings
import json
import os
import pkgutil
import posixpath
import shlex
import struct
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

from reflib import run_under_reference  # noqa: E402

run_under_reference(__file__, hash_seed_zero=True)

from ansible.module_utils.common.text.converters import to_text  # noqa: E402
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE, boolean  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "tack-py" / "tests" / "corpus"
EXPECTED_PYTHON = (3, 13)

STRINGS = [
    "", "a", "it's", 'say "hi"', "'\"", "both ' and \"", "back\\slash", "tab\there",
    "line\nbreak\r\n", "bell\x07", "del\x7f", "nbsp\xa0", "soft\xadhyphen", "nel\x85",
    "é ü ß", "日本語", "zero\u200bwidth", "bom\ufeff", "\u0378unassigned", "\u0600arabic",
    "\u2028sep", "\U0001f600 emoji", "\U000e0001tag", "\U0010fffd private", "\x00nul",
    "\x1c\x1d\x1e\x1f", "\u3000ideographic", "\u061c", "\u08e2", "\U000110bd",
]

BYTES = [
    b"", b"abc", b"no id\n", b"\xff'", b"'\"", b"it's", b"\x00\x1f\x7f\x80\xff", b"tab\tcr\r",
    b"back\\slash", b'say "hi"',
]

FLOATS = [
    0.0, -0.0, 1.0, 1.5, -2.5, 100.0, 0.1, 0.1 + 0.2, 1e16, 1e15, 1234567890123456.0,
    12345678901234567.0, 0.0001, 0.00001, 1.5e-7, 1e-320, 5e-324, 1.7976931348623157e308,
    1.5e300, 123456.0, 1e22, 1e-5, 2.5e-5, float("inf"), float("-inf"), float("nan"),
    3.141592653589793, 1 / 3, 2 / 3, 9007199254740993.0,
]

TEXT = [
    "", "  a  ", "\x1c a \x1f", "\xa0x\u3000", "a b\tc\nd", " a\u200bb ", "a\r\nb\rc\nd\n",
    "a\n\nb", "a\x0bb\x0cc", "a\x1cb\x1dc\x1ed\x1ff", "a\x85b\u2028c\u2029d", "\n", "x\r",
]

BYTES_TEXT = [
    b"", b" pw \n", b"\x0b\x0c pw \t\r\n", b"\r\n pw \n", b"a\nb\r\nc\rd", b"a\x0bb\x0cc\x1cd",
    b"a\n\n", b"\n\n",
]

SHORTEN = [
    ("Hello  world!", 12), ("Hello  world!", 11), ("a" * 200, 120), ("a " * 70, 120),
    ("word " * 30, 120), ("short", 120), ("", 120), ("  \t\n ", 120),
    ("b'$ANSIBLE_VAULT;1.1;AES256\\n" + "3" * 150 + "'", 120),
    ("x" * 100 + " " + "y" * 30, 120), ("some-long-hyphenated-word " * 8, 120),
    ("alpha-beta-gamma-delta-epsilon-zeta-eta-theta", 20),
    ("a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p", 10), ("well--known words here", 12),
    ("x--y z--w more", 5), ("1-2-3-4-5-6-7-8", 6), ("ab-cd-ef-gh", 7), ("--flag-value-here", 9),
    ("é" * 119 + " b", 120), ("日本語 " * 40, 120), ("one\x1ctwo three", 9),
    ("a-" * 100, 120), ("---- ---- ----", 10), ("ab-c-d-ef-gh", 6), ("abc--def ghi", 7),
    ("k" * 125 + "-tail", 120), ("ab, --cd more", 8),
]

SPLIT = [
    ("host a=1 b=\"x y\"  # c", True), ("a=b#c d", True), ("k=\"'q'\"", True),
    ("a\\ b \"c\\d\" 'e\\f'", True), ("x='' y", True), ("''", True),
    ("echo \"[1]\"; exit 3", True), ("a='b", True), ("a\\", True), ("# only", True),
    ("a #b\nc", True), ("vi #x", False), ("sh -c 'printf \"a\\n\" > \"$1\"' ed", False),
    ("emacs -nw", False), ("\"a\\\"b\" 'c\\'", False), ("a\\\"b \"\\$x\"", False), ("", False),
    ("  \t ", False), ("x\"y z\"w", False), ("\"unterminated", False),
]

QUOTE = ["", "abc", "/a/b.sh", "a b", "it's", "a=b,c:d@e%f+g", "é", "$x", "-", "a\nb"]

NORMPATH = [
    "", ".", "./", "/", "//", "///", "////x", "//x", "//x//y/", "/a//b/./c/../d/", "a/../../b",
    "/../x", "a/..", "../../a", "./a/./b/..", "a/b/../../..", "/a/b/../../..", "a//b", "~/x/..",
]

DIRNAME = ["", "a", "/a", "a/b", "a//b", "a/b/", "//a", "///a", "/", "//", "a///", "/a/b//c"]

SPLITEXT = [
    "a.yml", "/a/b.yml", "/a.d/b", ".hidden", "..x.json", "x.", "/a/.cfg", "/a/..cfg", "...",
    "a.tar.gz", "/a/.ansible.cfg", "dir.d/", "", ".", "..",
]

JOIN = [("", "b"), ("a", "b"), ("a/", "b"), ("a", "/b"), ("a//", "b"), ("a", ""), ("/", "x")]

ENV = {"HOME": "/home/me/", "PROJ": "/srv/p", "EMPTY": "", "A_1": "one"}

EXPANDVARS = [
    "$PROJ/x", "${PROJ}x", "$UNSET/r", "a$", "${}x${PROJ", "$PROJ$PROJ", "${A$PROJ}",
    "$A_1-$A_1x", "$EMPTY/y", "${UNSET}/${PROJ}", "$$PROJ", "$é", "$/x", "no dollar",
    "${PROJ", "$PROJ}",
]

EXPANDUSER = [
    ("~", "/home/me/"), ("~/x", "/home/me/"), ("~", "/"), ("~/x", "/"), ("~/x", ""),
    ("~", ""), ("a/~", "/home/me"), ("~no-such-user-here/x", "/home/me"), ("~root/x", "/h"),
    ("~root", "/h"), ("x~", "/h"), ("~//x", "/home/me//"),
]

# The tree realpath cases run in: directories, files, and links with their targets (`{root}`
# stands for the tree's own absolute path).
TREE = {
    "dirs": ["d", "d/sub", "other"],
    "files": ["d/f", "other/g"],
    "links": [
        ["rel", "d/sub"], ["abs", "{root}/other"], ["loop1", "loop2"],
        ["loop2", "loop1"], ["dangling", "missing/x"], ["d/sub/back", ".."], ["chain", "rel"],
        ["self", "."],
    ],
}

REALPATH = [
    "", "d", "d/f", "rel", "rel/..", "rel/../f", "abs/g", "abs/../d", "missing/a/../b",
    "loop1/x", "dangling", "dangling/more", "d/sub/back/f", "chain/back/back", "self/self/d",
    "d/./sub/../f", "d//f/", "rel/back/sub/back", "x/../d/f",
]

CODEC_NAMES = [
    "utf-8", "UTF8", "utf_8_sig", "utf-16", "UTF-16LE", "utf-16-be", "utf-32", "utf_32_le",
    "utf-32be", "latin-1", "ISO-8859-1", "l1", "iso8859_1", "Latin_1", "ascii", "us-ascii",
    "646", "cp1251", "windows-1251", "koi8-r", "koi8_u", "iso-8859-15", "iso8859.15",
    "mac-roman", "macintosh", "cp037", "ebcdic-cp-us", "cp437", "IBM850", "cp1252", "hp-roman8",
    "tis-620", "cp1006", "base64", "rot13", "zlib", "undefined", "bogus", "utf.8", "\u00fctf8",
    "", "  UTF--8 ", "x.utf8", "shift_jis", "utf-7", "idna",
]

CODEC_TEXTS = [
    "", "plain ascii\n", "caf\u00e9", "price: 10\u20ac", "\u041f\u0440\u0438\u0432\u0435\u0442",
    "\u00c0\u00c1\u20ac\u20ac\u20acx", "emoji \U0001f600", "tab\tnul\x00", "\u65e5\u672c",
    "\u0100", "a\xff\u0101b",
]

# Typed inputs for `boolean()`: [type, value] with floats as Python literals' text.
BOOLEAN_INPUTS = [
    ["bool", True], ["bool", False], ["int", 1], ["int", 0], ["int", 2], ["int", -1],
    ["float", "1.0"], ["float", "0.0"], ["float", "-0.0"], ["float", "0.5"], ["float", "nan"],
    ["none", None], ["list", []], ["dict", {}],
] + [["str", s] for s in [
    "y", "yes", "on", "1", "true", "t", "n", "no", "off", "0", "false", "f", "Y", "YES", "On",
    "TRUE", "True", " yes ", "\tno\n", "\x1cyes\x1f", "\xa0on\u3000", "1.0", "0.0", "",
    " ", "maybe", "yes please", "\u0130", "tru", "ｙｅｓ",
]] + [["bytes", [ord(c) for c in s]] for s in ["on", " OFF\n", "maybe"]]

ERRNOS = list(range(-1, 140))


def float_bits(f):
    return "0x%016x" % struct.unpack("<Q", struct.pack("<d", f))[0]


def record_repr():
    return {
        "str": [[s, repr(s)] for s in STRINGS],
        "bytes": [[list(b), repr(b)] for b in BYTES],
        "float": [[float_bits(f), repr(f)] for f in FLOATS],
        "str_list": [[STRINGS[:3], repr(STRINGS[:3])], [[], "[]"]],
    }


def record_text():
    return {
        "str": [
            {
                "text": t,
                "strip": t.strip(),
                "lstrip": t.lstrip(),
                "rstrip": t.rstrip(),
                "split": t.split(),
                "splitlines": t.splitlines(),
            }
            for t in TEXT
        ],
        "bytes": [
            {
                "data": list(b),
                "strip": list(b.strip()),
                "strip_newlines": list(b.strip(b"\r\n")),
                "splitlines": [list(line) for line in b.splitlines()],
            }
            for b in BYTES_TEXT
        ],
    }


def record_textwrap():
    return [[t, w, textwrap.shorten(t, w)] for t, w in SHORTEN]


def record_shlex():
    def split(line, comments):
        try:
            return {"words": shlex.split(line, comments=comments)}
        except ValueError as e:
            return {"error": str(e)}

    return {
        "split": [dict(line=line, comments=c, **split(line, c)) for line, c in SPLIT],
        "quote": [[s, shlex.quote(s)] for s in QUOTE],
    }


def record_path():
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(ENV)
        expandvars = [[p, posixpath.expandvars(p)] for p in EXPANDVARS]
        expanduser = []
        for p, home in EXPANDUSER:
            os.environ["HOME"] = home
            expanduser.append([p, home, posixpath.expanduser(p)])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(tmp)
        for d in TREE["dirs"]:
            os.makedirs(os.path.join(root, d))
        for f in TREE["files"]:
            Path(root, f).write_text("")
        for name, target in TREE["links"]:
            os.symlink(target.replace("{root}", root), os.path.join(root, name))
        realpath = [
            [p, os.path.realpath(os.path.join(root, p)).replace(root, "{root}", 1)]
            for p in REALPATH
        ]
    return {
        "normpath": [[p, posixpath.normpath(p)] for p in NORMPATH],
        "dirname": [[p, posixpath.dirname(p)] for p in DIRNAME],
        "basename": [[p, posixpath.basename(p)] for p in DIRNAME],
        "splitext": [[p, list(posixpath.splitext(p))] for p in SPLITEXT],
        "join": [[a, b, posixpath.join(a, b)] for a, b in JOIN],
        "env": ENV,
        "expandvars": expandvars,
        "expanduser": expanduser,
        "tree": TREE,
        "realpath": realpath,
    }


def record_codecs():
    def encode(text, name):
        try:
            return {"bytes": text.encode(name).hex()}
        except (LookupError, UnicodeError) as e:
            return {"error": str(e)}

    cases = [dict(name=n, text=t, **encode(t, n)) for n in CODEC_NAMES for t in CODEC_TEXTS]
    # Every codec module once, on every character its 256 bytes decode to: where several bytes
    # decode to one character, this shows which of them encodes it.
    for info in pkgutil.iter_modules(encodings.__path__):
        if info.name.startswith("_") or info.name == "aliases":
            continue
        try:
            with warnings.catch_warnings():
                # unicode_escape warns about the escapes it meets among the 256 bytes.
                warnings.simplefilter("ignore", DeprecationWarning)
                text = bytes(range(256)).decode(info.name, errors="ignore")
        except (LookupError, UnicodeError, TypeError, ValueError):
            continue
        cases.append(dict(name=info.name, text=text, **encode(text, info.name)))
    return cases


def record_boolean():
    def value(kind, v):
        if kind == "float":
            return float(v)
        if kind == "bytes":
            return bytes(v)
        return v

    rows = []
    for kind, v in BOOLEAN_INPUTS:
        py = value(kind, v)
        try:
            strict = {"value": boolean(py, strict=True)}
        except TypeError as e:
            strict = {"error": str(e)}
        hashable = not isinstance(py, (list, dict))
        rows.append({
            "type": kind,
            "input": v,
            "text": to_text(py),
            "strict": strict,
            "loose": boolean(py, strict=False),
            "member_true": hashable and py in BOOLEANS_TRUE,
            "member_false": hashable and py in BOOLEANS_FALSE,
        })
    return rows


def record_oserror():
    return [[n, os.strerror(n)] for n in ERRNOS]


def main():
    if sys.version_info[:2] != EXPECTED_PYTHON:
        sys.exit(f"run with the reference's Python {EXPECTED_PYTHON}, not {sys.version}")
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in [
        ("repr", record_repr()),
        ("text", record_text()),
        ("textwrap", record_textwrap()),
        ("shlex", record_shlex()),
        ("path", record_path()),
        ("codecs", record_codecs()),
        ("oserror", record_oserror()),
        ("boolean", record_boolean()),
    ]:
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
