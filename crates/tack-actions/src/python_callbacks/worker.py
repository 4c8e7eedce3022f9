# tack's worker for callback plugins written in Python: those `callbacks_enabled` names and
# those ansible loads without being asked (a plugin in a `callback_plugins/` directory beside
# a playbook or on the configured path that does not say it needs enabling), and the stdout
# callback when it is none tack prints itself (`"stdout": NAME` in the setup). Otherwise
# tack's own stdout callback prints the transcript, and these run after it for each event,
# as ansible's task queue manager calls its other callbacks after its stdout one.
#
# Protocol: one JSON object per line. The first line in is the setup ({"dirs": [...],
# "collections": [...], "basedir": DIR, "verbosity": N, "extra_vars": {...}}), answered by
# {"loaded": [NAME, ...], "shown": [...]}, {"cannot_load": MESSAGE} (ansible's error for a
# stdout callback it cannot load) or {"fatal": MESSAGE}, where "shown" is what loading
# printed. Each later line in is an event ({"event": NAME, ...}); the worker answers with
# {"shown": [[TEXT, STDERR], ...]}: what the plugins printed through ansible's display, for
# tack to print in its place in the transcript.
import json
import os
import sys
import uuid

# `decode` is `python_wire.py`'s, prepended.


def main():
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    inp = sys.stdin.buffer

    def send(message):
        out.write(json.dumps(message).encode("utf-8") + b"\n")

    shown = []
    pending = []

    def flush():
        """What plugins printed with `print` so far, as one piece, in its place."""
        if pending:
            shown.append(["".join(pending), False])
            del pending[:]

    class Printed:
        """`sys.stdout` for the plugins: what they print joins the transcript in order."""

        def write(self, text):
            pending.append(str(text))
            return len(text)

        def flush(self):
            pass


    setup = json.loads(inp.readline())
    try:
        from ansible.executor.stats import AggregateStats
        from ansible.executor.task_result import CallbackTaskResult
        from ansible._internal._task import UnifiedTaskResult
        from ansible.inventory.host import Host
        from ansible.parsing.dataloader import DataLoader
        from ansible.playbook import Playbook
        from ansible.playbook.play import Play
        from ansible.playbook.handler import Handler
        from ansible.playbook.included_file import IncludedFile
        from ansible.playbook.task import Task
        from ansible.plugins.loader import add_all_plugin_dirs, callback_loader, init_plugin_loader
        from ansible.utils.display import Display
        from ansible import constants as C

        display = Display()
        display.verbosity = setup.get("verbosity", 0)
        # Once ansible's display has set up the real streams (it patches them for its forks).
        sys.stdout = Printed()

        def capture(msg, color=None, stderr=False, screen_only=False, log_only=False,
                    newline=True, **kwargs):
            if log_only:
                return
            flush()
            # As ansible's display: a message that ends with a newline gets no other.
            end = "\n" if newline and not msg.endswith("\n") else ""
            shown.append([msg + end, bool(stderr)])

        display.display = capture
        init_plugin_loader(setup.get("collections") or None)
        for directory in setup["dirs"]:
            add_all_plugin_dirs(directory)
        loader = DataLoader()
        loader.set_basedir(setup["basedir"])
        plugins = load(callback_loader, C, display, setup)
    except CannotLoad as ex:
        flush()
        send({"cannot_load": str(ex), "shown": shown[:]})
        return
    except Exception as ex:
        send({"fatal": "%s: %s" % (type(ex).__name__, ex)})
        return
    flush()
    send({"loaded": [name for name, _ in plugins], "shown": shown[:]})
    del shown[:]

    tasks = {}
    hosts = {}
    errors = {}

    from ansible.plugins.callback import CallbackBase

    def handle_exception(self, result, use_stderr=False):
        # tack's own rendering of the task's error, which is ansible's text.
        text = errors.get(id(result))
        if result.pop("exception", None) is not None and text:
            self._display.display(text, stderr=use_stderr)

    CallbackBase._handle_exception = handle_exception
    state = {"play": None, "playbook": None}

    def task_of(view, handler=False):
        key = view["id"]
        task = tasks.get(key)
        if task is None:
            task = Handler() if handler else Task()
            task._uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, key))
            task.name = view["name"]
            task.action = view["action"]
            task._tack_path = view.get("path")
            task.get_path = lambda t=task: t._tack_path
            task._parent = None
            tasks[key] = task
        return task

    def host_of(name):
        host = hosts.get(name)
        if host is None:
            host = hosts[name] = Host(name)
        return host

    def result_of(message):
        task = task_of(message["task"])
        task.no_log = bool(message.get("no_log"))
        # As the executor leaves it on the task: the resolved connection where the task ran,
        # else the configured transport.
        task.connection = message.get("connection") or C.DEFAULT_TRANSPORT
        data = decode(message["result"])
        if task.no_log:
            # Censored again by ansible's own code for the callbacks (tack's already is).
            data["_ansible_no_log"] = True
        # ansible's internal keys the result carried, which callbacks read (a censored
        # result carries none).
        if not task.no_log:
            if message.get("verbose_always"):
                data["_ansible_verbose_always"] = True
            if message.get("verbose_override"):
                data["_ansible_verbose_override"] = True
        # A loop's items, as callbacks see them (ansible keeps `failed` out of the callback
        # view of every result, its items' included).
        for item in data.get("results") or []:
            if isinstance(item, dict):
                item.pop("failed", None)
        utr = UnifiedTaskResult.from_action_result_dict(data)
        result = CallbackTaskResult(host_of(message["host"]), task, utr)
        # By the dict callbacks are handed (`result.result` is the same dict each time).
        errors[id(result.result)] = message.get("error")
        return result

    def call(method, *args, **kwargs):
        for name, plugin in plugins:
            if getattr(plugin, "disabled", False):
                continue
            for function in (getattr(plugin, method, None), getattr(plugin, "v2_on_any", None)):
                if function is None:
                    continue
                try:
                    function(*args, **kwargs)
                except Exception as ex:
                    display.warning("Failure using method (%s) in callback plugin (%s): %s"
                                    % (method, plugin, ex))

    # The task whose banner came last: an include's `IncludedFile` names it.
    last_task = [None]

    def handle(message):
        event = message["event"]
        if event == "playbook_start":
            playbook = Playbook(loader)
            playbook._file_name = message["file"]
            playbook._basedir = os.path.dirname(message["file"])
            state["playbook"] = playbook
            call("v2_playbook_on_start", playbook)
        elif event == "play_start":
            play = Play()
            play.name = message["name"]
            play._uuid = str(uuid.uuid4())
            state["play"] = play
            call("v2_playbook_on_play_start", play)
        elif event == "no_hosts_matched":
            call("v2_playbook_on_no_hosts_matched")
        elif event == "no_hosts_remaining":
            call("v2_playbook_on_no_hosts_remaining")
        elif event == "task_start":
            last_task[0] = task_of(message["task"])
            call("v2_playbook_on_task_start", last_task[0], is_conditional=False)
        elif event == "handler_start":
            call("v2_playbook_on_handler_task_start", task_of(message["task"], handler=True))
        elif event in ("ok", "failed", "skipped", "unreachable"):
            result = result_of(message)
            if event == "failed":
                call("v2_runner_on_failed", result, ignore_errors=bool(message.get("ignored")))
            else:
                call("v2_runner_on_" + event, result)
        elif event in ("item_ok", "item_failed", "item_skipped"):
            call("v2_runner_item_on_" + event[5:], result_of(message))
        elif event == "notify":
            call("v2_playbook_on_notify", task_of(message["task"], handler=True),
                 host_of(message["host"]))
        elif event == "vars_prompt":
            entry = decode(message["entry"])
            call("v2_playbook_on_vars_prompt", entry.get("name"), entry.get("private", True),
                 entry.get("prompt"), entry.get("encrypt"), entry.get("confirm", False),
                 entry.get("salt_size"), entry.get("salt"), entry.get("default"),
                 entry.get("unsafe", False))
        elif event == "include":
            included = IncludedFile(message["file"], {}, {}, last_task[0])
            for name in message["hosts"]:
                included.add_host(host_of(name))
            call("v2_playbook_on_include", included)
        elif event == "host_start":
            task = task_of(message["task"], handler=bool(message.get("handler")))
            call("v2_runner_on_start", host_of(message["host"]), task)
        elif event in ("async_poll", "async_ok", "async_failed"):
            call("v2_runner_on_" + event, result_of(message))
        elif event == "retry":
            call("v2_runner_retry", result_of(message))
        elif event == "file_diff":
            call("v2_on_file_diff", result_of(message))
        elif event == "stats":
            stats = AggregateStats()
            for host, counts in message["hosts"].items():
                stats.processed[host] = 1
                for key in ("ok", "changed", "failures", "dark", "skipped", "rescued", "ignored"):
                    if counts.get(key):
                        getattr(stats, key)[host] = counts[key]
            for host, data in decode(message.get("custom", {})).items():
                stats.custom[host] = data
            call("v2_playbook_on_stats", stats)

    while True:
        line = inp.readline()
        if not line:
            return
        try:
            handle(json.loads(line))
        except Exception as ex:
            display.warning("tack could not hand an event to the callback plugins: %s: %s"
                            % (type(ex).__name__, ex))
        flush()
        send({"shown": shown[:]})
        del shown[:]


class CannotLoad(Exception):
    """ansible's own load error for the stdout callback."""


def load(callback_loader, C, display, setup):
    """ansible's `load_callbacks`: the stdout callback when tack does not print its own, then
    the others."""
    from ansible.executor.task_queue_manager import _resolve_callback_option_variables
    from ansible.template import Templar
    extra_vars = decode(setup.get("extra_vars") or {})
    templar = Templar(variables=extra_vars)
    loaded = []
    stdout_name = setup.get("stdout")
    # The configured value itself, which knows where it was set (the loader's deprecation
    # of a plugin points there).
    if stdout_name and C.DEFAULT_STDOUT_CALLBACK == stdout_name:
        stdout_name = C.DEFAULT_STDOUT_CALLBACK
    stdout = None
    if stdout_name:
        stdout = callback_loader.get(stdout_name)
        if not stdout:
            raise CannotLoad(f"Could not load {stdout_name!r} callback plugin.")
        stdout._init_callback_methods()
        _resolve_callback_option_variables(stdout, extra_vars, templar)
        loaded.append((stdout_name, stdout))
    plugin_types = {p.ansible_name: p for p in callback_loader.all(class_only=True)}
    for name in C.CALLBACKS_ENABLED or []:
        plugin = callback_loader.get(name, class_only=True)
        if plugin:
            plugin_types.setdefault(plugin.ansible_name, plugin)
        else:
            display.warning("Skipping callback plugin '%s', unable to load" % name)
    if stdout is not None:
        plugin_types.pop(stdout.ansible_name, None)
    for plugin_type in plugin_types.values():
        kind = getattr(plugin_type, "CALLBACK_TYPE", "")
        needs_enabled = getattr(plugin_type, "CALLBACK_NEEDS_ENABLED",
                                getattr(plugin_type, "CALLBACK_NEEDS_WHITELIST", False))
        names = getattr(plugin_type, "_redirected_names", [])
        name = names[0] if names else os.path.splitext(os.path.basename(plugin_type._original_path))[0]
        if kind == "stdout":
            continue
        if needs_enabled and name not in (C.CALLBACKS_ENABLED or []):
            continue
        try:
            plugin = plugin_type()
            if not plugin:
                display.warning("Skipping callback '%s', as it does not create a valid plugin instance." % name)
                continue
            plugin._init_callback_methods()
            _resolve_callback_option_variables(plugin, extra_vars, templar)
            loaded.append((name, plugin))
        except Exception as ex:
            display.error_as_warning(f"Failed to load callback plugin {name!r}.", exception=ex)
    return loaded


main()
