#!/usr/bin/env python3
"""Record golden expectations from the reference, ansible-core 2.21.5.

usage: scripts/record-goldens.py [CASE_DIR_OR_SUITE_DIR ...]

With no argument every case under tests/golden/ is recorded. See tests/golden/README.md for the
case format. The reference is $ANSIBLE_REF (a venv with bin/ansible-playbook), installed with
../shared/tools/install-ansible-ref.sh when missing.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
RUN_ROOT = Path(os.environ.get("TACK_GOLDEN_ROOT", "/tmp/tack-golden"))
COMMANDS = {"ansible-playbook", "ansible-inventory", "ansible-vault", "ansible"}


def reference() -> Path:
    ref = Path(os.environ.get("ANSIBLE_REF", "/opt/ansible-ref"))
    if not (ref / "bin" / "ansible-playbook").exists():
        installer = ROOT.parent / "shared" / "tools" / "install-ansible-ref.sh"
        subprocess.run(["sh", str(installer), str(ref)], check=True)
    return ref


def cases(args: list[str]) -> list[Path]:
    roots = [Path(a).resolve() for a in args] or [GOLDEN]
    found = []
    for root in roots:
        if (root / "cmd").exists():
            found.append(root)
        else:
            found.extend(sorted(p.parent for p in root.rglob("cmd") if "expected" not in p.parts))
    return found


def stage(case: Path) -> Path:
    """Copy the case to its fixed run directory, as the Rust harness does."""
    rel = case.relative_to(GOLDEN)
    work = RUN_ROOT / rel
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(case, work, symlinks=True, ignore=shutil.ignore_patterns("expected"))
    (work / ".home").mkdir()
    return work


SSHD = ROOT / "scripts" / "sshd-loopback.sh"


def start_sshd(case: Path, work: Path) -> bool:
    """A case with an `sshd` file gets its own loopback sshd in <CASE>/.sshd; `@SSHD_PORT@`,
    `@SSHD_KEY@`, `@SSHD_USER@` and `@SSHD_KNOWN_HOSTS@` in its staged files are replaced with
    that server's port, client key, user and known_hosts file, as the Rust harness does. An
    `sshd` file saying `password` asks for a server that also takes password logins, and
    `@SSHD_PASSWORD@` and `@SSHD_PASSWORD_USER@` are replaced with its password and user."""
    if not (case / "sshd").exists():
        return False
    sshd = work / ".sshd"
    password = (case / "sshd").read_text().strip() == "password"
    port = subprocess.run(["sh", str(SSHD), "start", str(sshd)] + (["password"] if password else []),
                          check=True, capture_output=True, text=True).stdout.strip()
    read = lambda name: (sshd / name).read_text().strip() if (sshd / name).exists() else ""
    values = {
        "@SSHD_PORT@": port,
        "@SSHD_KEY@": str(sshd / "client_key"),
        "@SSHD_USER@": (sshd / "user").read_text().strip(),
        "@SSHD_KNOWN_HOSTS@": str(sshd / "known_hosts"),
        "@SSHD_PASSWORD_USER@": read("password_user"),
        "@SSHD_PASSWORD@": read("password"),
    }
    for path in work.rglob("*"):
        if not path.is_file() or path.is_symlink() or sshd in path.parents:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        replaced = text
        for key, value in values.items():
            replaced = replaced.replace(key, value)
        if replaced != text:
            path.write_text(replaced)
    return True


def stop_sshd(work: Path) -> None:
    subprocess.run(["sh", str(SSHD), "stop", str(work / ".sshd")], check=False)


def environment(case: Path, work: Path, bindir: Path) -> dict[str, str]:
    env = {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work / ".home"),
        "LANG": "C.UTF-8",
        "ANSIBLE_NOCOLOR": "1",
    }
    tty = case / "tty"
    if tty.exists():
        env["TERM"] = tty.read_text().split()[0]
    env_file = case / "env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, value = line.partition("=")
                env[name] = value.replace("<CASE>", str(work))
    return env


def commands(case: Path) -> list[list[str]]:
    lines = [l for l in (case / "cmd").read_text().splitlines() if l.strip() and not l.startswith("#")]
    argvs = [shlex.split(l) for l in lines]
    for argv in argvs:
        if argv[0] not in COMMANDS:
            raise SystemExit(f"{case}/cmd: the command must be one of {sorted(COMMANDS)}")
    return argvs


def file_state(work: Path, rel: str) -> str:
    """One line of expected/files: the path, what it is, its permission bits and, for a
    regular file, the SHA-1 of its bytes (a symlink gives its target)."""
    import hashlib
    import stat as st

    path = work / rel
    try:
        info = path.lstat()
    except FileNotFoundError:
        return f"{rel} absent"
    mode = f"{st.S_IMODE(info.st_mode):04o}"
    if st.S_ISLNK(info.st_mode):
        return f"{rel} link {mode} {os.readlink(path)}"
    if st.S_ISDIR(info.st_mode):
        return f"{rel} directory {mode}"
    return f"{rel} file {mode} {hashlib.sha1(path.read_bytes()).hexdigest()}"


def record(case: Path, ref: Path) -> None:
    """Runs each line of `cmd` in order in one staged copy. One line records into
    expected/{stdout,stderr,rc}; several lines into expected/<n>/ (1-based)."""
    argvs = commands(case)
    work = stage(case)
    stdin = (case / "stdin").read_bytes() if (case / "stdin").exists() else b""
    expected = case / "expected"
    if expected.exists():
        shutil.rmtree(expected)
    sshd = start_sshd(case, work)
    try:
        run_commands(case, work, ref, argvs, stdin, expected)
    finally:
        if sshd:
            stop_sshd(work)
    check = case / "check-files"
    if check.exists():
        rels = [l.strip() for l in check.read_text().splitlines() if l.strip() and not l.startswith("#")]
        (expected / "files").write_text("".join(file_state(work, r) + "\n" for r in rels))


def answers(case: Path):
    """A case's `answers`: `PROMPT<TAB>ANSWER` lines type the answer and a newline;
    `PROMPT<TAB><TAB>KEYS` lines type only the keys, where `\\xHH` is one byte (`\\x03` is
    Ctrl+C at a terminal in raw mode). Each is typed only once its prompt has been printed
    since the last answer: typed ahead, a terminal echoes it, and a password prompt's
    TCSAFLUSH drops it."""
    f = case / "answers"
    if not f.exists():
        return []
    typed = []
    for line in f.read_text().split("\n"):
        if "\t" not in line:
            continue
        prompt, _, answer = line.partition("\t")
        if answer.startswith("\t"):
            keys = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]),
                          answer[1:].encode())
        else:
            keys = answer.encode() + b"\n"
        typed.append((prompt, keys))
    return typed


def run_answering(argv, cwd, env, stdin: bytes, prompts):
    """Runs argv with `stdin` piped in, then types each of `prompts`' answers once asked."""
    import threading
    import time

    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    chunks = {"stdout": bytearray(), "stderr": bytearray()}

    def drain(name, stream):
        while True:
            data = os.read(stream.fileno(), 65536)
            if not data:
                break
            chunks[name].extend(data)

    readers = [threading.Thread(target=drain, args=(n, getattr(proc, n))) for n in chunks]
    for r in readers:
        r.start()
    proc.stdin.write(stdin)
    proc.stdin.flush()
    seen = 0
    for prompt, answer in prompts:
        deadline = time.time() + 60
        while True:
            at = chunks["stdout"].find(prompt.encode(), seen)
            if at >= 0:
                seen = at + len(prompt)
                break
            if time.time() > deadline or proc.poll() is not None:
                sys.exit(f"{cwd}: the prompt {prompt!r} never came")
            time.sleep(0.01)
        proc.stdin.write(answer)
        proc.stdin.flush()
    proc.stdin.close()
    proc.wait()
    for r in readers:
        r.join()
    return subprocess.CompletedProcess(argv, proc.returncode, bytes(chunks["stdout"]),
                                       bytes(chunks["stderr"]))


def run_commands(case: Path, work: Path, ref: Path, argvs, stdin: bytes, expected: Path) -> None:
    for n, argv in enumerate(argvs, 1):
        if (case / "tty").exists():
            # On a pseudo-terminal (util-linux `script`), as a user at a terminal runs it.
            # A second word in `tty` is the terminal's width.
            # The program replaces the shell (`exec`): a Ctrl+C typed at the terminal then
            # reaches only the program, whose own exit code is recorded, not the shell's.
            words = (case / "tty").read_text().split()
            line = "exec " + shlex.join(argv)
            if len(words) > 1:
                line = f"stty cols {int(words[1])} rows 40 && {line}"
            argv = ["script", "-qec", line, "/dev/null"]
        proc = run_answering(argv, work, environment(case, work, ref / "bin"), stdin, answers(work))
        out = expected if len(argvs) == 1 else expected / str(n)
        out.mkdir(parents=True, exist_ok=True)
        for name, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            text = data.decode("utf-8", "surrogateescape").replace(str(work), "<CASE>")
            (out / name).write_bytes(text.encode("utf-8", "surrogateescape"))
        (out / "rc").write_text(f"{proc.returncode}\n")
        print(f"{case.relative_to(GOLDEN)}[{n}]: rc {proc.returncode}")


def main() -> None:
    ref = reference()
    for case in cases(sys.argv[1:]):
        record(case, ref)


if __name__ == "__main__":
    main()
