# tack's worker for a fact cache plugin written in Python (`fact_caching` naming one tack has
# no native code for: a collection's, one in a `cache_plugins/` directory): ansible-core's own
# cache loader loads it, wrapped as ansible wraps a persistent plugin (its keys prefixed with
# the schema, its values written through the cache-persistence JSON profile).
#
# Protocol: one JSON object per line. The first line in is the setup ({"plugin": NAME,
# "collections": [...], "plugin_dirs": [...], "verbosity": N}), answered by {"ready": true},
# {"failed": MESSAGE} (the plugin cannot be loaded: ansible warns and keeps facts in memory)
# or {"fatal": MESSAGE} (ansible-core cannot be loaded). Each later line is one call:
# {"op": "get", "host": H} answered by {"facts": TEXT} or {"missing": true};
# {"op": "set", "host": H, "facts": TEXT} and {"op": "delete", "host": H} answered by
# {"done": true}. TEXT is a host's facts as the cache-persistence profile writes them (tags
# included). A call that raised is answered by {"error": MESSAGE}. What the plugin prints
# goes to stderr.
import json

# `Channel` is `python_wire.py`'s, prepended.


def main():
    channel = Channel()
    send = channel.send

    setup = channel.read()
    try:
        from ansible._internal._errors._error_utils import format_exception_message
        from ansible._internal._json._profiles import _cache_persistence
        from ansible.plugins.loader import cache_loader, init_plugin_loader
        from ansible.utils.display import Display

        init_plugin_loader(setup.get("collections") or None)
        for directory in setup.get("plugin_dirs", []):
            cache_loader.add_directory(directory)
        Display().verbosity = setup.get("verbosity", 0)
    except Exception as ex:
        send({"fatal": "%s: %s" % (type(ex).__name__, ex)})
        return

    try:
        cache = cache_loader.get(setup["plugin"])
    except Exception as ex:
        send({"failed": format_exception_message(ex)})
        return
    send({"ready": True})

    def call(request):
        op = request.get("op")
        host = request.get("host")
        if op == "get":
            try:
                facts = cache.get(host)
            except KeyError:
                return {"missing": True}
            return {"facts": json.dumps(facts, cls=_cache_persistence.Encoder)}
        if op == "set":
            cache.set(host, json.loads(request["facts"], cls=_cache_persistence.Decoder))
            return {"done": True}
        if op == "delete":
            try:
                cache.delete(host)
            except KeyError:
                pass
            return {"done": True}
        return {"error": "unknown operation %r" % (op,)}

    while True:
        request = channel.read()  # ends the worker when the controller closes its input
        try:
            reply = call(request)
        except Exception as ex:
            reply = {"error": format_exception_message(ex)}
        send(reply)


main()
