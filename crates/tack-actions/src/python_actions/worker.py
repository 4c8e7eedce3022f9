# tack's worker for action plugins written in Python (`action_plugins/` beside a playbook, in
# a role, or on the configured path). The controller keeps a few of these processes, one per
# task running at once, each started with the interpreter that has ansible-core.
#
# Protocol: one JSON object per line, the values inside as the template plugin worker sends
# them (`decode`/`encode` there). The first line in is the setup ({"collections": [...],
# "basedir": DIR}), answered by {"ready": true} or {"fatal": MESSAGE}. Each later line in is a
# task ({"op": "run", ...}, see `run` below); while it runs the worker asks the controller
# for what only the controller has, each answered by {"op": "value", ...}:
#   {"op": "var", "name": N} / {"op": "names"}       the task's variables
#   {"op": "module", "name": N, "args": {...}}        a module run on the host
#   {"op": "exec", "cmd": C}                          a command through the host's shell
#   {"op": "put", "path": P, "data": BASE64}          a file written on the host
# and says, without waiting, {"op": "display", "method": M, "args": [...], "kwargs": {...}}
# for what the plugin prints. The task ends with {"op": "result", "result": {...},
# "warnings": [...], "deprecations": [...]} or {"op": "raised", "result": {...},
# "error": LINE}.
#
# The plugin runs as ansible's executor runs it, with ansible's own Task, PlayContext,
# templar and plugin loaders; what this script replaces is only the transport: the methods of
# ansible's action base that reach the host go to the controller, which runs them over the
# host's link as it runs its own modules.
import base64
import json
import os
import pickle
import shlex
import sys

# `decode`, `encode`, `Channel`, `TaskVars`, `read_task_vars` and `DisplayQueue` are
# `python_wire.py`'s, prepended.


def refused(what):
    from ansible.errors import AnsibleError
    return AnsibleError("tack does not give action plugins %s yet" % what)


def install_transport(channel):
    """ansible's action base, reaching the host through the controller."""
    from ansible.errors import AnsibleError, AnsibleConnectionFailure
    from ansible.plugins.action import ActionBase

    def value_of(reply):
        if "unreachable" in reply:
            raise AnsibleConnectionFailure(reply["unreachable"])
        if "error" in reply:
            raise AnsibleError(reply["error"])
        return reply

    def execute_module(self, module_name=None, module_args=None, tmp=None, task_vars=None,
                       persist_files=False, delete_remote_tmp=None, wrap_async=False,
                       ignore_unknown_opts=False):
        if module_name is None:
            module_name = self._task.action
        if module_args is None:
            module_args = self._task.args
        module_args = dict(module_args)
        if ignore_unknown_opts:
            module_args["_ansible_ignore_unknown_opts"] = True
        # `wrap_async`: the controller starts the module as the task's job and answers with
        # its start, as ansible's async wrapper prints it.
        reply = value_of(channel.ask({"op": "module", "name": module_name,
                                      "args": encode(module_args), "async": bool(wrap_async)}))
        data = decode(reply["result"])
        # As ansible's `_execute_module` hands it back.
        for stream in ("stdout", "stderr"):
            if stream in data and stream + "_lines" not in data:
                text = data[stream]
                data[stream + "_lines"] = text.splitlines() if isinstance(text, str) else [text]
        return data

    def low_level_execute_command(self, cmd, sudoable=True, in_data=None, executable=None,
                                  encoding_errors="surrogate_then_replace", chdir=None):
        if in_data is not None:
            raise refused("a command's standard input (in_data)")
        if executable:
            cmd = "%s -c %s" % (executable, shlex.quote(cmd))
        if chdir:
            cmd = "cd %s && %s" % (shlex.quote(chdir), cmd)
        reply = value_of(channel.ask({"op": "exec", "cmd": cmd}))
        stdout, stderr = reply["stdout"], reply["stderr"]
        return dict(rc=reply["rc"], stdout=stdout, stdout_lines=stdout.splitlines(),
                    stderr=stderr, stderr_lines=stderr.splitlines())

    def transfer_data(self, remote_path, data):
        if isinstance(data, dict):
            data = json.dumps(data)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        value_of(channel.ask({"op": "put", "path": remote_path,
                              "data": base64.b64encode(data).decode("ascii")}))
        return remote_path

    def transfer_file(self, local_path, remote_path):
        with open(local_path, "rb") as f:
            return transfer_data(self, remote_path, f.read())

    ActionBase._execute_module = execute_module
    ActionBase._low_level_execute_command = low_level_execute_command
    ActionBase._transfer_data = transfer_data
    ActionBase._transfer_file = transfer_file


def connection_for(channel, name, play_context, variables, plugin=None):
    """ansible's connection plugin of the host's kind, for its options and shell, with what
    reaches the host going to the controller. `plugin`: a plugin written in Python's
    options as its link set them, and the command line's password."""
    from ansible.plugins.loader import connection_loader

    connection = connection_loader.get(name, play_context, os.devnull)
    if plugin is not None:
        task_keys = {}
        if plugin.get("password"):
            task_keys["password"] = plugin["password"]
        var_options = {"_extras": {}}
        var_options.update(decode(plugin.get("options") or {}))
        connection.set_options(task_keys=task_keys, var_options=var_options)
    else:
        try:
            connection.set_options(var_options=variables)
        except Exception:
            pass

    def exec_command(cmd, in_data=None, sudoable=True):
        if in_data is not None:
            raise refused("a command's standard input (in_data)")
        reply = channel.ask({"op": "exec", "cmd": cmd})
        return reply.get("rc", 1), reply.get("stdout", "").encode(), reply.get("stderr", "").encode()

    def put_file(in_path, out_path):
        with open(in_path, "rb") as f:
            data = f.read()
        channel.ask({"op": "put", "path": out_path, "data": base64.b64encode(data).decode("ascii")})

    def fetch_file(in_path, out_path):
        raise refused("fetch_file (a file copied from the host)")

    connection.exec_command = exec_command
    connection.put_file = put_file
    connection.fetch_file = fetch_file
    connection._connect = lambda: connection
    connection.close = lambda: None
    connection._connected = True
    return connection


def deprecation(summary):
    """A deprecation the plugin made, as a module's result carries one."""
    out = {"__ansible_type": "DeprecationSummary",
           "event": {"msg": summary.event.msg, "help_text": summary.event.help_text},
           "date": summary.date, "version": summary.version}
    if summary.deprecator is not None:
        kind = summary.deprecator.type
        out["deprecator"] = {"resolved_name": summary.deprecator.resolved_name,
                             "type": getattr(kind, "value", kind)}
    return out


def main():
    channel = Channel()
    setup = channel.read()
    try:
        from ansible._internal._errors import _error_utils
        from ansible._internal._display_utils import DeferredWarningContext, format_message
        from ansible._internal._task import PendingChanges, TaskContext, UnifiedTaskResult
        from ansible.errors import AnsibleActionFail, AnsibleActionSkip
        from ansible.parsing.dataloader import DataLoader
        from ansible.playbook.play_context import PlayContext
        from ansible.playbook.task import Task
        from ansible.plugins import loader as plugin_loader
        from ansible.plugins.loader import action_loader, init_plugin_loader
        from ansible.template import Templar, trust_as_template
        from ansible.utils.display import Display

        init_plugin_loader(setup.get("collections") or None)
        from ansible.plugins.loader import add_all_plugin_dirs
        for directory in setup.get("dirs") or []:
            add_all_plugin_dirs(directory)
        loader = DataLoader()
        loader.set_basedir(setup["basedir"])
        display = Display()
        display._final_q = DisplayQueue(channel, "an action plugin")
        install_transport(channel)
        read_task_vars()
    except Exception as ex:  # this worker cannot run plugins: say why, once
        channel.send({"fatal": "%s: %s" % (type(ex).__name__, ex)})
        return
    channel.send({"ready": True})
    added = []

    def add_dirs(directories):
        for directory in directories:
            if directory not in added:
                action_loader.add_directory(directory)
                added.append(directory)

    def warning(summary):
        """A warning the plugin raised: its brief message (what ansible's result keeps) with
        the place it points at, which the controller shows as ansible's callback does; or, for
        a warning that cannot be put so (a chain of causes, a place without a line), the text
        ansible would show."""
        from ansible.module_utils._internal._event_utils import format_event_brief_message
        event = summary.event
        context = event.formatted_source_context or ""
        first = context.split("\n", 1)[0]
        if not event.chain and not event.events and not event.help_text and first.startswith("Origin: "):
            path, _, rest = first[len("Origin: "):].rpartition(":")
            path, _, line = path.rpartition(":")
            if path and line.isdigit() and rest.isdigit():
                return {"text": format_event_brief_message(event),
                        "origin": {"path": path, "line": int(line), "col": int(rest)}}
        return format_message(summary, False).rstrip("\n")

    def run(message):
        # Loading is quiet: ansible's controller loaded its collections before its workers
        # forked, so a worker says nothing of it (this worker's first load would).
        display.verbosity = display.log_verbosity = 0
        add_dirs(message["dirs"])
        task = Task()
        task.action = message["action"]
        # What the task wrote is trusted as a template, as ansible's loaded task is; what a
        # template rendered is not.
        task.args = decode(message["args"], on_str=trust_as_template)
        task.async_val = message["async"]
        task.poll = message["poll"]
        task.check_mode = message["check_mode"]
        task.diff = message["diff"]
        task.delegate_to = message.get("delegate_to")
        task._resolved_action = message["fqcn"]
        play_context = PlayContext()
        play_context.check_mode = message["check_mode"]
        play_context.diff = message["diff"]
        play_context.remote_addr = (message.get("plugin") or {}).get("address") or message["host"]
        play_context.connection = message["connection"]
        variables = TaskVars(channel)
        templar = Templar(loader=loader, variables=variables)
        connection = connection_for(channel, message["connection"], play_context, variables,
                                    message.get("plugin"))
        action = action_loader.get(message["name"], task=task, connection=connection,
                                   play_context=play_context, loader=loader, templar=templar,
                                   shared_loader_obj=plugin_loader)
        if action is None or os.path.realpath(action._original_path) != os.path.realpath(message["path"]):
            found = None if action is None else action._original_path
            raise refused("the action plugin %s: ansible's loader found %s for %r"
                          % (message["path"], found, message["name"]))
        display.verbosity = message["verbosity"]
        display.log_verbosity = message["log_verbosity"]
        # As ansible's executor runs an action: inside its task's context.
        with TaskContext.create(task, variables, message["host"]) as task_ctx, \
                DeferredWarningContext(variables=variables) as warned:
            task_ctx.pending_changes = PendingChanges()
            try:
                result = action.run(task_vars=variables)
            finally:
                try:
                    action.cleanup()
                except Exception:
                    pass
            for layer, registered in task_ctx.pending_changes.register_host_variables.items():
                if registered:
                    raise refused("variables they register (register_host_variables, %s)"
                                  % getattr(layer, "name", layer))
        return result, warned

    def raised(ex):
        utr = UnifiedTaskResult._create_from_exception(
            ex, accept_result_contribution=True, source_is_module=False)
        result = utr.as_result_dict()
        contributed = False
        cause = ex
        while cause is not None:
            if isinstance(cause, _error_utils.ContributesToTaskResult):
                contributed = True
                break
            cause = cause.__cause__
        msg = result.get("msg") or ""
        if not contributed:
            result["msg"] = msg = "Task failed: %s" % msg
        if result.get("exception") is not None:
            result["exception"] = "(traceback unavailable)"
        line = msg if msg.startswith("Task failed: ") else "Task failed: %s" % msg
        return {"op": "raised", "result": encode(result), "error": line,
                "skipped": isinstance(ex, AnsibleActionSkip)}

    def describe(message):
        add_dirs(message["dirs"])
        try:
            cls = action_loader.get(message["name"], class_only=True)
        except Exception:
            cls = None
        return {"op": "described", "raw_params": bool(getattr(cls, "supports_raw_params", False))}

    while True:
        message = channel.read()
        if message.get("op") == "describe":
            channel.send(describe(message))
            continue
        try:
            result, warned = run(message)
            try:
                # What ansible's worker process does with a result: one its queue cannot
                # carry is replaced by the failure ansible reports, without a place.
                pickle.dumps(result)
            except Exception as ex:
                msg = "Task result omitted due to queue send failure: %s" % ex
                channel.send({"op": "raised", "error": msg, "placeless": True, "result": {
                    "changed": False, "failed": True, "msg": msg,
                    "exception": "(traceback unavailable)"}})
                continue
            warnings = [warning(w) for w in warned.get_warnings()]
            deprecations = [deprecation(d) for d in warned.get_deprecation_warnings()]
            reply = {"op": "result", "result": encode(dict(result)), "warnings": warnings,
                     "deprecations": deprecations}
        except Exception as ex:
            reply = raised(ex)
        channel.send(reply)


main()
