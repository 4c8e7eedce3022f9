#!/usr/bin/env python3
"""Record what CPython's difflib answers for the text pairs tack-py's difflib must reproduce.

usage: $ANSIBLE_REF/bin/python scripts/record-difflib.py

Writes crates/tack-py/tests/corpus/difflib.json, which crates/tack-py/tests/difflib.rs replays.
Each case is a before/after text pair written by hand below (long ones built by small, seeded
generators so the script stays readable); the lines are split as ansible's callback splits them
(`str.splitlines(True)`), and the JSON holds the lines, `get_opcodes()` and the lines
`unified_diff` yields with ansible's arguments (headers `before`/`after`, empty dates, n=3).
Run it with the reference's interpreter. Never edit the JSON by hand.
"""

import difflib
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "tack-py" / "tests" / "corpus" / "difflib.json"
EXPECTED_PYTHON = (3, 13)


def lines(n, fmt="line {}\n"):
    return "".join(fmt.format(i) for i in range(n))


def repeated(n, every, filler="\n"):
    """n lines where every `every`-th line is the same filler (blank by default): enough
    copies in a 200+ line file make the filler 'popular' for autojunk."""
    return "".join(filler if i % every == 0 else "x{}\n".format(i) for i in range(n))


def shuffled_edit(seed, n, edits):
    rng = random.Random(seed)
    base = ["l{}\n".format(rng.randrange(n // 3)) for _ in range(n)]
    after = list(base)
    for _ in range(edits):
        op = rng.randrange(3)
        pos = rng.randrange(len(after))
        if op == 0:
            del after[pos]
        elif op == 1:
            after.insert(pos, "new{}\n".format(rng.randrange(1000)))
        else:
            after[pos] = "changed{}\n".format(rng.randrange(1000))
    return "".join(base), "".join(after)


CASES = [
    ("empty both", "", ""),
    ("empty before", "", "a\nb\n"),
    ("empty after", "a\nb\n", ""),
    ("identical", "a\nb\nc\n", "a\nb\nc\n"),
    ("one line changed", "a\nb\nc\n", "a\nB\nc\n"),
    ("append", "a\nb\n", "a\nb\nc\n"),
    ("prepend", "b\nc\n", "a\nb\nc\n"),
    ("no trailing newline before", "a\nb", "a\nb\n"),
    ("no trailing newline after", "a\nb\n", "a\nb"),
    ("no trailing newline both", "a\nb", "a\nc"),
    ("single line no newline", "x", "y"),
    ("crlf", "a\r\nb\r\n", "a\r\nc\r\n"),
    ("other line breaks", "a\x0bb\x0cc\x1cd\u2028e\n", "a\x0bB\x0cc\x1cd\u2028e\n"),
    ("unicode", "caf\u00e9\n\u65e5\u672c\n", "cafe\n\u65e5\u672c\u8a9e\n"),
    ("far apart changes", lines(20), lines(20).replace("line 2\n", "two\n").replace("line 17\n", "seventeen\n")),
    ("changes 6 apart merge", lines(20), lines(20).replace("line 5\n", "five\n").replace("line 11\n", "eleven\n")),
    ("changes 7 apart split", lines(20), lines(20).replace("line 5\n", "five\n").replace("line 12\n", "twelve\n")),
    ("change at start", lines(10), "zero\n" + lines(10)[len("line 0\n"):]),
    ("change at end", lines(10), lines(9) + "nine\n"),
    # Reorderings: difflib takes the longest block first, wherever it lies.
    ("reorder: moved block", "a\nb\nc\nd\ne\n", "c\nd\ne\na\nb\n"),
    ("reorder: repeated braces", "f() {\n  x\n}\n\ng() {\n  y\n}\n",
     "g() {\n  y\n}\n\nf() {\n  x\n}\n\nh() {\n  z\n}\n"),
    ("reorder: swapped halves", "1\n2\n3\n4\n5\n6\n", "4\n5\n6\n1\n2\n3\n"),
    ("reorder: interleaved", "a\nx\nb\nx\nc\nx\n", "x\na\nx\nb\nx\nc\n"),
    ("longest block wins", "a\nb\nc\nX\nd\ne\nf\ng\n", "d\ne\nf\ng\nX\na\nb\nc\n"),
    ("tie earliest in a", "p\nq\np\nq\n", "q\np\n"),
    ("tie earliest in b", "q\np\n", "p\nq\np\nq\n"),
    ("all different", "a\nb\nc\n", "x\ny\nz\n"),
    ("blank lines only", "\n\n\n", "\n\n"),
    ("whitespace change", "a b\n", "a  b\n"),
    ("long no change", lines(250), lines(250)),
    ("long one change", lines(300), lines(300).replace("line 150\n", "changed\n")),
    ("long popular blanks", repeated(300, 3), repeated(300, 3).replace("x100\n", "y100\n")),
    ("long popular blanks moved", repeated(240, 4), "extra\n" + repeated(240, 4)[:-30] + "tail\n"),
    ("199 lines popular", repeated(199, 2), repeated(199, 2).replace("x51\n", "y51\n")),
    ("200 lines popular", repeated(200, 2), repeated(200, 2).replace("x51\n", "y51\n")),
    ("before short after long popular", "\nx\n\n", repeated(220, 2)),
    ("long popular braces", "".join("{}\n}}\n".format(i) for i in range(150)),
     "".join("{}\n}}\n".format(i) for i in range(150) if i % 7)),
    ("popular a only", repeated(300, 2), "x1\nx3\n"),
    ("long shuffled 1", *shuffled_edit(1, 260, 12)),
    ("long shuffled 2", *shuffled_edit(2, 400, 30)),
    ("long shuffled 3", *shuffled_edit(3, 210, 5)),
    ("short shuffled", *shuffled_edit(4, 40, 6)),
    ("config file edit", "# comment\n[main]\nkey=1\n\n[other]\nkey=2\n",
     "# comment\n[main]\nkey=1\nnew=3\n\n[other]\nkey=20\n"),
    ("trailing newline added to many", "a\nb\nc", "a\nb\nc\nd\ne"),
]


def opcodes(a, b):
    return [list(op) for op in difflib.SequenceMatcher(None, a, b).get_opcodes()]


def main():
    if sys.version_info[:2] != EXPECTED_PYTHON:
        sys.exit(f"run with Python {EXPECTED_PYTHON}, not {sys.version_info[:2]}")
    out = []
    for name, before, after in CASES:
        a = before.splitlines(True)
        b = after.splitlines(True)
        out.append({
            "name": name,
            "a": a,
            "b": b,
            "opcodes": opcodes(a, b),
            "unified": list(difflib.unified_diff(a, b, fromfile="before", tofile="after",
                                                 fromfiledate="", tofiledate="", n=3)),
            "unified_n1": list(difflib.unified_diff(a, b, fromfile="x", tofile="y",
                                                    fromfiledate="d1", tofiledate="", n=1)),
        })
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(out)} cases to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
