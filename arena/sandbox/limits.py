"""Every bound a sandboxed bot is held to, with its default."""

from __future__ import annotations

from dataclasses import dataclass

#: how a bot's code may be run: in the host's process (your own code: a debugger works),
#: as a plain subprocess (shares no memory, sees the whole machine), or under bubblewrap
ISOLATIONS = ("inprocess", "process", "sandbox")


@dataclass(frozen=True)
class Limits:
    """What one bot process may use in one match. Each is enforced by the kernel
    (docs/hosting.md says how, and what the limits cannot bound)."""

    #: address space of each process (RLIMIT_AS), MiB: what it may allocate
    memory_mb: int = 1024
    #: CPU time of each process for the whole match (RLIMIT_CPU), seconds; the per-decision
    #: clock (the referee's time controls) is apart from this
    cpu_s: float = 120.0
    #: processes and threads of the bot, together (RLIMIT_NPROC of its own user)
    processes: int = 64
    #: open file descriptors of each process (RLIMIT_NOFILE)
    open_files: int = 256
    #: the largest file it may write (RLIMIT_FSIZE), MiB
    file_size_mb: int = 16
    #: its private writable /tmp (a tmpfs of this size), MiB
    tmp_mb: int = 64
    #: its stderr kept for the match (the last this many KiB; the owner can read it)
    stderr_kb: int = 64
    #: the longest line it may write to its stdout, KiB (the referee's message size)
    line_kb: int = 1024
    #: how long it has to start (its first line, a Hello), seconds
    start_s: float = 20.0

    def __post_init__(self) -> None:
        for name in (
            "memory_mb",
            "processes",
            "open_files",
            "file_size_mb",
            "tmp_mb",
            "stderr_kb",
            "line_kb",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1")
        if self.cpu_s <= 0 or self.start_s <= 0:
            raise ValueError("Limits.cpu_s and Limits.start_s must be positive")
