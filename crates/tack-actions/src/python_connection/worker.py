# tack's worker for a connection plugin written in Python (ansible-core's own besides local
# and ssh, a collection's, one in `connection_plugins/`): one process per link, started with
# the interpreter that has ansible-core, holding the plugin object for the link's life as
# ansible's task executor holds it for a task.
#
# Protocol: one JSON object per line. The first line in is the setup ({"collections": [...],
# "dirs": [...]}), answered by {"ready": true} or {"fatal": MESSAGE}. Then each request is
# answered by {"op": "done", ...} or {"op": "failed", "error": TEXT, "unreachable": BOOL}
# (an AnsibleConnectionFailure is unreachable, as ansible's executor counts it); while one
# runs, the worker says {"op": "display", ...} for what the plugin prints, without waiting.
#   {"op": "describe", "name": N}     the variables the plugin's options (and its shell's) read
#   {"op": "open", ...}               the plugin made, its options and become plugin set
#   {"op": "exec", "cmd": C, "in_data": B64 | null}
#                                     a command through the plugin, as the become user when
#                                     there is one; its rc, stdout and stderr (base64)
#   {"op": "agent", "in_data": B64}   tack's agent run with that input (put in the link's
#                                     temporary directory on first use)
#   {"op": "put", "data": B64, "name": N, "executable": BOOL}
#                                     a file put in that directory; its path there
#   {"op": "remove", "path": P}       a file put there removed
#   {"op": "close"}                   the directory removed, the plugin closed; the worker ends
import base64
import os
import shutil
import tempfile

# `decode`, `encode`, `Channel` and `DisplayQueue` are `python_wire.py`'s, prepended.


def b64(data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return base64.b64encode(data or b"").decode("ascii")


class Link:
    def __init__(self, agent):
        self.connection = None
        self.agent = agent
        self.tmp = None
        self.remote_agent = None
        self.puts = 0

    def open(self, message):
        from ansible import constants as C
        from ansible.errors import AnsibleError
        from ansible.playbook.play_context import PlayContext
        from ansible.plugins.loader import become_loader, connection_loader

        play_context = PlayContext()
        play_context.remote_addr = message["address"]
        play_context.remote_user = message.get("user")
        play_context.password = message.get("password") or ""
        play_context.timeout = message.get("timeout") or C.DEFAULT_TIMEOUT
        name = message["name"]
        connection = connection_loader.get(name, play_context, None,
                                           ansible_playbook_pid=str(os.getppid()))
        if connection is None:
            raise AnsibleError("the connection plugin '%s' was not found" % name)
        become = message.get("become")
        plugin = None
        if become:
            plugin = become_loader.get(become["method"])
        try:
            connection.set_become_plugin(plugin)
        except AttributeError:
            pass
        play_context.set_attributes_from_plugin(connection)
        # As ansible's executor sets them: the task's keywords (here those a connection
        # reads), the play context's timeout and password, and the variables the plugin's
        # options read, rendered by the controller.
        task_keys = {"timeout": play_context.timeout, "remote_user": message.get("user")}
        if play_context.password:
            task_keys["password"] = play_context.password
        options = decode(message.get("options") or {})
        var_options = {"_extras": {}}
        var_options.update(options)
        connection.set_options(task_keys=task_keys, var_options=var_options)
        try:
            connection._shell.set_options(var_options=options)
        except AttributeError:
            pass
        if plugin is not None:
            keys = {"become_user": become.get("user")}
            for key in ("flags", "exe"):
                if become.get(key) is not None:
                    keys["become_" + key] = become[key]
            if become.get("password"):
                keys["become_pass"] = become["password"]
            plugin.set_options(task_keys=keys, var_options={})
        self.connection = connection
        return {"op": "done"}

    def run(self, cmd, in_data=None, sudoable=True):
        connection = self.connection
        if sudoable and connection.become:
            cmd = connection.become.build_become_command(cmd, connection._shell)
        rc, stdout, stderr = connection.exec_command(cmd, in_data=in_data, sudoable=sudoable)
        return rc, stdout, stderr

    def temporary(self):
        """The link's directory on the host, made as ansible's action base makes its own."""
        from ansible import constants as C
        from ansible.errors import AnsibleConnectionFailure

        if self.tmp is not None:
            return self.tmp
        shell = self.connection._shell
        if getattr(self.connection, "_remote_is_local", False):
            tmpdir = C.DEFAULT_LOCAL_TMP
        else:
            tmpdir = shell.get_option("remote_tmp")
        basefile = shell._generate_temp_dir_name()
        cmd = shell.mkdtemp(basefile=basefile, system=False, tmpdir=tmpdir)
        rc, stdout, stderr = self.run(cmd, sudoable=False)
        stdout = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else stdout
        if rc != 0:
            raise AnsibleConnectionFailure(
                "Failed to create temporary directory. Failed command was: %s, exited with "
                "result %d" % (cmd, rc))
        path = shell.join_path(stdout.strip().split("%s=" % basefile, 1)[-1], "").splitlines()[-1]
        self.tmp = path.rstrip("/")
        return self.tmp

    def local_file(self, data=None, executable=False):
        """A file in ansible's local temporary directory, as its action base writes what it
        puts: `data`, or a copy of tack's agent."""
        from ansible import constants as C

        fd, path = tempfile.mkstemp(dir=C.DEFAULT_LOCAL_TMP)
        with os.fdopen(fd, "wb") as out:
            if data is None:
                with open(self.agent, "rb") as agent:
                    shutil.copyfileobj(agent, out)
            else:
                out.write(data)
        os.chmod(path, 0o700 if executable else 0o600)
        return path

    def put(self, data, name, executable):
        tmp = self.temporary()
        shell = self.connection._shell
        self.puts += 1
        # The name is only a hint: the file stays in the link's directory whatever it says.
        leaf = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[-64:]
        dest = shell.join_path(tmp, "%d-%s" % (self.puts, leaf or "file"))
        local = self.local_file(data, executable)
        try:
            self.connection.put_file(local, dest)
        finally:
            os.unlink(local)
        if executable:
            self.chmod(dest)
        return dest

    def chmod(self, path):
        from ansible.errors import AnsibleError

        cmd = self.connection._shell.chmod([path], "u+x")
        rc, stdout, stderr = self.run(cmd, sudoable=False)
        if rc != 0:
            raise AnsibleError("could not make %s executable: %s" % (path, stderr))

    def agent_command(self):
        if self.remote_agent is None:
            tmp = self.temporary()
            dest = self.connection._shell.join_path(tmp, "tack-agent")
            local = self.local_file(None, True)
            try:
                self.connection.put_file(local, dest)
            finally:
                os.unlink(local)
            self.chmod(dest)
            self.remote_agent = dest
        import shlex
        return "%s --batch" % shlex.quote(self.remote_agent)

    def close(self):
        if self.connection is None:
            return
        try:
            if self.tmp is not None:
                self.run(self.connection._shell.remove(self.tmp, recurse=True), sudoable=False)
        finally:
            self.connection.close()


def describe(message):
    from ansible import constants as C
    from ansible.errors import AnsibleError
    from ansible.plugins.loader import connection_loader

    name = message["name"]
    found = connection_loader.get(name, class_only=True)
    if found is None:
        raise AnsibleError("the connection plugin '%s' was not found" % name)
    names = list(C.config.get_plugin_vars("connection", found._load_name))
    # The shell a plugin gets (ansible's `sh` unless the host names another) reads its own.
    names += ["ansible_shell_type", "ansible_shell_executable"]
    names += list(C.config.get_plugin_vars("shell", "sh"))
    seen = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return {"op": "done", "vars": seen}


def main():
    channel = Channel()
    setup = channel.read()
    try:
        from ansible.errors import AnsibleConnectionFailure
        from ansible.plugins.loader import add_all_plugin_dirs, init_plugin_loader
        from ansible.utils.display import Display

        init_plugin_loader(setup.get("collections") or None)
        for directory in setup.get("dirs") or []:
            add_all_plugin_dirs(directory)
        display = Display()
        display._final_q = DisplayQueue(channel, "a connection plugin")
        # Loading is quiet, as in ansible's forked workers.
        display.verbosity = display.log_verbosity = 0
    except Exception as ex:  # this worker cannot run plugins: say why, once
        channel.send({"fatal": "%s: %s" % (type(ex).__name__, ex)})
        return
    channel.send({"ready": True})
    link = Link(setup.get("agent"))
    while True:
        message = channel.read()
        op = message.get("op")
        try:
            if op == "describe":
                reply = describe(message)
            elif op == "open":
                display.verbosity = message.get("verbosity", 0)
                display.log_verbosity = message.get("log_verbosity", 0)
                reply = link.open(message)
            elif op == "exec":
                in_data = message.get("in_data")
                rc, stdout, stderr = link.run(
                    message["cmd"], None if in_data is None else base64.b64decode(in_data))
                reply = {"op": "done", "rc": rc, "stdout": b64(stdout), "stderr": b64(stderr)}
            elif op == "agent":
                rc, stdout, stderr = link.run(link.agent_command(),
                                              base64.b64decode(message["in_data"]))
                reply = {"op": "done", "rc": rc, "stdout": b64(stdout), "stderr": b64(stderr)}
            elif op == "put":
                path = link.put(base64.b64decode(message["data"]), message["name"],
                                message.get("executable", False))
                reply = {"op": "done", "path": path}
            elif op == "remove":
                cmd = link.connection._shell.remove(message["path"])
                link.run(cmd, sudoable=False)
                reply = {"op": "done"}
            elif op == "close":
                link.close()
                channel.send({"op": "done"})
                return
            else:
                reply = {"op": "failed", "error": "tack's connection worker has no %r" % op}
        except AnsibleConnectionFailure as ex:
            reply = {"op": "failed", "error": str(ex), "unreachable": True}
        except Exception as ex:
            reply = {"op": "failed", "error": str(ex) or type(ex).__name__}
        channel.send(reply)


main()
