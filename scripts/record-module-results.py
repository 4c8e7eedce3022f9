#!/usr/bin/env python3
"""Record what ansible-core 2.21.5's own modules return for each native-module case.

usage: scripts/record-module-results.py [MODULE ...]

Cases are written by hand in crates/tack-agent/tests/modules/cases/MODULE.yml:

    cases:
      - name: file_touch_new          # unique over all files; names the scratch dir
        module: file                  # optional, default: the file's name
        args: {path: "%D/f", state: touch}
        check: false                  # optional: run in check mode
        diff: false                   # optional: ask for the diff
        setup:                        # optional: what the scratch dir holds before the run
          - {path: f, content: "x\\n", mode: "0644"}
          - {path: d, dir: true, mode: "0755"}
          - {path: l, link: f}
          - {path: h, hard: f}
          - {path: b, content_base64: "//4="}   # bytes that are not UTF-8
          - {path: old, content: "x", mtime: 1000000000}   # atime and mtime set

A case may also name a server the module talks to on 127.0.0.1 (tests/modules.rs runs the
same one, byte for byte, from tests/modules/server.rs); `%P` in any string argument (and in
the server's own replies) stands for its port, which is stored with the result as `port`:

        server: {kind: listen}                  # listening, never accepting
        server: {kind: closed}                  # nobody listens on %P
        server: {kind: banner, text: "SSH-2.0-x\r\n"}   # accepts, sends text, closes
        server: {kind: http, routes: {"/a": {status: 200, headers: [[K, V]], body: "..."},
                                      "/e": {echo: true, echo_headers: [x-h]}}}

A case that changes the host's user database says so: `before` and `after` list commands
(argv lists, `%D` substituted) run before the module and after it (always), e.g. to make or remove the made-up
group a case works on; such a case is only recorded and tested as root. `vary` names result
keys whose numbers the host chooses (a GID groupadd picked), compared as `<n>`. `needs` lists
programs the case needs on the host (`crontab`); the test skips the case where one is missing.
`prepare` lists commands (argv lists, `%D` substituted) run before the module on any host (a
virtualenv to work in); `opaque` lists scratch paths whose contents are not compared (only
the path itself: a virtualenv's files hold byte-compiled sources and install records).
apt cases (cases/apt.yml) set the package state they need with `before` commands and put
the machine back with `after` (so they are recorded and tested as root only); ansible's apt
respawns under /usr/bin/python3 (python3-apt), which finds ansible through PYTHONPATH.
Every run has PIP_NO_CACHE_DIR=1 and PIP_DISABLE_PIP_VERSION_CHECK=1, so that pip's output
does not depend on a cache or on when pip last looked for a newer release.

An `echo` route answers with a compact, key-sorted JSON object of the request's method,
target, body, content type and the named request headers.

`%H` stands for the host's name; a `hostname` case's record also stores `hostname`, `fqdn`
(as `socket.getfqdn()` gives them) for the test to compare them as placeholders.

`%D` in any string argument stands for the case's scratch directory, the fixed path
/tmp/tack-modules/CASE (made anew for each run), which is also the module's working
directory. Each case runs ansible's module through ansible's own module loader (what the
AnsiballZ payload calls on a host), with the internal arguments the
controller's action passes (`_ansible_module_name` as that action names the module,
`_ansible_check_mode`, `_ansible_diff`): what is recorded is exactly the module's printed
result, before the controller adds its own keys. `shell` runs as its action does: the
`command` module with `_uses_shell`.

The `argspec` family (cases/argspec.yml) checks argument handling alone: each case gives
`spec` (an `argument_spec` as a module writes it, plus optional `mutually_exclusive`,
`required_one_of`, `required_together`, `required_if` lists) and `args`; a probe module built
on ansible's own `AnsibleModule` with that spec returns `{"params": module.params}` (no_log
values masked as ansible masks every result), or ansible's failure.

The outcome is written to crates/tack-agent/tests/modules/MODULE.json: per case, the case,
`result` (the module's JSON result) and `files` (the scratch dir after the run: per relative
path its type, mode, and content sha1 or link target). Only this script writes those files.
Runs use PYTHONHASHSEED=0 (ansible lists its boolean spellings in set order), TZ=UTC,
LANG=C.UTF-8 and HOME=/nonexistent-home/tack; the Rust test sets the same HOME.
"""

import base64
import hashlib
import json
import os
import shutil
import socket
import socketserver
import stat
import subprocess
import sys
import threading
from pathlib import Path

try:
    import yaml
except ImportError:  # re-run with the reference's python, which has PyYAML
    _ref_python = os.path.join(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"), "bin", "python")
    os.execv(_ref_python, [_ref_python, __file__, *sys.argv[1:]])

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "crates" / "tack-agent" / "tests" / "modules"
SCRATCH = Path("/tmp/tack-modules")
REF = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))
PYTHON = REF / "bin" / "python"
# A fixed home, so that `~` and $HOME expand alike in the recording and in the Rust test.
HOME = "/nonexistent-home/tack"
# pip's output without a download cache or a self-version check (the Rust test sets the same).
PIP_ENV = {"PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

# The name each controller action gives the module it runs (shown in ansible's
# unsupported-parameters message).
ACTION_NAMES = {"command": "ansible.legacy.command", "shell": "ansible.legacy.command",
                "copy": "ansible.legacy.copy", "uri": "ansible.legacy.uri",
                "service": "ansible.legacy.service"}


def subst(value, d):
    if isinstance(value, str):
        return value.replace("%D", d)
    if isinstance(value, list):
        return [subst(v, d) for v in value]
    if isinstance(value, dict):
        return {k: subst(v, d) for k, v in value.items()}
    return value


def subst_port(value, port):
    if isinstance(value, str):
        return value.replace("%P", str(port))
    if isinstance(value, list):
        return [subst_port(v, port) for v in value]
    if isinstance(value, dict):
        return {k: subst_port(v, port) for k, v in value.items()}
    return value


def subst_host(value):
    if isinstance(value, str):
        return value.replace("%H", socket.gethostname())
    if isinstance(value, list):
        return [subst_host(v) for v in value]
    if isinstance(value, dict):
        return {k: subst_host(v) for k, v in value.items()}
    return value


def make_setup(scratch, setup):
    for entry in setup or []:
        p = scratch / entry["path"]
        p.parent.mkdir(parents=True, exist_ok=True)
        if entry.get("dir"):
            p.mkdir(exist_ok=True)
        elif "link" in entry:
            os.symlink(entry["link"], p)
        elif "hard" in entry:
            os.link(scratch / entry["hard"], p)
        elif "content_base64" in entry:
            p.write_bytes(base64.b64decode(entry["content_base64"]))
        else:
            p.write_bytes(entry.get("content", "").encode())
        if "mode" in entry and "link" not in entry:
            os.chmod(p, int(entry["mode"], 8))
        if "mtime" in entry:
            os.utime(p, (entry["mtime"], entry["mtime"]), follow_symlinks=False)


def file_state(scratch):
    state = {}
    for dirpath, dirnames, filenames in os.walk(scratch):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = str(p.relative_to(scratch))
            st = os.lstat(p)
            entry = {"mode": "%04o" % stat.S_IMODE(st.st_mode)}
            if stat.S_ISLNK(st.st_mode):
                entry = {"type": "link", "target": os.readlink(p)}
            elif stat.S_ISDIR(st.st_mode):
                entry["type"] = "directory"
            else:
                entry["type"] = "file"
                entry["sha1"] = hashlib.sha1(p.read_bytes()).hexdigest()
                entry["nlink"] = st.st_nlink
            state[rel] = entry
    return dict(sorted(state.items()))


# How AnsiballZ starts a module on the host: ansible's own loader, which also turns an
# exception escaping the module into the failure result the controller receives.
LOADER = """
import sys
from ansible.module_utils._internal._ansiballz import _loader
with open(sys.argv[2], "rb") as f:
    params = f.read()
_loader.run_module(json_params=params, profile="legacy", module_fqn=sys.argv[1],
                   modlib_path="/nonexistent", extensions={})
"""

PROBE = """
import json, os
from ansible.module_utils.basic import AnsibleModule
spec = json.loads(os.environ["TACK_ARGSPEC"])
checks = {k: spec.pop(k) for k in ("mutually_exclusive", "required_one_of", "required_together", "required_if") if k in spec}
module = AnsibleModule(argument_spec=spec["options"], supports_check_mode=True, **checks)
module.exit_json(params=module.params)
"""


def run_probe(case):
    SCRATCH.mkdir(parents=True, exist_ok=True)
    probe = SCRATCH / ".argspec_probe.py"
    probe.write_text(PROBE)
    args = dict(case.get("args") or {})
    args["_ansible_module_name"] = "probe"
    args_file = SCRATCH / f".{case['name']}.args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "TZ": "UTC", "LANG": "C.UTF-8",
           "HOME": HOME, "TACK_ARGSPEC": json.dumps(case["spec"]),
           "PYTHONPATH": str(REF / "lib" / "python3.13" / "site-packages")}
    proc = subprocess.run([str(PYTHON), str(probe), str(args_file)], env=env, capture_output=True, text=True)
    args_file.unlink()
    probe.unlink()
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise SystemExit(f"{case['name']}: no result\n{proc.stdout}\n{proc.stderr}")
    return {"case": case, "result": json.loads(lines[-1])}


REASONS = {200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found",
           304: "Not Modified", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}


def http_reply(routes, port, raw):
    """The bytes the case's HTTP server answers `raw` (one whole request) with."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    route = routes.get(target) or routes.get(target.split("?")[0]) or {"status": 404, "body": "no route"}
    if route.get("echo"):
        seen = {"method": method, "target": target, "body": body.decode("utf-8", "replace"),
                "content_type": headers.get("content-type")}
        for h in route.get("echo_headers", []):
            seen[h] = headers.get(h.lower())
        out_body = json.dumps(seen, sort_keys=True, separators=(",", ":")).encode()
    else:
        out_body = route.get("body", "").replace("%P", str(port)).encode()
    status = route.get("status", 200)
    out = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}"]
    for k, v in route.get("headers", []):
        out.append(f"{k}: {v.replace('%P', str(port))}")
    out.append(f"Content-Length: {len(out_body)}")
    out.append("Connection: close")
    reply = ("\r\n".join(out) + "\r\n\r\n").encode()
    return reply if method == "HEAD" else reply + out_body


def read_request(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def port_in_use(port):
    """Whether any TCP socket (a lingering TIME_WAIT one included) uses local `port`."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        if any(l.split()[1].endswith(":%04X" % port) for l in lines if len(l.split()) > 1):
            return True
    return False


def fresh_port():
    """A port no other socket has used lately, so a case about a port's connections sees
    only its own."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if not port_in_use(port):
            return port


class Server:
    """The case's server on 127.0.0.1, for the length of one run."""

    def __init__(self, spec):
        self.spec, self.sock, self.server = spec, None, None
        kind = spec["kind"]
        if kind in ("listen", "closed"):
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", fresh_port()))
            self.port = self.sock.getsockname()[1]
            if kind == "listen":
                self.sock.listen(16)
            else:
                self.sock.close()
                self.sock = None
            return
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                if kind == "banner":
                    self.request.sendall(spec["text"].encode())
                    return
                raw = read_request(self.request)
                if raw:
                    self.request.sendall(http_reply(spec.get("routes", {}), outer.port, raw))

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        if self.sock:
            self.sock.close()
        if self.server:
            self.server.shutdown()
            self.server.server_close()


def run_case(module, case):
    if module == "argspec":
        return run_probe(case)
    name = case["name"]
    scratch = SCRATCH / name
    if scratch.exists() or scratch.is_symlink():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    os.chmod(scratch, 0o755)
    make_setup(scratch, case.get("setup"))
    module = case.get("module", module)
    for program in case.get("needs") or []:
        if not shutil.which(program, path="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"):
            raise SystemExit(f"{name}: needs {program} on this host")
    if case.get("before") or case.get("after"):
        if os.geteuid() != 0:
            raise SystemExit(f"{name}: changes the user database; record as root")
        for argv in subst(case.get("after") or [], str(scratch)):
            subprocess.run(argv, capture_output=True)
        for argv in subst(case.get("before") or [], str(scratch)):
            subprocess.run(argv, capture_output=True, check=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONHASHSEED": "0", "TZ": "UTC",
           "LANG": "C.UTF-8", "HOME": HOME, **PIP_ENV}
    if module == "apt":
        # ansible's apt respawns itself under the system python (which has python3-apt); the
        # respawned interpreter finds ansible's module_utils here, as it would in AnsiballZ's zip.
        env["PYTHONPATH"] = str(REF / "lib" / "python3.13" / "site-packages")
    for argv in subst(case.get("prepare") or [], str(scratch)):
        subprocess.run(argv, capture_output=True, check=True, env=env, cwd=scratch)
    server = Server(case["server"]) if case.get("server") else None
    args = subst(dict(case.get("args") or {}), str(scratch))
    if server:
        args = subst_port(args, server.port)
    if module == "hostname":
        # `%H` is the hostname cases' placeholder; elsewhere it is text (strftime's hour).
        args = subst_host(args)
    real = "command" if module == "shell" else module
    if module == "shell":
        args["_uses_shell"] = True
    args["_ansible_module_name"] = ACTION_NAMES.get(module, module)
    args["_ansible_check_mode"] = bool(case.get("check"))
    args["_ansible_diff"] = bool(case.get("diff"))
    args_file = SCRATCH / f".{name}.args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    proc = subprocess.run([str(PYTHON), "-c", LOADER, f"ansible.modules.{real}", str(args_file)],
                          cwd=scratch, env=env, capture_output=True, text=True, input=case.get("stdin", ""))
    args_file.unlink()
    if server:
        server.close()
    for argv in subst(case.get("after") or [], str(scratch)):
        subprocess.run(argv, capture_output=True)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise SystemExit(f"{name}: no result\n{proc.stdout}\n{proc.stderr}")
    result = json.loads(lines[-1])
    files = file_state(scratch)
    for hidden in case.get("opaque") or []:
        files = {k: v for k, v in files.items() if not k.startswith(hidden + "/")}
    shutil.rmtree(scratch)
    out = {"case": case, "result": result, "files": files}
    if server:
        out["port"] = server.port
    if module == "hostname":
        out["hostname"] = socket.gethostname()
        out["fqdn"] = socket.getfqdn()
    return out


def main():
    # The scratch paths are fixed, so runs (this script, or tests/modules.rs in any worktree)
    # take turns on one lock.
    import fcntl
    lock = open("/tmp/tack-modules.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    wanted = set(sys.argv[1:])
    for path in sorted((CASES / "cases").glob("*.yml")):
        module = path.stem
        if wanted and module not in wanted:
            continue
        cases = yaml.safe_load(path.read_text())["cases"]
        out = [run_case(module, case) for case in cases]
        (CASES / f"{module}.json").write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
        print(f"{module}: {len(out)} cases")
    try:
        SCRATCH.rmdir()
    except OSError:
        pass


if __name__ == "__main__":
    main()
