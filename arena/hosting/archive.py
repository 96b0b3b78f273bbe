"""A submitted bot's bytes: what they are, whether they are safe to unpack, what to run.

A submission is a ``.py`` file (an SDK bot file) or an archive (``.zip``, ``.tar.gz`` or
``.tgz``) with a manifest, ``arena-bot.toml``, at its top (or at the top of its one
folder)::

    command = ["node", "bot.js"]     # any program speaking JSON lines on stdin/stdout
    # or
    entry = "mybot.py"               # an SDK bot file, run by Arena's runner
    games = ["risk"]                 # optional: the games it plays

:func:`inspect` reads an archive the way :func:`unpack` does, counting what it really
unpacks (never trusting the sizes an archive declares), and refuses with one line: too
large unpacked, too many files, a path out of the archive, a link or a device, a zip
bomb (a compression ratio past :attr:`Bounds.max_ratio`, or unpacked past
:attr:`Bounds.max_unpacked`), a missing or malformed manifest. :func:`unpack` applies
the same checks while it writes.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tomllib
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

MANIFEST = "arena-bot.toml"
#: what a submitted file may be, by its name
FORMATS = {".py": "py", ".zip": "zip", ".tar.gz": "tar.gz", ".tgz": "tar.gz"}
#: how a ``.py`` submission is named once unpacked (its own name is not kept)
PY_NAME = "bot.py"
_CHUNK = 1 << 16


class Refused(ValueError):
    """A submission that is not accepted; the message says why, in one line."""


@dataclass(frozen=True)
class Bounds:
    """What a submission may be. ``max_bytes`` is the referee's cap on the bytes sent
    (checked as they arrive); the rest bound what an archive unpacks to."""

    max_bytes: int = 16 << 20
    max_unpacked: int = 64 << 20
    max_files: int = 2000
    #: unpacked bytes per packed byte, over the archive and over each member bigger
    #: than ``ratio_floor`` (a small file of blanks may pack tighter, harmlessly)
    max_ratio: float = 100.0
    ratio_floor: int = 1 << 20
    max_path: int = 255
    max_manifest: int = 16 << 10


@dataclass(frozen=True)
class Manifest:
    """What to run: ``entry`` (an SDK bot file) or ``command`` (an argv), run in the
    code's folder; ``games`` it plays (empty: say them when submitting)."""

    entry: str | None = None
    command: tuple[str, ...] = ()
    games: tuple[str, ...] = ()


@dataclass(frozen=True)
class Code:
    """A submission that passed :func:`inspect`."""

    format: str
    manifest: Manifest
    files: int
    unpacked: int
    #: the folder inside the archive that holds the manifest ("" : its top)
    root: str = ""
    names: tuple[str, ...] = field(default=(), repr=False)


def format_of(filename: str) -> str:
    """The format a file name says (``py``, ``zip``, ``tar.gz``), or Refused."""
    lower = filename.lower()
    for suffix in sorted(FORMATS, key=len, reverse=True):
        if lower.endswith(suffix):
            return FORMATS[suffix]
    raise Refused(
        f"{filename or 'the file'}: not a bot file (.py) or an archive (.zip, .tar.gz, .tgz)"
    )


def inspect(data: bytes, format: str, bounds: Bounds = Bounds()) -> Code:
    """Check ``data`` (of ``format``) completely without writing anything; Refused says
    what is wrong."""
    if len(data) > bounds.max_bytes:
        raise Refused(f"{len(data)} bytes: over the cap of {bounds.max_bytes} bytes")
    if format == "py":
        _check_python(data)
        return Code("py", Manifest(entry=PY_NAME), 1, len(data), "", (PY_NAME,))
    names: list[str] = []
    manifests: dict[str, bytes] = {}
    total = 0
    for name, is_dir, stream in _members(data, format, bounds):
        if is_dir:
            continue
        names.append(name)
        keep = name == MANIFEST or (name.endswith("/" + MANIFEST) and name.count("/") == 1)
        kept = bytearray()
        for chunk in stream:
            total += len(chunk)
            _check_total(total, len(data), bounds)
            if keep and len(kept) <= bounds.max_manifest:
                kept += chunk
        if keep:
            if len(kept) > bounds.max_manifest:
                raise Refused(f"{name}: over {bounds.max_manifest} bytes")
            manifests[name] = bytes(kept)
    root = _root(names)
    if root is None:
        raise Refused(
            f"no {MANIFEST} at the top of the archive (nor in its one folder): it says what "
            "to run (docs/hosting.md)"
        )
    manifest_text = manifests[f"{root}/{MANIFEST}" if root else MANIFEST]
    manifest = parse_manifest(manifest_text)
    inside = {n[len(root) + 1 :] if root else n for n in names}
    if manifest.entry is not None and manifest.entry not in inside:
        raise Refused(f"{MANIFEST}: entry {manifest.entry!r} is not in the archive")
    return Code(format, manifest, len(names), total, root, tuple(sorted(names)))


def parse_manifest(text: bytes) -> Manifest:
    """The manifest's fields, or Refused naming what is wrong."""
    try:
        doc = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise Refused(f"{MANIFEST}: not valid TOML ({exc})") from None
    unknown = sorted(set(doc) - {"entry", "command", "games"})
    if unknown:
        raise Refused(f"{MANIFEST}: unknown key {unknown[0]!r} (entry, command, games)")
    entry, command, games = doc.get("entry"), doc.get("command"), doc.get("games", [])
    if (entry is None) == (command is None):
        raise Refused(
            f'{MANIFEST}: give entry (an SDK bot file, e.g. entry = "bot.py") or command '
            '(a program, e.g. command = ["node", "bot.js"]), one of the two'
        )
    if entry is not None:
        if not isinstance(entry, str) or not entry.endswith(".py"):
            raise Refused(f"{MANIFEST}: entry must be the path of a .py file in the archive")
        _check_path(entry, Bounds())
    if command is not None and (
        not isinstance(command, list)
        or not 1 <= len(command) <= 64
        or not all(isinstance(part, str) and part and "\0" not in part for part in command)
    ):
        raise Refused(
            f"{MANIFEST}: command must be a list of 1 to 64 non-empty strings, "
            'e.g. ["node", "bot.js"]'
        )
    if not isinstance(games, list) or not all(isinstance(g, str) and g for g in games):
        raise Refused(f'{MANIFEST}: games must be a list of game names, e.g. ["risk"]')
    return Manifest(entry, tuple(command or ()), tuple(games))


def unpack(data: bytes, format: str, dest: Path, bounds: Bounds = Bounds()) -> Code:
    """Write the submission into the empty folder ``dest`` (its code folder is
    ``dest / code.root``), checking as it goes what :func:`inspect` checks."""
    code = inspect(data, format, bounds)
    if format == "py":
        _write(dest / PY_NAME, iter([data]))
        return code
    for name, is_dir, stream in _members(data, format, bounds):
        target = dest.joinpath(*PurePosixPath(name).parts)
        if is_dir:
            target.mkdir(parents=True, exist_ok=True)
        else:
            _write(target, stream)
    return code


def _write(target: Path, chunks: Iterator[bytes]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # O_EXCL and no following of links: nothing already there is written through
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            out.write(chunk)


def _check_python(data: bytes) -> None:
    if b"\0" in data:
        raise Refused("the bot file holds NUL bytes: not Python source")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(
            f"the bot file is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None


def _check_total(total: int, packed: int, bounds: Bounds) -> None:
    if total > bounds.max_unpacked:
        raise Refused(f"zip bomb or too large: it unpacks to more than {bounds.max_unpacked} bytes")
    if total > bounds.ratio_floor and total > bounds.max_ratio * max(packed, 1):
        raise Refused(
            f"zip bomb: it unpacks to more than {bounds.max_ratio:g} times its {packed} bytes"
        )


def _check_path(name: str, bounds: Bounds) -> str:
    """The member's path, normalised; Refused if it could leave the archive's folder."""
    if not name or "\0" in name or "\\" in name:
        raise Refused(f"path {name!r} in the archive: empty, or with NUL or a backslash")
    if len(name) > bounds.max_path:
        raise Refused(f"path {name[:40]!r}... in the archive: over {bounds.max_path} characters")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise Refused(f"path {name!r} in the archive leads out of it (absolute, or with ..)")
    clean = "/".join(part for part in path.parts if part != ".")
    if not clean:
        raise Refused(f"path {name!r} in the archive names no file")
    return clean


def _members(data: bytes, format: str, bounds: Bounds) -> Iterator[tuple[str, bool, Any]]:
    """Each member as (path, is a folder, an iterator of its bytes), checked: paths,
    kinds (files and folders only), count, no name twice, each member's ratio."""
    seen: set[str] = set()
    members = _zip_members(data, bounds) if format == "zip" else _tar_members(data, bounds)
    for count, (name, kind, packed, stream) in enumerate(members, start=1):
        if count > bounds.max_files:
            raise Refused(f"more than {bounds.max_files} files in the archive")
        if kind not in ("file", "dir"):
            raise Refused(f"{name!r} in the archive is a {kind}: only files and folders")
        clean = _check_path(name, bounds)
        if clean in seen:
            raise Refused(f"{clean!r} is in the archive twice")
        seen.add(clean)
        yield clean, kind == "dir", _member_ratio(clean, stream, packed, bounds)


def _member_ratio(name: str, stream: Iterator[bytes], packed: int | None, bounds: Bounds) -> Any:
    size = 0
    for chunk in stream:
        size += len(chunk)
        if (
            packed is not None
            and size > bounds.ratio_floor
            and size > bounds.max_ratio * max(packed, 1)
        ):
            raise Refused(
                f"zip bomb: {name} unpacks to more than {bounds.max_ratio:g} times its "
                f"{packed} packed bytes"
            )
        yield chunk


def _zip_members(data: bytes, bounds: Bounds) -> Iterator[tuple[str, str, int | None, Any]]:
    if not data.startswith(b"PK"):
        raise Refused("not a zip archive (it does not start as one)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise Refused(f"not a readable zip archive: {exc}") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > bounds.max_files:
            raise Refused(f"more than {bounds.max_files} files in the archive")
        for info in infos:
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                kind = "symbolic link"
            elif info.is_dir():
                kind = "dir"
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                kind = "special file"
            else:
                kind = "file"
            if info.flag_bits & 0x1:
                raise Refused(f"{info.filename!r} in the archive is encrypted")
            yield info.filename, kind, info.compress_size, _zip_read(archive, info)


def _zip_read(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    if info.is_dir():
        return
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                yield chunk
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError) as exc:
        raise Refused(f"{info.filename} in the archive cannot be read: {exc}") from None


class _Counted(io.RawIOBase):
    """The gzip stream's unpacked bytes, refused past the bounds as they are read: the
    tar layer itself (headers, padding) counts, since a bomb can be in it too."""

    def __init__(self, source: IO[bytes], packed: int, bounds: Bounds) -> None:
        self.source, self.packed, self.bounds, self.total = source, packed, bounds, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = self.source.read(len(buffer))
        self.total += len(chunk)
        # the tar layer adds headers and padding: a little over the files' bytes
        slack = self.bounds.max_files * 1024 + (1 << 20)
        if self.total > self.bounds.max_unpacked + slack:
            raise Refused(
                f"zip bomb or too large: it unpacks to more than {self.bounds.max_unpacked} bytes"
            )
        if (
            self.total > self.bounds.ratio_floor + slack
            and self.total > self.bounds.max_ratio * max(self.packed, 1)
        ):
            raise Refused(
                f"zip bomb: it unpacks to more than {self.bounds.max_ratio:g} times its "
                f"{self.packed} bytes"
            )
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _tar_members(data: bytes, bounds: Bounds) -> Iterator[tuple[str, str, int | None, Any]]:
    import gzip

    if not data.startswith(b"\x1f\x8b"):
        raise Refused("not a gzip-compressed tar archive (it does not start as one)")
    counted = _Counted(gzip.GzipFile(fileobj=io.BytesIO(data)), len(data), bounds)
    try:
        with tarfile.open(fileobj=io.BufferedReader(counted, _CHUNK), mode="r|") as archive:
            for member in archive:
                if member.issym() or member.islnk():
                    kind = "symbolic link" if member.issym() else "hard link"
                elif member.isdir():
                    kind = "dir"
                elif member.isreg():
                    kind = "file"
                else:
                    kind = "special file"
                yield member.name, kind, None, _tar_read(archive, member)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise Refused(f"not a readable tar.gz archive: {exc}") from None


def _tar_read(archive: tarfile.TarFile, member: tarfile.TarInfo) -> Iterator[bytes]:
    if not member.isreg():
        return
    source = archive.extractfile(member)
    assert source is not None
    while chunk := source.read(_CHUNK):
        yield chunk


def _root(names: list[str]) -> str | None:
    """Where the manifest is: "" (the top), the one folder everything is in, or None."""
    if MANIFEST in names:
        return ""
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) == 1:
        top = next(iter(tops))
        if f"{top}/{MANIFEST}" in names:
            return top
    return None
