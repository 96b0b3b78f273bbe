"""Stored code on the machine that plays it: taken from the store by its digest,
checked against the digest, unpacked once into a private cache folder.

A worker never plays a hosted bot (or a tournament's bot file) from a path someone
gave: it reads the bytes from the store (``code_blobs``), checks that their SHA-256 is
the digest the seat names, and unpacks them with the submission's checks
(:func:`arena.hosting.archive.unpack`) into ``CACHE/DIGEST/``, where ``CACHE`` is
``$ARENA_CODE_CACHE`` or ``~/.cache/arena/code``: written by its owner only, and not
listed by others (mode 711; each code's folder is readable, 755, since a sandbox may run
its bot as a user of its own). A folder there is made whole or not at all (unpacked
beside it, then renamed), so two processes unpacking the same code at once both end with
the same folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.hosting.archive import MANIFEST, PY_NAME, parse_manifest, unpack

if TYPE_CHECKING:
    from arena.store.models import CodeRow

#: stores opened by URL in this process (a pool's worker process reads code from its
#: tournament's store, named by the job)
_stores: dict[str, Any] = {}


class CodeMissing(LookupError):
    """The code a seat names is not in the store."""


def open_store(store: Any) -> Any:
    """``store`` itself, or the store at that URL (opened once per process)."""
    if not isinstance(store, str):
        return store
    if store not in _stores:
        from arena.store import Store

        _stores[store] = Store(store, create=False)
    return _stores[store]


def fetch(digest: str, store: Any) -> CodeRow:
    """The stored code of ``digest`` in ``store`` (a Store or its URL), its bytes
    checked against the digest."""
    row = open_store(store).code(digest)
    if row is None:
        raise CodeMissing(f"code {digest[:12]} is not in the store")
    if hashlib.sha256(row.data).hexdigest() != digest:
        raise CodeMissing(f"code {digest[:12]}: the stored bytes do not have that digest")
    return row


def cache_root() -> Path:
    """The cache folder, made (mode 711) if it is new; refused if it is not its owner's
    or others may write it."""
    root = Path(os.environ.get("ARENA_CODE_CACHE") or Path.home() / ".cache" / "arena" / "code")
    if not root.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        root.chmod(0o711)
    info = root.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise PermissionError(
            f"{root}: the code cache must be written by its owner only (chmod 711 {root}, "
            "or set ARENA_CODE_CACHE)"
        )
    return root


def code_dir(digest: str, store: Any) -> Path:
    """The folder holding ``digest``'s code, unpacked from ``store`` the first time."""
    root = cache_root()
    final = root / digest
    if final.is_dir():
        return final
    row = fetch(digest, store)
    partial = Path(tempfile.mkdtemp(dir=root, prefix=f".{digest[:12]}."))
    try:
        unpack(row.data, row.format, partial)
        readable(partial)
        try:
            os.rename(partial, final)
        except OSError:
            if not final.is_dir():  # not another process's folder: a real failure
                raise
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return final


def readable(folder: Path) -> None:
    """Make ``folder`` and the folders in it readable (never writable) by others: a
    sandbox may run its bot as a user of its own."""
    for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        sub.chmod(0o755)


def bot_file(digest: str, store: Any) -> Path:
    """A stored ``.py`` bot file's path in the cache."""
    return code_dir(digest, store) / PY_NAME


def program(digest: str, store: Any) -> Any:
    """What to run for ``digest``'s code: a :class:`arena.sandbox.BotProgram`."""
    return program_in(code_dir(digest, store))


def program_in(folder: Path) -> Any:
    """What to run for the code unpacked in ``folder``: its manifest's entry (an SDK bot
    file, under Arena's runner) or command; a lone ``bot.py`` is its own entry."""
    from arena.sandbox import BotProgram, python_bot_program, python_executable

    manifest_path = folder / MANIFEST
    if not manifest_path.exists():
        tops = [p for p in folder.iterdir() if (p / MANIFEST).is_file()]
        if (folder / PY_NAME).is_file() and not tops:
            return python_bot_program(folder / PY_NAME)
        if len(tops) != 1:
            raise CodeMissing(f"{folder}: no {MANIFEST} in it")
        folder = tops[0]
        manifest_path = folder / MANIFEST
    manifest = parse_manifest(manifest_path.read_bytes())
    if manifest.entry is not None:
        # the whole folder is the bot's (its entry imports the modules beside it)
        command = (python_executable(), "-m", "arena.sandbox.runner", manifest.entry)
        return BotProgram(code_dir=folder, command=command)
    return BotProgram(code_dir=folder, command=manifest.command)
