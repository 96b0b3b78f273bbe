"""The command line that runs a bot: under bubblewrap, or as a plain process, with rlimits.

Under bubblewrap (``sandbox``) the bot gets:

- its own network namespace (no interface but a downed loopback: no network at all), its
  own PID, IPC and UTS namespaces, a new session (no terminal to inject into), and it
  dies with the host (``--die-with-parent``; killing bwrap ends its whole PID namespace);
- a filesystem of read-only binds only: /usr (and the /bin, /lib... links into it), a
  few files of /etc that programs need to start (the loader's cache, alternatives,
  timezone), the Python it runs on, Arena's own package, and the bot's code at /bot;
  a fresh /proc of its namespace, a minimal /dev, and /tmp as a tmpfs of bounded size.
  Nothing else: not the store, the tokens directory, a home, or another bot's code;
- when the host runs as root: an unprivileged user of its own (a uid no other sandbox
  uses at the same time), which makes RLIMIT_NPROC a bound on this bot's processes alone;
- rlimits (``prlimit``) for address space, CPU time, processes, open files, file size,
  and no core files.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from arena.sandbox.limits import Limits

BWRAP = "/usr/bin/bwrap"
#: the first of the uids given to sandboxes when the host is root (one each, at a time)
UID_BASE = 3_100_000
UID_SLOTS = 4096
#: where the bot's code is, inside the sandbox
CODE_DIR = "/bot"
#: the files of /etc a program needs to start (those present are bound read-only)
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
PATH = "/usr/local/bin:/usr/bin:/bin"


def find_bwrap() -> str | None:
    """bubblewrap's path: ``$ARENA_BWRAP`` if set (a test names a missing one), else
    the one on PATH or Debian's."""
    chosen = os.environ.get("ARENA_BWRAP")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    found = shutil.which("bwrap")
    if found:
        return found
    return BWRAP if os.access(BWRAP, os.X_OK) else None


@functools.cache
def sandbox_problem() -> str | None:
    """None if bubblewrap runs here; else one line saying why it does not."""
    bwrap = find_bwrap()
    if bwrap is None:
        return (
            "bubblewrap is not installed (Debian: apt-get install bubblewrap; `make` "
            "installs it where it may)"
        )
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not installed: the sandbox's limits need it"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed: the sandbox's user needs it"
    probe = [*_namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"]
    try:
        done = subprocess.run(
            [bwrap, *probe], capture_output=True, timeout=20, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not run here: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        said = why[-1] if why else f"exit status {done.returncode}"
        return (
            f"bubblewrap cannot make its namespaces here ({said}); in a container, allow "
            "user namespaces or give it CAP_SYS_ADMIN with seccomp unconfined (docs/hosting.md)"
        )
    return None


def _namespaces() -> list[str]:
    common = [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
    ]
    # as root, no user namespace: the bot is given a real unprivileged uid (setpriv),
    # whose RLIMIT_NPROC counts its processes alone; otherwise a user namespace
    return common if os.geteuid() == 0 else ["--unshare-user", *common]


class UidSlot:
    """A uid no other sandbox on this machine uses while this one runs (root only):
    a lock on a file per uid, held for the sandbox's life."""

    def __init__(self) -> None:
        folder = Path(tempfile.gettempdir()) / "arena-sandbox-uids"
        folder.mkdir(mode=0o700, exist_ok=True)
        start = os.getpid() % UID_SLOTS
        for i in range(UID_SLOTS):
            slot = (start + i) % UID_SLOTS
            handle: IO[bytes] = open(folder / f"{slot}.lock", "wb")  # noqa: SIM115
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.uid = UID_BASE + slot
            self._handle: IO[bytes] | None = handle
            return
        raise RuntimeError("every sandbox uid is in use")

    def release(self, wait_s: float = 10.0) -> None:
        """Give the uid back, once none of its processes is left (a PID namespace dies
        with its bwrap, but not in the same instant), or after ``wait_s``."""
        if self._handle is None:
            return
        deadline = time.monotonic() + wait_s
        while uid_processes(self.uid) and time.monotonic() < deadline:
            time.sleep(0.02)
        self._handle.close()
        self._handle = None


def python_paths() -> list[str]:
    """What the Python running Arena needs, to run Arena inside: its installation, the
    virtual environment, and Arena's own packages (an editable install's source
    folders, never the checkout around them, which may hold a store)."""
    import arena

    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    paths.update(os.path.realpath(p) for p in arena.__path__)
    try:
        import arena.bots

        paths.update(os.path.realpath(p) for p in arena.bots.__path__)
    except ImportError:  # pragma: no cover - installed without the built-in bots
        pass
    # a folder inside another bound one is bound already
    ordered = sorted(paths)
    return [p for p in ordered if not any(p.startswith(q + os.sep) for q in ordered if q != p)]


def sandbox_command(
    command: Sequence[str],
    code_dir: Path,
    limits: Limits,
    uid: int | None,
    extra_binds: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The whole argv: prlimit, bwrap, (setpriv to ``uid``), the bot's ``command`` in
    /bot. ``extra_binds``: (source, destination) pairs bound read-write (a Unix socket's
    folder)."""
    bwrap = find_bwrap() or BWRAP
    args = [*rlimits(limits, uid), bwrap, *_namespaces()]
    args += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--perms", "0755", "--dir", "/etc"]  # bwrap would make it private to root
    for name in ETC_FILES:
        path = f"/etc/{name}"
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    # the private /tmp first: Arena's own folders may be under /tmp (a checkout there),
    # and are then bound on top of it, not hidden by it
    args += ["--perms", "1777", "--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    outside_usr = [p for p in python_paths() if not p.startswith("/usr/")]
    # the folders above a bind are made by bwrap private to root: made readable first
    # (not /tmp itself: it stays writable by all, as a /tmp is)
    above = {str(parent) for p in outside_usr for parent in Path(p).parents}
    parents = sorted(above - {"/", "/tmp"})
    for parent in parents:
        args += ["--perms", "0755", "--dir", parent]
    for path in outside_usr:
        args += ["--ro-bind", path, path]
    args += ["--ro-bind", str(code_dir), CODE_DIR]
    for source, destination in extra_binds:
        for parent in reversed(Path(destination).parents):
            if str(parent) != "/":
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--bind", source, destination]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp"]
    args += ["--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8"]
    args += ["--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "MALLOC_ARENA_MAX", "2"]
    args += ["--chdir", CODE_DIR]
    if uid is not None:
        args += ["--cap-add", "CAP_SETUID,CAP_SETGID", "--"]
        args += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}"]
        args += ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    else:
        args += ["--"]
    return args + list(command)


def process_command(command: Sequence[str], limits: Limits) -> list[str]:
    """A plain subprocess under the same rlimits (``--isolation process``): it shares no
    memory with the host, but sees the machine as its user does."""
    return [*rlimits(limits, None), *command]


def rlimits(limits: Limits, uid: int | None) -> list[str]:
    """prlimit's arguments: hard and soft the same, but CPU (SIGXCPU, then SIGKILL a
    second later). Processes: counted per real user, so only a uid of the sandbox's own
    (``uid``) bounds the bot alone; without one the bound is the user's processes now
    plus the limit."""
    processes = limits.processes if uid is not None else _user_processes() + limits.processes
    cpu = max(1, round(limits.cpu_s))
    return [
        shutil.which("prlimit") or "/usr/bin/prlimit",
        f"--as={limits.memory_mb << 20}",
        f"--cpu={cpu}:{cpu + 1}",
        f"--nproc={processes}",
        f"--nofile={limits.open_files}",
        f"--fsize={limits.file_size_mb << 20}",
        "--core=0",
        "--",
    ]


def _user_processes() -> int:
    """Processes and threads of this user now (what RLIMIT_NPROC counts)."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                continue
    return count


def uid_processes(uid: int) -> list[int]:
    """The processes of ``uid`` that are alive (not zombies)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as file:
                status = file.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        state = fields.get("State", "").split()
        if int(fields.get("Uid", "-1 ").split()[0]) == uid and state and state[0] not in "ZX":
            found.append(int(entry.name))
    return found
