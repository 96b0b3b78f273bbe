"""The committed stubs in arena/v1 are exactly what the .proto files generate."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_stubs_are_current():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protos.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_arena_proto_shows_the_shipped_contract():
    """`arena proto` (--path, --include, the text) names the file the stubs come from."""

    def arena(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli", "proto", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    source = ROOT / "arena" / "proto" / "arena" / "v1" / "arena.proto"
    assert Path(arena("--path").strip()) == source
    assert Path(arena("--include").strip()) / "arena" / "v1" / "arena.proto" == source
    assert arena() == source.read_text()
    assert "service BotService" in source.read_text()
