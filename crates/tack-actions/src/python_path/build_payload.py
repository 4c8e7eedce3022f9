# tack's payload builder, run by the controller with the interpreter that has ansible-core.
#
# Reads a JSON list of requests on stdin, each {"name": N} for ansible-core's module N or
# {"name": N, "path": P, "utils": [DIR, ...], "collections": [ROOT, ...]} for the module
# file P a library/ directory or a collection holds (its module_utils looked for in DIRs
# first, `ansible_collections` imports in the collection ROOTs), and writes one JSON object on stdout:
# the ansible-core version, the module-argument defaults ansible's configuration gives
# (`internal`), and per request (in order) its fully qualified name, serialization profile
# and the zip of its source with the closure of module_utils it imports, or why it cannot
# be built. The task's arguments are never part of a payload. The dependency walk is
# ansible-core's own (`recursive_finder`); this script only calls it with a fixed date so
# that equal inputs give equal bytes.
import base64
import datetime
import io
import json
import os
import sys
import zipfile


def main():
    requests = json.load(sys.stdin)
    import ansible
    from ansible import constants as C
    from ansible.executor import module_common
    from ansible._internal._ansiballz import _builder
    from ansible._internal._datatag._tags import Origin
    from ansible.plugins.loader import init_plugin_loader, module_loader, module_utils_loader
    from ansible.module_utils._internal import _traceback

    # A collection's module resolves its `ansible_collections` imports through ansible's
    # collection loader, given the same roots the run searched.
    collections = [p for r in requests for p in r.get("collections", [])]
    init_plugin_loader(collections or None)
    when = datetime.datetime(1980, 1, 1, tzinfo=datetime.timezone.utc)
    out = {"version": ansible.__version__, "modules": []}
    out["internal"] = {
        "_ansible_debug": C.DEFAULT_DEBUG,
        "_ansible_syslog_facility": C.DEFAULT_SYSLOG_FACILITY,
        "_ansible_selinux_special_fs": C.DEFAULT_SELINUX_SPECIAL_FS,
        "_ansible_keep_remote_files": C.DEFAULT_KEEP_REMOTE_FILES,
        "_ansible_target_log_info": C.config.get_config_value("TARGET_LOG_INFO"),
        "_ansible_inject_invocation": C.config.get_config_value("INJECT_INVOCATION"),
        "_ansible_tracebacks_for": _traceback.traceback_for(),
    }
    for request in requests:
        name = request["name"]
        path = request.get("path")
        if path is None:
            found = module_loader.find_plugin_with_context("ansible.builtin." + name)
            if not found.resolved or not found.plugin_resolved_path.endswith(".py"):
                out["modules"].append({"error": "ansible-core has no Python module '%s'" % name})
                continue
            path = found.plugin_resolved_path
        for directory in request.get("utils", []):
            module_utils_loader.add_directory(directory)
        with open(path, "rb") as f:
            source = f.read()
        style = python_style(module_common, source)
        if style is None:
            out["modules"].append({"style": other_style(module_common, source)})
            continue
        source = style
        try:
            fqn = module_common._get_ansible_module_fqn(path)
        except ValueError:
            # ansible's own fallback for a module outside ansible's and collections' trees.
            fqn = "ansible.legacy.%s" % name
        buf = io.BytesIO()
        manager = _builder.ExtensionManager.create(task_vars={})
        try:
            with zipfile.ZipFile(buf, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
                tagged = Origin(path=path).tag(source)
                meta = module_common.recursive_finder(name, fqn, tagged, zf, when, manager)
                module_common._add_module_to_zip(zf, when, fqn, source, path, manager)
        except Exception as e:  # ansible fails the task with the finder's message
            out["modules"].append({"error": str(e)})
            continue
        out["modules"].append({
            "fqn": fqn,
            "profile": meta.serialization_profile,
            "zip": base64.b64encode(buf.getvalue()).decode("ascii"),
        })
    json.dump(out, sys.stdout)


def python_style(module_common, source):
    """The module's source as ansiballz sends it when it is a new-style Python module
    (ansible's `_find_module_utils` tests, in its order), else None."""
    if module_common._is_binary(source):
        return None
    if module_common.REPLACER in source:
        return source.replace(module_common.REPLACER, b"from ansible.module_utils.basic import *")
    if module_common.NEW_STYLE_PYTHON_MODULE_RE.search(source):
        return source
    return None


def other_style(module_common, source):
    """What ansible calls a module that is not new-style Python."""
    if module_common._is_binary(source):
        return "binary"
    if module_common.REPLACER_WINDOWS in source or b"#Requires -" in source or b"#AnsibleRequires -" in source:
        return "powershell"
    if module_common.REPLACER_JSONARGS in source:
        return "jsonargs"
    if b"WANT_JSON" in source:
        return "non_native_want_json"
    return "old"


main()
