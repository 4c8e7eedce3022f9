# tack's worker for template plugins written in Python: filter, test and lookup plugins
# beside a playbook, in a role, or on the configured plugin paths. The controller starts it
# once per run, with the interpreter that has ansible-core, when the run has such plugins.
#
# Protocol: one JSON object per line. The first line in is the setup ({"dirs": [...],
# "collections": [ROOT, ...], "basedir": DIR}); the worker answers with the Jinja plugin names the directories give
# ({"names": {"filter": [...], "test": [...]}}) or {"fatal": MESSAGE}. Then each line in
# is a call ({"op": "call", "kind": K, "name": N, "args": [...], "kwargs": {...}}) answered
# by {"op": "result", "value": V, "deprecations": [{"msg", "version", "help", "context"}]},
# {"op": "undefined", "id": N} (the lookup's result is its undefined argument number N),
# {"op": "error", "final": bool,
# "message": M} or {"op": "missing"} (no plugin of that name). While a lookup runs, reading one of the task's variables sends
# {"op": "var", "name": N} (or {"op": "names"}) and waits for {"op": "value", ...} (with
# "deprecated": {"msg", "version", "help"} for a variable ansible-core deprecates); a call
# may arrive meanwhile (the variable's template used a plugin) and is answered first.
#
# Values cross as `python_wire.py` writes them (its `TaskVars` and `read_task_vars` too). Plugins are found and called by ansible-core's
# own loaders; what this script adds is only the transport, and ansible's own error wording for
# a plugin that fails to load or raises.


def main():
    channel = Channel()
    setup = channel.read()
    try:
        from ansible._internal._errors._error_utils import format_exception_message
        from ansible._internal._templating._jinja_common import MarkerError, get_first_marker_arg
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
        from ansible.utils.display import Display

        init_plugin_loader(setup.get("collections") or None)
        # A lookup's templar (its own, or one it makes with the variables it was handed)
        # renders with the task's variables as they are read from the controller.
        read_task_vars()
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
    display = Display()

    class CoreDeprecations:
        """ansible-core's own deprecations raised while a call runs (a deprecated variable
        a lookup's templating used), kept for the reply; others are shown as before."""

        def __init__(self):
            self.kept = []

        def __enter__(self):
            display._deprecated = self.raised
            return self

        def __exit__(self, *exc):
            del display._deprecated

        def raised(self, summary):
            deprecator = getattr(summary, "deprecator", None)
            if getattr(deprecator, "resolved_name", None) == "ansible.builtin" and summary.version:
                self.kept.append({"msg": summary.event.msg, "version": summary.version,
                                  "help": summary.event.help_text,
                                  "context": summary.event.formatted_source_context})
            else:
                type(display)._deprecated(display, summary)

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
        try:
            with CoreDeprecations() as raised:
                result = function(*args, **kwargs)
            deprecations = raised.kept
            if kind == "test" and not isinstance(result, bool):
                deprecations.append({
                    "msg": "The test plugin %r returned a non-boolean result of type %r. "
                    "Test plugins must have a boolean result." % (wrapper.ansible_name, type(result)),
                    "version": "2.23"})
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
        # A plugin that takes no undefined arguments is not called: the first is the result.
        if not instance.accept_args_markers:
            first = get_first_marker_arg(terms, kwargs)
            if first is not None:
                return {"op": "undefined", "id": undefined_number(first)}
        try:
            with CoreDeprecations() as raised:
                result = instance.run(terms, variables=variables, **kwargs)
            if not is_sequence(result):
                raise TypeError(f"returned {type(result)} instead of {list}")
            value = encode(list(result))
        except MarkerError as ex:
            # The plugin used an undefined argument: ansible's result is that argument.
            number = undefined_number(ex.source)
            if number is None:
                return {"op": "error", "final": False, "message": failure(ex, "lookup", name, None)}
            return {"op": "undefined", "id": number}
        except Exception as ex:
            return {"op": "error", "final": False, "message": failure(ex, "lookup", name, None)}
        return {"op": "result", "value": value, "deprecations": raised.kept}

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
