# tack's worker for template plugins written in Python: filter, test and lookup plugins
# beside a playbook, in a role, or on the configured plugin paths. The controller starts it
# once per run, with the interpreter that has ansible-core, when the run has such plugins.
#
# Protocol: one JSON object per line. The first line in is the setup ({"dirs": [...],
# "collections": [ROOT, ...], "basedir": DIR}); the worker answers with the Jinja plugin names the directories give
# ({"names": {"filter": [...], "test": [...]}}) or {"fatal": MESSAGE}. Then each line in
# is a call ({"op": "call", "kind": K, "name": N, "args": [...], "kwargs": {...}}) answered
# by {"op": "result", "value": V, "deprecations": [...]}, {"op": "error", "final": bool,
# "message": M} or {"op": "missing"} (no plugin of that name). While a lookup runs, reading one of the task's variables sends
# {"op": "var", "name": N} (or {"op": "names"}) and waits for {"op": "value", ...}; a call
# may arrive meanwhile (the variable's template used a plugin) and is answered first.
#
# Values cross as JSON; what JSON cannot say (a dict with keys that are not strings, an
# integer beyond 64 bits, a float that is not finite) is wrapped as {"__tack__": KIND, ...}.
# Plugins are found and called by ansible-core's own loaders; what this script adds is only
# the transport, and ansible's own error wording for a plugin that fails to load or raises.
import json
import math
import os
import sys
from collections.abc import Mapping


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        kind = value.get("__tack__")
        if kind is None:
            return {k: decode(v) for k, v in value.items()}
        if kind == "map":
            return {decode(k): decode(v) for k, v in value["items"]}
        if kind == "int":
            return int(value["digits"])
        if kind == "float":
            return float(value["repr"])
        raise ValueError("unknown value kind %r" % kind)
    return value


def encode(value):
    if value is None or isinstance(value, (bool, str)):
        return str(value) if isinstance(value, str) and type(value) is not str else value
    if isinstance(value, int):
        if -(2 ** 63) <= value < 2 ** 63:
            return int(value)
        return {"__tack__": "int", "digits": str(int(value))}
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return {"__tack__": "float", "repr": repr(float(value))}
    if isinstance(value, Mapping):
        if all(type(k) is str for k in value) and "__tack__" not in value:
            return {k: encode(v) for k, v in value.items()}
        return {"__tack__": "map", "items": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    if isinstance(value, (list, tuple, set, frozenset)) or hasattr(value, "__iter__"):
        return [encode(v) for v in value]
    raise TypeError("a plugin's %s value cannot be handed back to tack" % type(value).__name__)


class Channel:
    def __init__(self):
        self.inp = sys.stdin.buffer
        # The protocol keeps the original stdout; anything a plugin prints goes to stderr.
        self.out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        self.handler = None

    def send(self, message):
        self.out.write(json.dumps(message).encode("utf-8") + b"\n")

    def read(self):
        line = self.inp.readline()
        if not line:
            sys.exit(0)
        return json.loads(line)

    def wait_value(self, request):
        """Asks the controller for something and answers the calls that arrive meanwhile."""
        self.send(request)
        while True:
            message = self.read()
            if message.get("op") == "value":
                return message
            self.send(self.handler(message))


class TaskVars(Mapping):
    """The running template's variables, read from the controller on demand."""

    def __init__(self, channel):
        self._channel = channel
        self._seen = {}

    def __getitem__(self, name):
        if name not in self._seen:
            reply = self._channel.wait_value({"op": "var", "name": name})
            if "missing" in reply:
                raise KeyError(name)
            if "error" in reply:
                from ansible.errors import AnsibleUndefinedVariable
                raise AnsibleUndefinedVariable(reply["error"])
            self._seen[name] = decode(reply["value"])
        return self._seen[name]

    def _names(self):
        return self._channel.wait_value({"op": "names"})["names"]

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def __contains__(self, name):
        try:
            self[name]
        except KeyError:
            return False
        return True


def main():
    channel = Channel()
    setup = channel.read()
    try:
        from ansible._internal._errors._error_utils import format_exception_message
        from ansible._internal._templating._errors import (
            AnsibleTemplatePluginLoadError,
            AnsibleTemplatePluginRuntimeError,
        )
        from ansible.module_utils.common.collections import is_sequence
        from ansible.parsing.dataloader import DataLoader
        from ansible.plugins.loader import (
            _DeferredPluginLoadFailure,
            add_all_plugin_dirs,
            filter_loader,
            init_plugin_loader,
            lookup_loader,
            test_loader,
        )
        from ansible.template import Templar

        init_plugin_loader(setup.get("collections") or None)
        for directory in setup["dirs"]:
            add_all_plugin_dirs(directory)
        loader = DataLoader()
        loader.set_basedir(setup["basedir"])
        jinja = {"filter": filter_loader, "test": test_loader}
        names = {}
        plugins = {}
        for kind, plugin_loader in jinja.items():
            names[kind] = []
            list(plugin_loader.all())
            # The loader's own table, so that a plugin that failed to load is known by name
            # and fails where it is used, as ansible's does.
            for name, wrapper in plugin_loader._cached_non_collection_wrappers.items():
                failed = isinstance(wrapper, _DeferredPluginLoadFailure)
                if name.startswith("ansible.builtin.") or (
                        not failed and wrapper.ansible_name.startswith("ansible.builtin.")):
                    continue
                if "." in name:
                    continue
                # ansible resolves `ansible.legacy.NAME` by its short name.
                for spelling in (name, "ansible.legacy." + name):
                    names[kind].append(spelling)
                    plugins[(kind, spelling)] = wrapper
    except Exception as ex:  # the run cannot use these plugins: say why, once
        channel.send({"fatal": "%s: %s" % (type(ex).__name__, ex)})
        return
    channel.send({"names": names})

    def failure(ex, kind, name, wrap):
        if wrap is not None:
            try:
                raise wrap(kind, name) from ex
            except Exception as wrapped:
                ex = wrapped
        return format_exception_message(ex)

    def call_jinja(message):
        kind, name = message["kind"], message["name"]
        wrapper = plugins.get((kind, name))
        if wrapper is None:
            # A collection's plugin, by its fully qualified name.
            try:
                wrapper = jinja[kind].get(name)
            except KeyError:
                wrapper = None
            except Exception as ex:
                return {"op": "error", "final": True,
                        "message": failure(ex, kind, name, AnsibleTemplatePluginLoadError)}
            if wrapper is None:
                return {"op": "missing"}
            plugins[(kind, name)] = wrapper
        if isinstance(wrapper, _DeferredPluginLoadFailure):
            return {"op": "error", "final": True,
                    "message": failure(wrapper.ex, kind, name, AnsibleTemplatePluginLoadError)}
        function = wrapper.j2_function
        args = decode(message["args"])
        kwargs = decode(message["kwargs"])
        deprecations = []
        try:
            result = function(*args, **kwargs)
            if kind == "test" and not isinstance(result, bool):
                deprecations.append(
                    "The test plugin %r returned a non-boolean result of type %r. "
                    "Test plugins must have a boolean result." % (wrapper.ansible_name, type(result)))
                result = bool(result)
            value = encode(result)
        except Exception as ex:
            return {"op": "error", "final": True,
                    "message": failure(ex, kind, wrapper.ansible_name, AnsibleTemplatePluginRuntimeError)}
        return {"op": "result", "value": value, "deprecations": deprecations}

    def call_lookup(message):
        name = message["name"]
        variables = TaskVars(channel)
        templar = Templar(loader=loader, variables=variables)
        try:
            instance = lookup_loader.get(name, loader=loader, templar=templar)
        except Exception as ex:
            return {"op": "error", "final": True,
                    "message": failure(ex, "lookup", name, AnsibleTemplatePluginLoadError)}
        if instance is None:
            return {"op": "missing"}
        terms = decode(message["args"])
        kwargs = decode(message["kwargs"])
        try:
            result = instance.run(terms, variables=variables, **kwargs)
            if not is_sequence(result):
                raise TypeError(f"returned {type(result)} instead of {list}")
            value = encode(list(result))
        except Exception as ex:
            return {"op": "error", "final": False, "message": failure(ex, "lookup", name, None)}
        return {"op": "result", "value": value, "deprecations": []}

    def handle(message):
        if message.get("op") != "call":
            return {"op": "error", "final": True, "message": "unexpected request %r" % message}
        if message["kind"] == "lookup":
            return call_lookup(message)
        return call_jinja(message)

    channel.handler = handle
    while True:
        channel.send(handle(channel.read()))


main()
