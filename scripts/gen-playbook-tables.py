#!/usr/bin/env python3
"""Generate crates/tack-playbook/src/tables/generated.rs from ansible-core 2.21.5 itself.

The tables are facts about ansible-core: the attributes (keywords) each playbook object accepts
with their types, the builtin module / action / lookup plugin names, and the builtin plugin
routing (redirects inside ansible.builtin and to collections, and tombstones), and its action
groups. Run it with the
reference's python:

    /opt/ansible-ref/bin/python scripts/gen-playbook-tables.py
"""

import os
from pathlib import Path

import yaml

import ansible
from ansible.playbook.block import Block
from ansible.playbook.handler import Handler
from ansible.playbook.loop_control import LoopControl
from ansible.playbook.play import Play
from ansible.playbook.playbook_include import PlaybookInclude
from ansible.playbook.role.include import RoleInclude
from ansible.playbook.role.metadata import RoleMetadata
from ansible.playbook.role_include import IncludeRole
from ansible.playbook.task import Task
from ansible.playbook.task_include import TaskInclude
from ansible.playbook.attribute import NonInheritableFieldAttribute

OUT = Path(__file__).resolve().parent.parent / "crates/tack-playbook/src/tables/generated.rs"
CLASSES = [
    ("Play", Play),
    ("Block", Block),
    ("Task", Task),
    ("Handler", Handler),
    ("TaskInclude", TaskInclude),
    ("IncludeRole", IncludeRole),
    ("RoleInclude", RoleInclude),
    ("PlaybookInclude", PlaybookInclude),
    ("RoleMetadata", RoleMetadata),
    ("LoopControl", LoopControl),
]
ISA = {
    "string": "Str", "int": "Int", "float": "Float", "bool": "Bool", "percent": "Percent",
    "list": "List", "dict": "Dict", "class": "Class", None: "Any",
}


def plugin_names(package: str) -> list[str]:
    mod = __import__(package, fromlist=["x"])
    names = {os.path.splitext(f)[0] for f in os.listdir(os.path.dirname(mod.__file__))}
    return sorted(n for n in names if not n.startswith("_"))


def rust_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def keyword_enum() -> str:
    names = sorted({name for _, cls in CLASSES for name in cls.fattributes})
    variants = "\n".join(f"    {camel(n)}," for n in names)
    arms = "\n".join(f"            Keyword::{camel(n)} => {rust_str(n)}," for n in names)
    parse = "\n".join(f"            {rust_str(n)} => Keyword::{camel(n)}," for n in names)
    return (
        "/// Every keyword any playbook object accepts.\n"
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n"
        f"pub enum Keyword {{\n{variants}\n}}\n\n"
        "impl Keyword {\n"
        "    pub fn as_str(self) -> &'static str {\n        match self {\n"
        f"{arms}\n        }}\n    }}\n\n"
        "    pub fn parse(name: &str) -> Option<Keyword> {\n        Some(match name {\n"
        f"{parse}\n            _ => return None,\n        }})\n    }}\n}}\n\n"
    )


def attributes(cls) -> str:
    rows = []
    for name, attr in sorted(cls.fattributes.items()):
        listof = ", ".join(rust_str(t.__name__) for t in (attr.listof or ()))
        rows.append(
            f"    Attribute {{ keyword: Keyword::{camel(name)}, name: {rust_str(name)}, isa: Isa::{ISA[attr.isa]}, "
            f"inheritable: {str(not isinstance(attr, NonInheritableFieldAttribute)).lower()}, "
            f"is_static: {str(bool(attr.static)).lower()}, required: {str(bool(attr.required)).lower()}, "
            f"extend: {str(bool(getattr(attr, "extend", False))).lower()}, prepend: {str(bool(getattr(attr, "prepend", False))).lower()}, "
            f"priority: {attr.priority}, always_post_validate: {str(bool(attr.always_post_validate)).lower()}, "
            f"listof: &[{listof}] }},"
        )
    return "\n".join(rows)


def routing() -> list[tuple[str, str, str, str]]:
    """(plugin type, name, kind, detail) for builtin routing that ansible-core alone can act on."""
    path = Path(ansible.__file__).parent / "config" / "ansible_builtin_runtime.yml"
    data = yaml.safe_load(path.read_text())["plugin_routing"]
    out = []
    for ptype in ("modules", "action", "lookup"):
        for name, entry in sorted((data.get(ptype) or {}).items()):
            if "tombstone" in entry:
                t = entry["tombstone"]
                when = t.get("removal_date") or t.get("removal_version") or ""
                out.append((ptype, name, "tombstone", f"{t.get('warning_text', '')}|{when}|{'date' if 'removal_date' in t else 'version'}"))
            elif str(entry.get("redirect", "")).startswith("ansible.builtin."):
                out.append((ptype, name, "redirect", entry["redirect"].removeprefix("ansible.builtin.")))
            elif entry.get("redirect"):
                out.append((ptype, name, "collection", entry["redirect"]))
            elif "deprecation" in entry:
                d = entry["deprecation"]
                out.append((ptype, name, "deprecated", f"{d.get('warning_text', '')}|{d.get('removal_version', '')}"))
    return out


def action_groups() -> str:
    """ansible-core's `action_groups` mapping, as YAML text."""
    path = Path(ansible.__file__).parent / "config" / "ansible_builtin_runtime.yml"
    groups = yaml.safe_load(path.read_text())["action_groups"]
    return yaml.safe_dump({"action_groups": groups}, sort_keys=False)


def main() -> None:
    parts = [
        "// @generated by scripts/gen-playbook-tables.py from ansible-core "
        f"{ansible.__version__}. Do not edit by hand.\n",
        "// These are facts about ansible-core: keyword tables, builtin plugin names and routing.\n\n",
        "use super::{Attribute, Isa, Routing};\n\n",
        keyword_enum(),
    ]
    for label, cls in CLASSES:
        const = "".join("_" + c if c.isupper() else c.upper() for c in label).lstrip("_").upper()
        parts.append(f"pub static {const}_ATTRIBUTES: &[Attribute] = &[\n{attributes(cls)}\n];\n\n")
    for const, package in (
        ("BUILTIN_MODULES", "ansible.modules"),
        ("BUILTIN_ACTIONS", "ansible.plugins.action"),
        ("BUILTIN_LOOKUPS", "ansible.plugins.lookup"),
        ("BUILTIN_FILTER_FILES", "ansible.plugins.filter"),
        ("BUILTIN_CONNECTIONS", "ansible.plugins.connection"),
        ("BUILTIN_BECOME", "ansible.plugins.become"),
        ("BUILTIN_STRATEGIES", "ansible.plugins.strategy"),
    ):
        names = ", ".join(rust_str(n) for n in plugin_names(package))
        parts.append(f"pub static {const}: &[&str] = &[{names}];\n\n")
    rows = []
    for ptype, name, kind, detail in routing():
        if kind == "redirect":
            rows.append(f"    ({rust_str(ptype)}, {rust_str(name)}, Routing::Redirect({rust_str(detail)})),")
        elif kind == "collection":
            rows.append(f"    ({rust_str(ptype)}, {rust_str(name)}, Routing::Collection({rust_str(detail)})),")
        elif kind == "deprecated":
            text, version = detail.split("|")
            rows.append(
                f"    ({rust_str(ptype)}, {rust_str(name)}, Routing::Deprecated {{ warning_text: {rust_str(text)}, "
                f"removal_version: {rust_str(version)} }}),"
            )
        else:
            text, when, unit = detail.split("|")
            rows.append(
                f"    ({rust_str(ptype)}, {rust_str(name)}, Routing::Tombstone {{ warning_text: {rust_str(text)}, "
                f"removed: {rust_str(when)}, by_date: {str(unit == 'date').lower()} }}),"
            )
    parts.append("pub static BUILTIN_ROUTING: &[(&str, &str, Routing)] = &[\n" + "\n".join(rows) + "\n];\n")
    parts.append(
        "\n/// ansible-core's own `action_groups` (its runtime file's), as YAML: read as a collection's\n"
        "/// `meta/runtime.yml` is.\n"
        f"pub static BUILTIN_ACTION_GROUPS: &str = {rust_str(action_groups())};\n"
    )
    OUT.write_text("".join(parts))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
