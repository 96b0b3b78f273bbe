"""Bot code run as its own OS process: under bubblewrap (``sandbox``), or plain (``process``).

The seam the rest of Arena uses:

- :class:`Limits`: every bound, with its default; ``ISOLATIONS``;
- :func:`sandbox_problem`: None if bubblewrap works here, else one line saying why;
- :class:`BotProgram`: a bot's own files (bound read-only at /bot) and its argv;
- :func:`python_bot_program`: an SDK bot file as a program (the stdio runner);
- :func:`stdio_player`: a program started for one match, as a refereed engine player
  (:class:`SandboxedPlayer`), played over the stdin/stdout protocol (``stdio``);
- :class:`SandboxError`: a program that cannot start, with the reason.

docs/hosting.md says what the sandbox promises and what it does not; docs/protocol.md
describes the stdio protocol.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from arena.sandbox.bwrap import sandbox_problem
from arena.sandbox.limits import ISOLATIONS, Limits
from arena.sandbox.player import BotProgram, SandboxedPlayer, SandboxError

#: where bot files are staged for the sandbox, one folder per content
STAGE_DIR = "arena-bot-code"


def python_bot_program(path: Path, digest: str | None = None) -> BotProgram:
    """The SDK bot file ``path`` as a program: a folder of its own holding that file
    alone (no other file beside it is visible), run by Arena's stdio runner with the
    Python running Arena. The file is read, never run here. ValueError (one line) if it
    is not a Python file, or its content is no longer ``digest`` (a tournament's
    version)."""
    path = Path(path)
    if path.suffix != ".py":
        raise ValueError(f"{path}: not a Python file (expected a path ending in .py)")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    content = path.read_bytes()
    found = hashlib.sha256(content).hexdigest()
    if digest is not None and found != digest:
        raise ValueError(
            f"{path} changed since the tournament was created: that version of "
            f"file:{path.stem} is gone (restore the file, or start a new tournament)"
        )
    # staged by name and content: the same bytes under another name (a file, and its
    # copy in the store's code cache, bot.py) are another folder
    code_dir = stage_code(
        {path.name: content}, hashlib.sha256(f"{path.name}\0".encode() + content).hexdigest()
    )
    return BotProgram(
        code_dir=code_dir,
        command=(python_executable(), "-m", "arena.sandbox.runner", path.name),
    )


def stage_code(files: dict[str, bytes], digest: str) -> Path:
    """A folder holding ``files`` alone, readable by a sandbox's own user, named by
    ``digest`` (made once; its content never changes)."""
    root = Path(tempfile.gettempdir()) / STAGE_DIR
    root.mkdir(mode=0o711, exist_ok=True)
    folder = root / digest
    if folder.is_dir():
        return folder
    partial = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}.", dir=root))
    for name, data in files.items():
        target = partial / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o644)
    for sub in [partial, *(p for p in partial.rglob("*") if p.is_dir())]:
        sub.chmod(0o755)
    try:
        partial.rename(folder)
    except OSError:  # made meanwhile by another process: the same content
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def python_executable() -> str:
    """The Python that runs Arena (its virtual environment's, which finds Arena)."""
    return sys.executable or os.path.join(sys.prefix, "bin", "python3")


def stdio_player(
    program: BotProgram,
    context: Any,
    *,
    isolation: str = "sandbox",
    limits: Limits = Limits(),  # noqa: B008 - frozen
    **options: Any,
) -> SandboxedPlayer:
    """``program`` started for the match of ``context`` (an ``arena.sdk.MatchContext``):
    a refereed player over the stdio protocol. ``options``: ``decision_ms``,
    ``time_bank_ms`` (the referee's time controls), ``name``. SandboxError if it cannot
    start (bubblewrap missing, the program failed before its Hello)."""
    return SandboxedPlayer(program, context, isolation=isolation, limits=limits, **options)


#: where a referee's Unix socket is bound inside a sandbox
REFEREE_SOCKET = "/run/arena/referee.sock"


class ConnectedBot:
    """An SDK bot file connected to a referee over gRPC from inside a sandbox: the
    referee's Unix socket (``arena referee --unix PATH``) bound in at REFEREE_SOCKET, no
    other way out. ``close()`` ends its whole process tree."""

    def __init__(
        self,
        path: Path,
        socket_path: str,
        token: str,
        *,
        limits: Limits = Limits(),  # noqa: B008 - frozen
        max_matches: int = 16,
    ) -> None:
        import subprocess

        from arena.sandbox import bwrap

        problem = sandbox_problem()
        if problem is not None:
            raise SandboxError(problem)
        program = python_bot_program(path)
        command = (
            python_executable(),
            *("-m", "arena.sandbox.connect", Path(path).name),
            *("--referee", f"unix:{REFEREE_SOCKET}", "--token", token),
            *("--max-matches", str(max_matches)),
        )
        self._slot = bwrap.UidSlot() if os.geteuid() == 0 else None
        argv = bwrap.sandbox_command(
            command,
            program.code_dir,
            limits,
            self._slot.uid if self._slot else None,
            [(socket_path, REFEREE_SOCKET)],
        )
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def close(self) -> None:
        import signal

        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        if self._slot is not None:
            self._slot.release()
            self._slot = None


__all__ = [
    "ISOLATIONS",
    "REFEREE_SOCKET",
    "BotProgram",
    "ConnectedBot",
    "Limits",
    "SandboxError",
    "SandboxedPlayer",
    "python_bot_program",
    "sandbox_problem",
    "stage_code",
    "stdio_player",
]
