"""A bot's token kept in a file, for the next start to find (``--token-file``, and the
demo's bots beside its database)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def keep_secret(path: Path, make: Callable[[], str]) -> str:
    """``make()`` a secret and keep it in ``path``: readable by its owner only, written
    whole or not at all (a crash leaves no half token for the next start to read).

    The file is created before ``make`` runs, so that a path that cannot be written
    fails before a bot version exists (a container restarting in a loop would register
    one at every start). It is a new file (never one planted at a known name), renamed
    into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            secret = make()
            out.write(secret + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    return secret
