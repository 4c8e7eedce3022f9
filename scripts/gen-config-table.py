#!/usr/bin/env python3
"""Generate crates/tack-config/src/table.rs: every setting ansible-core 2.21.5 defines.

usage: scripts/gen-config-table.py

The table is data about ansible, read from the reference installation ($ANSIBLE_REF, default
/opt/ansible-ref): the core settings from `ansible/config/base.yml`, in that file's order (ansible
resolves them in that order, so the first invalid one is the one reported), and the options of
the plugins tack reads configuration for, as ansible's plugin loader merges them with their doc
fragments. Nothing here is hand-written: rerun the script when the reference changes.

Defaults that are templates are handled in two ways:
- `{{ NAME ~ "text" }}` or `{{ NAME }}` where NAME is a setting defined earlier becomes a
  `DefaultValue::Template`, rendered at run time from the resolved setting (ANSIBLE_HOME);
- any other template may only use constants.py's fixed names (REJECT_EXTS); it is rendered here,
  with the same Jinja2 native environment ansible uses, into a literal.
Anything else fails the script, so a new kind of default cannot slip through unnoticed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates" / "tack-config" / "src" / "table.rs"
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))

# The plugins whose options tack resolves from ansible.cfg and the environment.
PLUGINS = [("connection", "ssh"), ("callback", "default"), ("shell", "sh"), ("inventory", "script")]

TYPES = {
    "boolean": "Bool", "bool": "Bool",
    "integer": "Int", "int": "Int",
    "float": "Float",
    "list": "List",
    "none": "NoneType",
    "path": "Path",
    "temppath": "TmpPath", "tmppath": "TmpPath", "tmp": "TmpPath",
    "pathspec": "PathSpec",
    "pathlist": "PathList",
    "dictionary": "Dict", "dict": "Dict",
    "string": "Str", "str": "Str",
}

# Runs inside the reference's python: dumps the definitions as JSON on stdout.
EXTRACT = r"""
import json, os, sys
from ansible import _internal
_internal.setup()
from ansible import constants as C
from ansible.plugins.loader import init_plugin_loader
import ansible.plugins.loader as loader

init_plugin_loader([])
plugins = json.loads(sys.argv[1])
out = {"base": {}, "plugins": [], "static": {}}
for name, d in C.config.get_configuration_definitions().items():
    if name == "CONFIG_FILE":
        continue
    out["base"][name] = d
for ptype, pname in plugins:
    getattr(loader, ptype + "_loader").get(pname, class_only=True)
    defs = C.config.get_configuration_definitions(ptype, pname)
    out["plugins"].append({"type": ptype, "name": pname, "options": defs})
settings = set(C.config.get_configuration_definitions())
for k, v in vars(C).items():
    if k.isupper() and k not in settings and isinstance(v, (list, tuple, str, int, bool)):
        out["static"][k] = list(v) if isinstance(v, tuple) else v
json.dump(out, sys.stdout, default=str)
"""


def extract() -> dict:
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"}
        proc = subprocess.run(
            [str(REF / "bin" / "python"), "-c", EXTRACT, json.dumps(PLUGINS)],
            cwd=home, env=env, capture_output=True, text=True, check=False,
        )
    if proc.returncode != 0:
        raise SystemExit(f"extracting definitions failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def rust_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def literal(v) -> str:
    if v is None:
        return "Literal::Null"
    if isinstance(v, bool):
        return f"Literal::Bool({'true' if v else 'false'})"
    if isinstance(v, int):
        return f"Literal::Int({v})"
    if isinstance(v, float):
        return f"Literal::Float({v!r})"
    if isinstance(v, str):
        return f"Literal::Str({rust_str(v)})"
    if isinstance(v, list):
        return "Literal::List(&[" + ", ".join(literal(x) for x in v) + "])"
    if isinstance(v, dict):
        items = ", ".join(f"({rust_str(str(k))}, {literal(x)})" for k, x in v.items())
        return f"Literal::Dict(&[{items}])"
    raise SystemExit(f"cannot represent default {v!r}")


TEMPLATE_RE = re.compile(r'^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:~\s*"([^"\\]*)"\s*)?\}\}$')


def default(name: str, d: dict, earlier: set, static: dict) -> str:
    value = d.get("default")
    if not (isinstance(value, str) and value.startswith("{{") and value.endswith("}}")):
        return f"DefaultValue::Literal({literal(value)})"
    m = TEMPLATE_RE.match(value)
    if m and m.group(1) in earlier:
        # tack-config falls back to the default *as written* for an empty environment variable
        # only when conversion fails, which only these types can; a rendered template there
        # would need the raw text kept.
        if TYPES.get(str(d.get("type")).lower()) in ("Int", "Float", "NoneType", "Dict"):
            raise SystemExit(f"{name}: templated default on a type whose conversion can fail")
        return (f"DefaultValue::Template {{ setting: {rust_str(m.group(1))}, "
                f"suffix: {rust_str(m.group(2) or '')} }}")
    # Only constants.py's fixed names may appear: render now, as ansible's NativeEnvironment does.
    sys.path.insert(0, str(next((REF / "lib").glob("python3*/site-packages"))))
    from jinja2 import StrictUndefined
    from jinja2.nativetypes import NativeEnvironment
    try:
        rendered = NativeEnvironment(undefined=StrictUndefined).from_string(value).render(static)
    except Exception as ex:  # noqa: BLE001 - any failure means a template form we do not know
        raise SystemExit(f"{name}: cannot handle templated default {value!r}: {ex}")
    return f"DefaultValue::Literal({literal(rendered)})"


def deprecation(d) -> str:
    if not d:
        return "None"
    alt = d.get("alternatives", d.get("alternative", "none"))
    return (f"Some(&Deprecation {{ why: {rust_str(str(d['why']))}, "
            f"version: {rust_str(str(d['version']))}, alternatives: {rust_str(str(alt))} }})")


def setting(name: str, d: dict, earlier: set, static: dict) -> str:
    raw_type = d.get("type")
    type_name = raw_type.lower() if isinstance(raw_type, str) else None
    kind = TYPES.get(type_name, "Raw")
    env = ", ".join(
        f"EnvEntry {{ name: {rust_str(e['name'])}, deprecated: {deprecation(e.get('deprecated'))} }}"
        for e in d.get("env") or []
    )
    ini = ", ".join(
        f"IniEntry {{ section: {rust_str(e.get('section', 'defaults'))}, key: {rust_str(e['key'])}, "
        f"deprecated: {deprecation(e.get('deprecated'))} }}"
        for e in d.get("ini") or []
    )
    variables = ", ".join(rust_str(e["name"]) for e in d.get("vars") or [])
    choices = d.get("choices")
    if choices is None:
        choices_src = "None"
    elif isinstance(choices, (list, dict)):
        choices_src = "Some(&[" + ", ".join(rust_str(str(c)) for c in choices) + "])"
    else:
        raise SystemExit(f"{name}: choices of an unexpected shape: {choices!r}")
    return (
        f"SettingDef {{ name: {rust_str(name)}, value_type: ValueType::{kind}, "
        f"type_name: {rust_str(type_name or '')}, default: {default(name, d, earlier, static)}, "
        f"env: &[{env}], ini: &[{ini}], vars: &[{variables}], choices: {choices_src}, "
        f"deprecated: {deprecation(d.get('deprecated'))} }}"
    )


def main() -> None:
    data = extract()
    static = data["static"]
    out = [
        "// @generated by scripts/gen-config-table.py from ansible-core 2.21.5; do not edit.",
        "//! Every setting ansible-core defines: the core ones from `ansible/config/base.yml` in that",
        "//! file's order, then the options of the plugins tack configures. Data, not code.",
        "",
        "use crate::def::{",
        "    DefaultValue, Deprecation, EnvEntry, IniEntry, Literal, PluginDef, SettingDef, ValueType,",
        "};",
        "",
        "/// ansible's core settings, in the order ansible resolves them.",
        "pub(crate) static BASE: &[SettingDef] = &[",
    ]
    earlier: set = set()
    for name, d in data["base"].items():
        out.append(setting(name, d, earlier, static) + ",")
        earlier.add(name)
    out.append("];")
    out.append("")
    out.append("/// The options of the plugins tack reads configuration for.")
    out.append("pub(crate) static PLUGINS: &[PluginDef] = &[")
    for p in data["plugins"]:
        out.append(f"PluginDef {{ plugin_type: {rust_str(p['type'])}, name: {rust_str(p['name'])}, options: &[")
        for name, d in p["options"].items():
            out.append(setting(name, d, set(), static) + ",")
        out.append("] },")
    out.append("];")
    OUT.write_text("\n".join(out) + "\n")
    subprocess.run(["rustfmt", "--edition", "2024", "--config", "max_width=100,use_small_heuristics=Max",
                    str(OUT)], check=True)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(data['base'])} settings, "
          f"{sum(len(p['options']) for p in data['plugins'])} plugin options")


if __name__ == "__main__":
    main()
