# tack's warm module server, started once per agent and interpreter (argv[1]: the agent's
# private payload directory, removed when the server ends).
#
# Reads one JSON request a line on stdin: {"zip": payload path, "fqn", "profile", "params":
# the JSON text of {"ANSIBLE_MODULE_ARGS": ...}, "env": {...}}. ansible's basic module_utils
# are imported from the first payload before any task, so a task pays only for a fork; a
# task's child puts its own payload first on the import path and runs the module through
# ansible-core's own AnsiballZ loader, with its output in private files. The server answers
# one JSON line per request: {"rc", "stdout", "stderr"}.
#
# What a fork needs is made once in the server: a payload is unpacked into a private directory
# beside it on first use (imports from a directory are faster than from a zip, and their
# compiled code is kept there for later forks), and the module_utils and standard library
# modules a task's child imported are imported by the server before the next fork, so the
# next task of any module does not import them again.
import gc
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import zipfile

sys.path = [p for p in sys.path if p not in ("", ".")]
PAYLOADS = sys.argv[1]
WARM = False
WARMED = set()
STDLIB = getattr(sys, "stdlib_module_names", frozenset())
# Standard modules whose import does something (prints, opens a window or a browser).
UNLEARNABLE = frozenset(("this", "antigravity", "idlelib", "tkinter", "turtle", "turtledemo"))


def learnable(name):
    """Whether the server may import a module a task's child imported: ansible's and
    collections' module_utils, and the standard library."""
    parts = name.split(".")
    if parts[:2] == ["ansible", "module_utils"]:
        return True
    if parts[0] == "ansible_collections":
        return parts[3:5] == ["plugins", "module_utils"]
    return parts[0] in STDLIB and parts[0] not in UNLEARNABLE and not parts[0].startswith("_")


def learn(names):
    for name in names:
        if name not in sys.modules and learnable(name):
            try:
                importlib.import_module(name)
            except BaseException:  # the child imported it; a failure here only costs time
                pass


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


PREFERRED = None


def set_nofile(wanted):
    """The task's open-files soft limit (ansible's `python_module_rlimit_nofile`) for this
    module process: at most the hard limit; a platform that refuses is left as it is."""
    if not wanted:
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, wanted) if hard != resource.RLIM_INFINITY else wanted
    if wanted != soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except ValueError:
            pass


def child(request, out, err, learned):
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.__stdout__
    os.environ.update(request.get("env") or {})
    set_nofile(request.get("rlimit_nofile"))
    # The module runs afresh as __main__, not as the copy the server imported.
    sys.modules.pop(request["fqn"], None)
    before = set(sys.modules)
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
        learned.write(json.dumps([m for m in list(sys.modules) if m not in before]).encode())
        learned.flush()
    except BaseException:
        pass
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
    global PREFERRED
    prefer(request["zip"])
    PREFERRED = request["zip"]
    try:
        importlib.import_module(request["fqn"])
        # The child runs it as __main__: compile that code now, once.
        importlib.util.find_spec(request["fqn"]).loader.get_code(request["fqn"])
    except Exception:
        pass


def unpacked(zip_path):
    """The payload's files in a directory beside it (made once; payloads never change: they
    are named by their hash)."""
    directory = zip_path[: -len(".zip")] + ".d" if zip_path.endswith(".zip") else zip_path + ".d"
    if not os.path.isdir(directory):
        partial = tempfile.mkdtemp(dir=PAYLOADS)
        with zipfile.ZipFile(zip_path) as payload:
            payload.extractall(partial)
        try:
            os.rename(partial, directory)
        except OSError:
            # Another server of this host unpacked it first.
            shutil.rmtree(partial, ignore_errors=True)
            if not os.path.isdir(directory):
                raise
    return directory


def scratch():
    """A file a task's child writes (its stdout, its stderr, the modules it imported), new for
    every task so that nothing a module left running can write into the next one's; in
    memory where the system has that (no file to create on the disk per task)."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("tack-task", os.MFD_CLOEXEC), "w+b")
        except OSError:
            pass
    return tempfile.TemporaryFile(dir=PAYLOADS)


def run(request):
    request["zip"] = unpacked(request["zip"])
    warm(request["zip"])
    warm_module(request)
    with scratch() as out, scratch() as err, scratch() as learned:
        return fork_task(request, out, err, learned)


def fork_task(request, out, err, learned):
    sys.stdout.flush()
    global PREFERRED
    if PREFERRED != request["zip"]:
        # Made here rather than in every child: the next task of the same module finds it.
        prefer(request["zip"])
        PREFERRED = request["zip"]
    # Objects the server made are never collected in a child: its pages stay shared.
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        child(request, out, err, learned)
    _, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    reply = {
        "rc": rc,
        "stdout": out.read().decode("utf-8", "replace"),
        "stderr": err.read().decode("utf-8", "replace"),
        # Which compiled code this interpreter can use, for the controller to send next time.
        "tag": sys.implementation.cache_tag or "",
    }
    learned.seek(0)
    try:
        names = json.loads(learned.read() or b"[]")
    except ValueError:
        names = []
    return reply, names


def main():
    answer = sys.stdout
    # What the server itself might print must never land in the answers' stream.
    sys.stdout = sys.stderr
    try:
        for line in sys.stdin:
            names = []
            try:
                reply, names = run(json.loads(line))
            except Exception as e:
                reply = {"error": "%s: %s" % (type(e).__name__, e)}
            answer.write(json.dumps(reply) + "\n")
            answer.flush()
            # After the answer: only the next fork gains.
            learn(names)
    finally:
        shutil.rmtree(PAYLOADS, ignore_errors=True)
        sys.stderr.flush()
        # Nothing is left to do: the interpreter's own teardown of everything it imported
        # would only keep the link from closing.
        os._exit(0)


main()
