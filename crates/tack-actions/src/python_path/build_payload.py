# tack's payload builder, run by the controller with the interpreter that has ansible-core.
#
# Reads a JSON list of builtin module names on stdin and writes one JSON object on stdout:
# the ansible-core version, the module-argument defaults ansible's configuration gives
# (`internal`), and per module its fully qualified name, serialization profile and the zip
# of its source with the closure of module_utils it imports. The task's arguments are never
# part of a payload. The dependency walk is ansible-core's own (`recursive_finder`); this
# script only calls it with a fixed date so that equal inputs give equal bytes.
import base64
import datetime
import io
import json
import sys
import zipfile


def main():
    names = json.load(sys.stdin)
    import ansible
    from ansible import constants as C
    from ansible.executor import module_common
    from ansible._internal._ansiballz import _builder
    from ansible.plugins.loader import init_plugin_loader, module_loader
    from ansible.module_utils._internal import _traceback

    init_plugin_loader()
    when = datetime.datetime(1980, 1, 1, tzinfo=datetime.timezone.utc)
    out = {"version": ansible.__version__, "modules": {}, "errors": {}}
    out["internal"] = {
        "_ansible_debug": C.DEFAULT_DEBUG,
        "_ansible_syslog_facility": C.DEFAULT_SYSLOG_FACILITY,
        "_ansible_selinux_special_fs": C.DEFAULT_SELINUX_SPECIAL_FS,
        "_ansible_keep_remote_files": C.DEFAULT_KEEP_REMOTE_FILES,
        "_ansible_target_log_info": C.config.get_config_value("TARGET_LOG_INFO"),
        "_ansible_inject_invocation": C.config.get_config_value("INJECT_INVOCATION"),
        "_ansible_tracebacks_for": _traceback.traceback_for(),
    }
    for name in names:
        found = module_loader.find_plugin_with_context("ansible.builtin." + name)
        if not found.resolved or not found.plugin_resolved_path.endswith(".py"):
            out["errors"][name] = "ansible-core has no Python module '%s'" % name
            continue
        path = found.plugin_resolved_path
        with open(path, "rb") as f:
            source = f.read()
        fqn = module_common._get_ansible_module_fqn(path)
        buf = io.BytesIO()
        manager = _builder.ExtensionManager.create(task_vars={})
        with zipfile.ZipFile(buf, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
            meta = module_common.recursive_finder(name, fqn, source, zf, when, manager)
            module_common._add_module_to_zip(zf, when, fqn, source, path, manager)
        out["modules"][name] = {
            "fqn": fqn,
            "profile": meta.serialization_profile,
            "zip": base64.b64encode(buf.getvalue()).decode("ascii"),
        }
    json.dump(out, sys.stdout)


main()
