#!/usr/bin/env python3
"""Record how ansible-core 2.21.5's default callback renders a result's `diff` value.

usage: $ANSIBLE_REF/bin/python scripts/record-callback-diff.py

Writes crates/tack-report/tests/corpus/callback-diff.json, which
crates/tack-report/tests/callback_diff.rs replays against tack's renderer. The `diff` values
below are written by hand, shaped as modules return them (text before/after with or without
headers, dicts of file state, `prepared` text, the binary and size markers, lists of diffs);
the text is what `CallbackBase._get_diff` returns for each, with the default callback's default
options, and what `Display.display` would write for it. Never edit the JSON by hand.
"""

import copy
import json
import sys
from pathlib import Path

from ansible.plugins.loader import callback_loader

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "tack-report" / "tests" / "corpus" / "callback-diff.json"

LONG = "".join("line %d\n" % i for i in range(30))

CASES = [
    ("text change", {"before": "a\nb\n", "after": "a\nc\n"}),
    ("headers", {"before": "a\n", "after": "b\n", "before_header": "/tmp/f", "after_header": "/tmp/f"}),
    ("before header only", {"before": "a\n", "after": "b\n", "before_header": "x"}),
    ("no change", {"before": "same\n", "after": "same\n"}),
    ("empty both", {"before": "", "after": ""}),
    ("none before", {"before": None, "after": "new\n"}),
    ("none after", {"before": "old\n", "after": None}),
    ("no newline at end before", {"before": "a\nb", "after": "a\nb\n"}),
    ("no newline at end after", {"before": "a\n", "after": "a\nz"}),
    ("no newline at end both", {"before": "x", "after": "y"}),
    ("crlf", {"before": "a\r\nb\r\n", "after": "a\r\nc\r\n"}),
    ("dict state", {"before": {"path": "/tmp/d", "state": "absent"},
                    "after": {"path": "/tmp/d", "state": "directory"}}),
    ("dict mode", {"before": {"path": "/tmp/f", "mode": "0644"}, "after": {"path": "/tmp/f", "mode": "0600"}}),
    ("dict same", {"before": {"path": "/tmp/f"}, "after": {"path": "/tmp/f"}}),
    ("dict non ascii", {"before": {"path": "/tmp/\u00e9"}, "after": {"path": "/tmp/\u00e9", "state": "file"}}),
    ("dict nested", {"before": {"a": [1, 2], "b": {"c": True, "d": None}}, "after": {"a": [1], "b": {}}}),
    ("dict and text", {"before": {"path": "/x"}, "after": "text\n"}),
    ("prepared", {"prepared": "some prepared text\n"}),
    ("prepared without newline", {"prepared": "prepared"}),
    ("prepared and text", {"before": "a\n", "after": "b\n", "prepared": "P\n"}),
    ("dst binary", {"dst_binary": 1}),
    ("src binary", {"src_binary": 1}),
    ("both binary", {"dst_binary": 1, "src_binary": 1}),
    ("dst larger", {"dst_larger": 104448}),
    ("src larger", {"src_larger": 104448}),
    ("larger and binary", {"dst_binary": 1, "src_larger": 5, "dst_larger": 7}),
    ("binary and text", {"src_binary": 1, "before": "a\n", "after": "b\n"}),
    ("before only", {"before": "a\n"}),
    ("empty dict", {}),
    ("list of two", [{"before": "a\n", "after": "b\n", "before_header": "one"},
                     {"before": {"state": "absent"}, "after": {"state": "file"}}]),
    ("list empty", []),
    ("list with empty", [{}, {"before": "x\n", "after": "x\n"}]),
    ("long file far changes", {"before": LONG, "after": LONG.replace("line 3\n", "three\n").replace("line 25\n", "")}),
    ("long file appended", {"before": LONG, "after": LONG + "more\n"}),
    ("unicode text", {"before": "caf\u00e9\n", "after": "caf\u00e8\n"}),
    ("tab and spaces", {"before": "\tindented\n", "after": "    indented\n"}),
    ("trailing blank lines", {"before": "a\n\n\n", "after": "a\n"}),
]


def main():
    if sys.version_info[:2] != (3, 13):
        sys.exit("run with the reference's Python 3.13")
    cb = callback_loader.get("default")
    cb.set_options()
    out = []
    for name, diff in CASES:
        text = cb._get_diff(copy.deepcopy(diff))
        out.append({"name": name, "diff": diff, "text": text})
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(out)} cases to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
