# tack's payload builder, run by the controller with the interpreter that has ansible-core.
#
# Reads a JSON list of requests on stdin, each {"name": N} for ansible-core's module N or
# {"name": N, "path": P, "utils": [DIR, ...], "collections": [ROOT, ...]} for the module
# file P a library/ directory or a collection holds (its module_utils looked for in DIRs
# first, `ansible_collections` imports in the collection ROOTs), and writes one JSON object on stdout:
# the ansible-core version, the module-argument defaults ansible's configuration gives
# (`internal`), and per request (in order) its fully qualified name, serialization profile
# and the zip of its source with the closure of module_utils it imports, or why it cannot
# be built. The task's arguments are never part of a payload, except in the one kind of
# request that asks for ansible's whole AnsiballZ file of one task ({"wrapper": {"args",
# "task_vars", "environment", "remote_is_local"}} besides the module's name and path), which
# is answered with {"wrapper": base64, "file": its AnsiballZ file name} and never kept. The dependency walk is
# ansible-core's own (`recursive_finder`); this script only calls it with a fixed date so
# that equal inputs give equal bytes.
#
# Each module also says what its payload was made from (`inputs`), so that the controller can
# keep it for later runs: every source file read into it (path, size, mtime in ns) and every
# directory where a file of the same import name would have been found first (path, mtime or
# null when absent). `inputs` is null when part of the payload came from elsewhere (a
# generated redirect shim, an embedded resource), which the controller does not keep.
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
            inputs = {"files": [file_state(path)], "dirs": []}
            out["modules"].append({"style": other_style(module_common, source), "inputs": inputs})
            continue
        source = style
        if request.get("wrapper") is not None:
            out["modules"].append(build_wrapper(module_common, name, path, request["wrapper"]))
            continue
        try:
            fqn = module_common._get_ansible_module_fqn(path)
        except ValueError:
            # ansible's own fallback for a module outside ansible's and collections' trees.
            fqn = "ansible.legacy.%s" % name
        buf = io.BytesIO()
        manager = _builder.ExtensionManager.create(task_vars={})
        try:
            with Recording(buf, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
                zf.module_arcname = fqn.replace(".", "/") + ".py"
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
            "inputs": zf.inputs(path, module_common, module_utils_loader),
        })
    json.dump(out, sys.stdout)


def build_wrapper(module_common, name, path, wrapper):
    """ansible's whole AnsiballZ file for one task (its arguments in it), built by ansible's
    `modify_module` with the task's variables (the AnsiballZ extensions' settings, the
    interpreter its shebang names): what a task debugging its module runs."""
    from ansible import constants as C
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    task_vars = wrapper["task_vars"]
    try:
        built = module_common.modify_module(
            module_name=name,
            module_path=path,
            module_args=wrapper["args"],
            templar=Templar(loader=DataLoader(), variables=task_vars),
            task_vars=task_vars,
            module_compression=C.config.get_config_value("DEFAULT_MODULE_COMPRESSION", variables=task_vars),
            environment=wrapper["environment"],
            remote_is_local=wrapper["remote_is_local"],
        )
    except Exception as e:  # ansible fails the task with the builder's message
        return {"error": str(e)}
    return {
        "wrapper": base64.b64encode(built.b_module_data).decode("ascii"),
        "file": "AnsiballZ_" + os.path.basename(path),
    }


class Recording(zipfile.ZipFile):
    """A zip that notes where each file written into it came from (ansible's locators tag
    what they read with its origin)."""

    module_arcname = None
    # ansible's own namespace package stubs, generated from its version alone.
    SYNTHETIC = ("ansible/__init__.py", "ansible/module_utils/__init__.py")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sources = set()
        self.arcnames = []
        self.foreign = False

    def writestr(self, zinfo_or_arcname, data, *args, **kwargs):
        from ansible._internal._datatag._tags import Origin

        arcname = getattr(zinfo_or_arcname, "filename", zinfo_or_arcname)
        origin = Origin.get_tag(data)
        if origin is not None and origin.path:
            self.sources.add(origin.path)
        elif data and arcname not in self.SYNTHETIC and arcname != self.module_arcname:
            self.foreign = True
        self.arcnames.append(arcname)
        return super().writestr(zinfo_or_arcname, data, *args, **kwargs)

    def inputs(self, path, module_common, module_utils_loader):
        if self.foreign:
            return None
        from ansible.utils.collection_loader import AnsibleCollectionConfig

        utils = [p for p in module_utils_loader._get_paths(subdirs=False) if os.path.isdir(p)]
        utils.append(module_common._MODULE_UTILS_PATH)
        roots = list(AnsibleCollectionConfig.collection_paths or [])
        dirs = {os.path.dirname(path)}
        for arcname in self.arcnames:
            parent = os.path.dirname(arcname)
            if arcname.startswith("ansible/module_utils/"):
                rel = parent[len("ansible/module_utils"):].lstrip("/")
                dirs.update(os.path.join(p, rel) for p in utils)
            elif arcname.startswith("ansible_collections/"):
                dirs.update(os.path.join(r, parent) for r in roots)
        files = sorted(self.sources | {path})
        return {"files": [file_state(f) for f in files], "dirs": [dir_state(d) for d in sorted(dirs)]}


def file_state(path):
    # A collection's package with no `__init__.py` gets one ansible makes up, tagged with the
    # path it would have: it stays valid while that file stays absent.
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [os.path.abspath(path), None, None]
    return [os.path.abspath(path), st.st_size, st.st_mtime_ns]


def dir_state(path):
    try:
        return [os.path.abspath(path), os.stat(path).st_mtime_ns]
    except OSError:
        return [os.path.abspath(path), None]


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
