# tack's bridge to inventory plugins tack has no native code for (`constructed`, `generator`,
# a collection's, one in an `inventory_plugins/` directory): ansible-core's own plugin,
# parsing one source into ansible's own InventoryData, rebuilt from what tack read so far.
#
# Protocol: one JSON object in on stdin ({"plugin": NAME, "source": PATH, "inventory":
# {"groups": [...], "hosts": [...]}, "processed": [SOURCE, ...], "collections": [...],
# "basedir": DIR}), one out on the original stdout: {"declined": true}, {"failed": MESSAGE},
# {"fatal": MESSAGE} (ansible-core cannot be loaded), or {"inventory": ...} with every group
# and host as they stand after the plugin parsed the source. Values cross as `python_wire.py`
# writes them, strings with their trust ("unsafe" for one not trusted as a template) and
# vaulted values as "vault" ciphertext; anything the plugin prints goes to stderr.
import json
import os
import sys

# `decode` and `encode` are `python_wire.py`'s, prepended; the inventory's strings cross with
# their trust.


def decode_trusted(value):
    """What tack read from a file is trusted as a template, as ansible trusts it; what tack
    holds as `!unsafe` (or as a template's result) is not."""
    from ansible.template import trust_as_template
    return decode(value, on_str=trust_as_template)


def encode_trusted(value):
    def special(v):
        from ansible.parsing.vault import EncryptedString
        from ansible.template import is_trusted_as_template
        if isinstance(v, EncryptedString):
            return {"__tack__": "vault", "ciphertext": v._ciphertext}
        if isinstance(v, str) and not is_trusted_as_template(v):
            return {"__tack__": "unsafe", "text": str(v)}
        return None
    return encode(value, special=special, default=str)


def origin_of(ex):
    """Where in a file the innermost error that names a place points, as ansible shows it."""
    from ansible._internal._datatag._tags import Origin
    found = None
    while ex is not None:
        origin = Origin.get_tag(getattr(ex, "obj", None))
        if origin is not None and origin.path:
            found = {"path": origin.path, "line": origin.line_num or 0, "col": origin.col_num or 0}
        ex = ex.__cause__
    return found


def main():
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)

    def send(message):
        out.write(json.dumps(message).encode("utf-8") + b"\n")

    request = json.loads(sys.stdin.buffer.readline())
    try:
        from ansible._internal._errors._error_utils import format_exception_message
        from ansible.inventory.data import InventoryData
        from ansible.parsing.dataloader import DataLoader
        from ansible.plugins.loader import cache_loader, init_plugin_loader, inventory_loader
        from ansible.utils.display import Display

        from ansible import context
        from ansible.module_utils.common.collections import ImmutableDict

        # What a plugin reads of the command line (`generator` and `constructed` template
        # with the `-e` values, as ansible's `load_extra_vars` reads them).
        context.CLIARGS = ImmutableDict(extra_vars=tuple(request.get("extra_vars", [])))
        init_plugin_loader(request.get("collections") or None)
        for directory in request.get("plugin_dirs", []):
            inventory_loader.add_directory(directory)
        for directory in request.get("cache_plugin_dirs", []):
            cache_loader.add_directory(directory)
        loader = DataLoader()
        loader.set_basedir(request["basedir"])
        Display().verbosity = request.get("verbosity", 0)
    except Exception as ex:
        send({"fatal": "%s: %s" % (type(ex).__name__, ex)})
        return

    inventory = InventoryData()
    current = request["inventory"]
    for group in current["groups"]:
        inventory.add_group(group["name"])
    for host in current["hosts"]:
        inventory.add_host(host["name"])
    for group in current["groups"]:
        for child in group["children"]:
            inventory.add_child(group["name"], child)
        for host in group["hosts"]:
            inventory.add_child(group["name"], host)
        for key, value in decode_trusted(group["vars"]).items():
            inventory.set_variable(group["name"], key, value)
        if group.get("priority", 1) != 1:
            inventory.groups[group["name"]].set_priority(group["priority"])
    for host in current["hosts"]:
        for key, value in decode_trusted(host["vars"]).items():
            inventory.set_variable(host["name"], key, value)
    inventory.processed_sources = list(request.get("processed", []))
    source = request["source"]
    try:
        plugin = inventory_loader.get(request["plugin"])
        if plugin is None:
            send({"failed": "inventory config %r specifies unknown plugin %r"
                  % (source, request["plugin"])})
            return
        if not plugin.verify_file(source):
            send({"declined": True})
            return
        inventory.current_source = source
        # As ansible's inventory manager asks (its cache unless `--flush-cache`).
        plugin.parse(inventory, loader, source, cache=request.get("cache", True))
        try:
            plugin.update_cache_if_changed()
        except AttributeError:
            pass
        inventory.current_source = None
    except Exception as ex:
        send({"failed": format_exception_message(ex), "origin": origin_of(ex)})
        return

    groups = [{
        "name": name,
        "vars": encode_trusted(group.vars),
        "children": [child.name for child in group.child_groups],
        "hosts": [host.name for host in group.hosts],
        "priority": group.priority,
    } for name, group in inventory.groups.items()]
    hosts = [{"name": name, "vars": encode_trusted(host.vars)} for name, host in inventory.hosts.items()]
    send({"inventory": {"groups": groups, "hosts": hosts}})


main()
