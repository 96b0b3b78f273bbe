"""Stored code on the machine that plays it: read from the store by digest, checked
against the digest (bytes changed in the store are refused), unpacked once into a cache
that only its owner may write."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import update

from arena.hosting import cache
from arena.store import Store
from arena.store.models import CodeRow


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Store, str]:
    monkeypatch.setenv("ARENA_CODE_CACHE", str(tmp_path / "cache"))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("bot/arena-bot.toml", 'command = ["node", "bot.js"]\n')
        archive.writestr("bot/bot.js", "console.log(1)\n")
    data = out.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    store = Store(str(tmp_path / "arena.db"))
    store.put_code(digest, "zip", data)
    return store, digest


def test_code_is_unpacked_once_and_its_program_read_from_its_manifest(stored):
    store, digest = stored
    folder = cache.code_dir(digest, store)
    assert folder.name == digest and (folder / "bot" / "bot.js").is_file()
    assert oct(cache.cache_root().stat().st_mode & 0o777) == "0o711"
    program = cache.program(digest, store.url)  # by URL, as a spawned worker does
    assert program.command == ("node", "bot.js") and program.code_dir == folder / "bot"
    (folder / "bot" / "marker").write_text("")  # the folder is kept: not unpacked again
    assert (cache.code_dir(digest, store) / "bot" / "marker").exists()


def test_bytes_changed_in_the_store_are_refused(stored):
    store, digest = stored
    with store.session() as s, s.begin():
        s.execute(update(CodeRow).where(CodeRow.digest == digest).values(data=b"PK evil"))
    with pytest.raises(cache.CodeMissing, match="do not have that digest"):
        cache.code_dir(digest, store)
    with pytest.raises(cache.CodeMissing, match="is not in the store"):
        cache.code_dir("0" * 64, store)


def test_a_cache_others_may_write_is_refused(stored, tmp_path):
    store, digest = stored
    root = tmp_path / "cache"
    root.mkdir()
    os.chmod(root, 0o777)
    with pytest.raises(PermissionError, match="written by its owner only"):
        cache.code_dir(digest, store)
