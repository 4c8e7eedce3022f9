# tack's warm module server, started once per agent and interpreter (argv[1]: the agent's
# private payload directory, removed when the server ends).
#
# Reads one JSON request a line on stdin: {"zip": payload path, "fqn", "profile", "params":
# the JSON text of {"ANSIBLE_MODULE_ARGS": ...}, "env": {...}}. ansible's basic module_utils
# are imported from the first payload before any task, so a task pays only for a fork; a
# task's child puts its own payload first on the import path and runs the module through
# ansible-core's own AnsiballZ loader, with its output in private files. The server answers
# one JSON line per request: {"rc", "stdout", "stderr"}.
import importlib
import json
import os
import shutil
import sys
import tempfile

sys.path = [p for p in sys.path if p not in ("", ".")]
PAYLOADS = sys.argv[1]
WARM = False
WARMED = set()


def warm(zip_path):
    """Imports ansible's basic module_utils from the first payload, before any task."""
    global WARM
    if WARM:
        return
    WARM = True
    sys.path.insert(0, zip_path)
    import ansible.module_utils.basic  # noqa: F401
    from ansible.module_utils._internal._ansiballz import _loader  # noqa: F401


def prefer(zip_path):
    """In a task's child: its own payload comes first, for the path and for every package
    already imported, ansible's and collections' (a package may be missing modules only this
    payload's module needs)."""
    sys.path.insert(0, zip_path)
    for name, module in list(sys.modules.items()):
        paths = getattr(module, "__path__", None)
        if name.split(".")[0] in ("ansible", "ansible_collections") and isinstance(paths, list):
            entry = os.path.join(zip_path, *name.split("."))
            if entry in paths:
                paths.remove(entry)
            paths.insert(0, entry)


def child(request, out, err):
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.__stdout__
    os.environ.update(request.get("env") or {})
    prefer(request["zip"])
    # The module runs afresh as __main__, not as the copy the server imported.
    sys.modules.pop(request["fqn"], None)
    code = 0
    try:
        from ansible.module_utils._internal._ansiballz import _loader

        _loader.run_module(
            json_params=request["params"].encode("utf-8"),
            profile=request["profile"],
            module_fqn=request["fqn"],
            modlib_path=request["zip"],
            extensions={},
        )
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # the module's own exit is SystemExit; anything else fails it
        sys.stderr.write("%s: %s\n" % (type(e).__name__, e))
        code = 1
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def warm_module(request):
    """Imports a module once in the server (not as __main__: its main() does not run), so its
    module_utils are loaded before the fork; a module that cannot be imported so is left to
    fail in its child, where the error is reported."""
    if request["fqn"] in WARMED:
        return
    WARMED.add(request["fqn"])
    prefer(request["zip"])
    try:
        importlib.import_module(request["fqn"])
    except Exception:
        pass


def run(request):
    warm(request["zip"])
    warm_module(request)
    with tempfile.TemporaryFile(dir=PAYLOADS) as out, tempfile.TemporaryFile(dir=PAYLOADS) as err:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            child(request, out, err)
        _, status = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {
            "rc": rc,
            "stdout": out.read().decode("utf-8", "replace"),
            "stderr": err.read().decode("utf-8", "replace"),
        }


def main():
    answer = sys.stdout
    # What the server itself might print must never land in the answers' stream.
    sys.stdout = sys.stderr
    try:
        for line in sys.stdin:
            try:
                reply = run(json.loads(line))
            except Exception as e:
                reply = {"error": "%s: %s" % (type(e).__name__, e)}
            answer.write(json.dumps(reply) + "\n")
            answer.flush()
    finally:
        shutil.rmtree(PAYLOADS, ignore_errors=True)


main()
