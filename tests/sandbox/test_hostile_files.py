"""Hostile bots that reach for what is outside their sandbox: the network, the host's
files, other bots' code, the match's state in memory. Each through a real bot file in a
real bubblewrap sandbox: the seat gets a strike with the reason, the match goes on, the
host is unharmed and nothing leaks."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.sandbox.hostile import play_hostile


def _struck(record, reason: str) -> None:  # type: ignore[no-untyped-def]
    assert record.result is not None  # the match went on to its end
    assert record.conduct[0].strikes >= 1, record.conduct
    assert not record.conduct[1].forfeit and record.conduct[1].strikes == 0


def test_a_bot_cannot_open_a_tcp_connection_even_to_the_hosts_loopback(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        attack = f"""
for host in ("127.0.0.1", "1.1.1.1"):
    try:
        socket.create_connection((host, {port}), timeout=2).close()
        print("LEAKED: connected to", host, file=sys.stderr)
    except OSError as exc:
        print("refused", host, exc, file=sys.stderr)
socket.create_connection(("1.1.1.1", 80), timeout=2)
"""
        server.settimeout(0)
        record, player = play_hostile(tmp_path, "tcp", attack)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody came
    _struck(record, "")
    assert b"LEAKED" not in player.stderr()
    assert "bot raised OSError" in "".join(_strike_reasons(player.stderr()))


def test_a_bot_cannot_resolve_a_name(tmp_path: Path) -> None:
    record, player = play_hostile(tmp_path, "dns", 'socket.getaddrinfo("example.com", 80)')
    _struck(record, "")
    assert b"gaierror" in player.stderr()


def test_a_bot_sees_none_of_the_hosts_secrets_and_no_other_bot(tmp_path: Path) -> None:
    """/etc/passwd, the store's file, the tokens folder, another bot's code, the
    checkout around Arena: none is there. Read-only: the system, Python, Arena."""
    store = tmp_path / "arena.db"
    store.write_text("the store")
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "alice.token").write_text("secret-token")
    other = tmp_path / "other"
    other.mkdir()
    (other / "rival.py").write_text("# rival's code")
    from arena.sandbox import python_bot_program

    rival = python_bot_program(other / "rival.py").code_dir / "rival.py"
    import arena

    checkout = Path(arena.__path__[0]).parent
    secrets = [
        "/etc/passwd",
        "/etc/shadow",
        str(store),
        str(tokens / "alice.token"),
        str(other / "rival.py"),
        str(rival),
        str(checkout / "pyproject.toml"),
        "/root/.bash_history",
    ]
    attack = f"""
for path in {secrets!r}:
    try:
        with open(path) as f:
            print("LEAKED:", path, f.read()[:20], file=sys.stderr)
    except OSError as exc:
        print("hidden", path, type(exc).__name__, file=sys.stderr)
import arena.sdk, json  # what it may use: the standard library and Arena's SDK
print("visible: arena", file=sys.stderr)
open("/etc/passwd")
"""
    record, player = play_hostile(tmp_path, "reader", attack)
    _struck(record, "")
    err = player.stderr()
    assert b"LEAKED" not in err
    assert err.count(b"hidden ") == len(secrets)
    assert b"visible: arena" in err


def test_a_bot_cannot_write_outside_its_tmp_and_its_tmp_is_its_own(tmp_path: Path) -> None:
    import arena

    package = Path(arena.__path__[0])
    targets = ["/bot/x.py", "/usr/x", "/x", str(package / "x.py"), str(tmp_path / "x")]
    attack = f"""
for path in {targets!r}:
    try:
        with open(path, "w") as f:
            f.write("x")
        print("LEAKED: wrote", path, file=sys.stderr)
    except OSError as exc:
        print("refused", path, type(exc).__name__, file=sys.stderr)
with open("/tmp/mine", "w") as f:
    f.write("mine")
print("tmp ok", sorted(os.listdir("/tmp")), file=sys.stderr)
open("/bot/x.py", "w")
"""
    record, player = play_hostile(tmp_path, "writer", attack)
    _struck(record, "")
    err = player.stderr()
    assert b"LEAKED" not in err
    assert err.count(b"refused ") == len(targets)
    # its /tmp holds what it wrote, and nothing of the host's /tmp: only the folders
    # that lead to Arena's own, bound read-only (a checkout under /tmp)
    from arena.sandbox.bwrap import python_paths

    leading = {Path(p).parts[2] for p in python_paths() if p.startswith("/tmp/")}
    assert f"tmp ok {sorted({'mine', *leading})!r}".encode() in err
    assert not (package / "x.py").exists() and not (tmp_path / "x").exists()


def test_a_bot_walking_gc_finds_no_game_state(tmp_path: Path) -> None:
    attack = """
import gc
from arena.engine.core import State
states = [o for o in gc.get_objects() if isinstance(o, State)]
named = [o for o in gc.get_objects() if type(o).__name__ == "StrategoState"]
print("states found:", states + named, file=sys.stderr)
"""
    record, player = play_hostile(tmp_path, "walker", attack)
    assert record.result is not None
    assert record.conduct[0].strikes == 0
    assert b"states found: []" in player.stderr()


def _strike_reasons(stderr: bytes) -> list[str]:
    """The SDK's log lines of what the bot raised (it tells the referee the same)."""
    return [line for line in stderr.decode(errors="replace").splitlines() if "raised" in line]


def test_the_same_walker_played_in_process_finds_the_state(tmp_path: Path) -> None:
    """The control: in process the walk finds the live state (why files are sandboxed)."""
    from arena.engine.match import play_match
    from arena.plugins import load_registry
    from arena.sdk import MatchContext
    from arena.sdk.local import load
    from tests.sandbox.hostile import OPTIONS, bot_source

    path = tmp_path / "walker.py"
    path.write_text(
        bot_source(
            "import gc\nfrom arena.engine.core import State\n"
            "global FOUND\nFOUND = [o for o in gc.get_objects() if isinstance(o, State)]"
        )
    )
    registry = load_registry()
    context = MatchContext("m", "stratego", 0, ["file:walker", "random"], ["barrage"])
    bot = load(str(path))
    player = bot.player(context)
    play_match(
        registry.game("stratego"),
        [player, registry.bot("stratego", "random").factory(1, 5)],
        11,
        OPTIONS,
        registry.resolve_variants("stratego", ["barrage"]),
    )
    module = __import__(bot.cls.__module__)
    assert module.FOUND, "in process, the walk finds the live state"
