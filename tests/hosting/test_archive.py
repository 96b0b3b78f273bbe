"""A submission's bytes: what is accepted, and every refusal with its reason.

Each case is built as the attacker would build it (real zip and tar.gz archives, with
lying headers, links, paths out, bombs), and checked both by ``inspect`` (the referee's
check when it is submitted) and by ``unpack`` (a worker's, as it writes)."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile

import pytest

from arena.hosting.archive import MANIFEST, Bounds, Refused, format_of, inspect, unpack

NODE = b'command = ["node", "bot.js"]\ngames = ["risk"]\n'


def make_zip(files: dict[str, bytes], links: dict[str, str] | None = None, **kw) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, **kw) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return out.getvalue()


def make_tar(files: dict[str, bytes], special: list[tarfile.TarInfo] = ()) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in special:
            archive.addfile(info)
    return out.getvalue()


def refused(data: bytes, format: str, bounds: Bounds | None = None) -> str:
    with pytest.raises(Refused) as inspected:
        inspect(data, format, bounds or Bounds())
    return str(inspected.value)


def test_a_zip_and_a_tar_gz_with_a_manifest_are_read_and_unpacked(tmp_path):
    files = {MANIFEST: NODE, "bot.js": b"console.log(1)\n", "lib/util.js": b"//\n"}
    for format, data in (("zip", make_zip(files)), ("tar.gz", make_tar(files))):
        code = inspect(data, format)
        assert code.manifest.command == ("node", "bot.js")
        assert code.manifest.games == ("risk",)
        assert code.files == 3 and code.root == ""
        dest = tmp_path / format
        dest.mkdir()
        unpack(data, format, dest)
        assert (dest / "lib" / "util.js").read_bytes() == b"//\n"


def test_an_archive_of_one_folder_has_its_manifest_there(tmp_path):
    data = make_zip({f"mybot/{MANIFEST}": b'entry = "main.py"\n', "mybot/main.py": b"x = 1\n"})
    code = inspect(data, "zip")
    assert code.root == "mybot" and code.manifest.entry == "main.py"


def test_a_python_file_is_its_own_entry(tmp_path):
    code = inspect(b"import arena.sdk\n", "py")
    assert code.manifest.entry == "bot.py"
    unpack(b"import arena.sdk\n", "py", tmp_path)
    assert (tmp_path / "bot.py").read_bytes() == b"import arena.sdk\n"


def test_the_format_comes_from_the_name():
    assert format_of("x.py") == "py"
    assert format_of("x.TAR.GZ") == "tar.gz" and format_of("x.tgz") == "tar.gz"
    assert format_of("x.zip") == "zip"
    with pytest.raises(Refused, match="not a bot file"):
        format_of("x.exe")


def test_bytes_that_are_not_what_the_name_says_are_refused():
    assert "not a zip archive" in refused(b"print(1)\n", "zip")
    assert "not a gzip-compressed tar" in refused(make_zip({MANIFEST: NODE}), "tar.gz")
    assert "NUL" in refused(b"\0\1\2", "py")
    assert "not UTF-8" in refused(b"\xff\xfe x", "py")


def test_more_than_the_cap_is_refused():
    assert "over the cap" in refused(b"#" * 2000, "py", Bounds(max_bytes=1000))


def test_too_many_files_are_refused():
    files = {MANIFEST: NODE, **{f"f{i}.js": b"" for i in range(20)}}
    for format, data in (("zip", make_zip(files)), ("tar.gz", make_tar(files))):
        assert "more than 10 files" in refused(data, format, Bounds(max_files=10))


def test_too_large_unpacked_is_refused_whatever_the_ratio():
    files = {MANIFEST: NODE, "data.bin": os.urandom(300_000)}
    bounds = Bounds(max_unpacked=200_000)
    for format, data in (("zip", make_zip(files)), ("tar.gz", make_tar(files))):
        assert "more than 200000 bytes" in refused(data, format, bounds)


def test_a_zip_bomb_is_refused_by_its_ratio_before_it_is_unpacked(tmp_path):
    # 200 MiB of zeros pack to about 200 KB: the check stops after the first MiBs
    zeros = b"\0" * (200 << 20)
    for format, data in (
        ("zip", make_zip({MANIFEST: NODE, "bomb.bin": zeros})),
        ("tar.gz", make_tar({MANIFEST: NODE, "bomb.bin": zeros})),
    ):
        assert len(data) < 1 << 20
        assert "zip bomb" in refused(data, format)
        dest = tmp_path / format
        dest.mkdir()
        with pytest.raises(Refused, match="zip bomb"):
            unpack(data, format, dest)
        assert sum(f.stat().st_size for f in dest.rglob("*") if f.is_file()) == 0


def test_a_zip_bomb_past_the_absolute_bound_is_refused_at_any_ratio():
    data = make_zip({MANIFEST: NODE, "bomb.bin": b"\0" * (3 << 20)})
    why = refused(data, "zip", Bounds(max_unpacked=2 << 20, max_ratio=1e12))
    assert "more than 2097152 bytes" in why


def test_a_zip_whose_header_lies_about_the_size_is_counted_as_it_unpacks():
    data = bytearray(make_zip({MANIFEST: NODE, "bomb.bin": b"\0" * (3 << 20)}))
    # the central directory says the member is 10 bytes: the real bytes still count
    central = data.rindex(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    why = refused(bytes(data), "zip", Bounds(max_unpacked=2 << 20, max_ratio=1e12))
    assert "more than" in why or "cannot be read" in why


@pytest.mark.parametrize("name", ["../evil.js", "/etc/evil", "a/../../evil", "C:/evil", "a\\..\\b"])
def test_a_path_out_of_the_archive_is_refused(name):
    for format, data in (
        ("zip", make_zip({MANIFEST: NODE, name: b"x"})),
        ("tar.gz", make_tar({MANIFEST: NODE, name: b"x"})),
    ):
        why = refused(data, format)
        assert name in why or "leads out" in why or "backslash" in why, why


def test_links_and_devices_are_refused(tmp_path):
    assert "symbolic link" in refused(
        make_zip({MANIFEST: NODE}, links={"passwd": "/etc/passwd"}), "zip"
    )
    link = tarfile.TarInfo("passwd")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    assert "symbolic link" in refused(make_tar({MANIFEST: NODE}, [link]), "tar.gz")
    hard = tarfile.TarInfo("hard")
    hard.type, hard.linkname = tarfile.LNKTYPE, MANIFEST
    assert "hard link" in refused(make_tar({MANIFEST: NODE}, [hard]), "tar.gz")
    device = tarfile.TarInfo("null")
    device.type = tarfile.CHRTYPE
    assert "special file" in refused(make_tar({MANIFEST: NODE}, [device]), "tar.gz")


def test_a_name_twice_is_refused():
    data = make_tar({MANIFEST: NODE, "bot.js": b"1", "./bot.js": b"2"})
    assert "twice" in refused(data, "tar.gz")


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        (None, "no arena-bot.toml"),
        (b"command = [", "not valid TOML"),
        (b'entry = "bot.py"\ncommand = ["x"]\n', "one of the two"),
        (b"", "one of the two"),
        (b"command = []\n", "1 to 64 non-empty strings"),
        (b'command = "node bot.js"\n', "1 to 64 non-empty strings"),
        (b'entry = "bot.js"\n', "a .py file"),
        (b'entry = "missing.py"\n', "not in the archive"),
        (b'entry = "../x.py"\n', "leads out"),
        (b'command = ["x"]\nrun = 1\n', "unknown key 'run'"),
        (b'command = ["x"]\ngames = "risk"\n', "games must be a list"),
    ],
)
def test_a_missing_or_malformed_manifest_is_refused(manifest, why):
    files = {"bot.js": b"1"}
    if manifest is not None:
        files[MANIFEST] = manifest
    assert why in refused(make_zip(files), "zip")
