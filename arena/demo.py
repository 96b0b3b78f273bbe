"""The main job in one command (``make run``, or ``arena demo``).

On a machine with no services: start a referee, register the example bots (the first
time only: their tokens stay beside the database for the next runs) and start each as
its own process that connects to the referee (the Node.js bot too, when Node
and its packages are there), play a short round robin of classic Risk and one of
Stratego through the referee with a progress bar, print both leaderboards with their
95% intervals, and stop everything. The database stays behind, so
``arena leaderboard`` reads the results again.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cli.args import ORGANISER_KEY_ENV
from arena.store import HOUSE_PREFIX, Store

ROOT = Path(__file__).resolve().parent.parent
NODE_BOT = ROOT / "bots" / "node" / "bot.js"


@dataclass(frozen=True)
class DemoBot:
    """A bot registered on the demo's referee: ``name`` plays as ``command``."""

    name: str
    command: tuple[str, ...]  # run with --referee ADDRESS --token TOKEN appended
    games: tuple[str, ...]


def _python_bot(name: str, module: str, games: tuple[str, ...]) -> DemoBot:
    return DemoBot(name, (sys.executable, "-m", f"arena.bots.{module}"), games)


#: the search bots play at small budgets here, so that the demo stays quick (their
#: registered budgets are stronger; see docs/bots.md)
PYTHON_BOTS = (
    _python_bot("aggressive", "aggressive", ("risk",)),
    _python_bot("defensive", "defensive", ("risk",)),
    _python_bot("random", "random_bot", ("risk", "stratego")),
    _python_bot("heuristic", "stratego_heuristic", ("stratego",)),
    DemoBot(
        "search",
        (sys.executable, "-m", "arena.bots.risk_search", "--iterations", "16"),
        ("risk",),
    ),
    DemoBot(
        "stratego-search",
        (sys.executable, "-m", "arena.bots.stratego_search", "--iterations", "3"),
        ("stratego",),
    ),
)
NODE = DemoBot("node-random", ("node", str(NODE_BOT)), ("risk", "stratego"))


def node_available() -> str:
    """Empty when the Node.js bot can run, else why not."""
    if not NODE_BOT.is_file():  # an installed Arena (a wheel) has no bots/node
        return "its sources come with the repository (bots/node), not with an installed Arena"
    if shutil.which("node") is None:
        return "Node.js is not installed (install Node.js 18+ with npm to add it)"
    if not (ROOT / "bots" / "node" / "node_modules" / "@grpc" / "grpc-js").is_dir():
        return "its packages are not installed (cd bots/node && npm ci)"
    return ""


class Processes:
    """Child processes, stopped together (SIGTERM, then SIGKILL) on the way out."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(
        self, name: str, command: list[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """Start ``command`` (its output in the logs), with ``env`` added to this
        process's environment: secrets go there, never on a command line (``ps`` shows
        every command line to every user of the machine)."""
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - kept for the child
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        log.close()
        self.children.append((name, child))
        return child

    def stop(self) -> None:
        for _, child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for _, child in self.children:
            try:
                child.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def start_referee(processes: Processes, db: str, organiser_key: str) -> str:
    """Start a referee on a free port; returns its address once it listens."""
    command = [
        sys.executable,
        "-m",
        "arena.cli",
        "referee",
        "--port",
        "0",
        "--db",
        db,
        "--decision-ms",
        "3000",
        "--shutdown-grace",
        "5",
    ]
    child = processes.start("referee", command, env={ORGANISER_KEY_ENV: organiser_key})
    log = processes.logs / "referee.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"referee listening on (\S+:\d+)\s", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if child.poll() is not None:
            raise RuntimeError(f"the referee stopped:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)
    raise RuntimeError("the referee did not start within 60 s")


def tokens_dir(db: str) -> Path | None:
    """Where the demo keeps its bots' tokens: beside a database file (``arena.db`` keeps
    them in ``arena.db.tokens/``); None for a database URL, which has no "beside"."""
    return None if "://" in db else Path(db + ".tokens")


def bot_token(store: Store, stub: Any, bot: DemoBot, kept: Path) -> tuple[str, Path]:
    """The bot id and the file of the token ``bot`` plays with: the token kept by an
    earlier run when this store still knows it as that bot, else a new registration
    (kept for the next run).

    Why tokens in files rather than new tokens for old versions: holding the token is
    what proves a version is the demo's own. A bot of the same name that someone else
    registered is never taken over, and a deleted database (its tokens dir left behind)
    just registers afresh."""
    from arena.sdk.tokens import keep_secret
    from arena.v1 import arena_pb2 as pb

    path = kept / f"{bot.name}.token"
    if path.exists():
        token = path.read_text().strip()
        row = store.bot_by_token(token)
        if row is not None and row.name == bot.name and not row.revoked:
            return row.id, path
    ids: list[str] = []

    def register() -> str:
        # a new version if the name is known (an earlier run's, its token lost)
        request = pb.RegisterBotRequest(name=bot.name, new_version=True)
        reply = stub.RegisterBot(request, timeout=10)
        ids.append(reply.bot_id)
        return str(reply.token)

    keep_secret(path, register)
    return ids[0], path


def connect_bots(
    processes: Processes, address: str, bots: list[DemoBot], store: Store, kept: Path | None
) -> None:
    """Start every bot's process with its token file (see :func:`bot_token`; with a
    database URL, files of this run only, in the logs' directory); return when all are
    connected."""
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    if kept is None:
        kept = processes.logs / "tokens"
    kept.mkdir(mode=0o700, exist_ok=True)  # the tokens in it are secrets
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ArenaServiceStub(channel)
        ids = {}
        for bot in bots:
            bot_id, path = bot_token(store, stub, bot, kept)
            ids[bot_id] = bot.name
            command = [*bot.command, "--referee", address, "--token-file", str(path)]
            processes.start(bot.name, command)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = stub.ListBots(pb.ListBotsRequest(), timeout=10).bots
            if all(b.connected for b in listed if b.bot_id in ids):
                return
            for name, child in processes.children:
                if child.poll() is not None:
                    log = (processes.logs / f"{name}.log").read_text(errors="replace")
                    raise RuntimeError(f"bot {name} stopped:\n{log[-2000:]}")
            time.sleep(0.2)
    raise RuntimeError("the bots did not all connect within 60 s")


def legend(entries: list[str]) -> str:
    """What the labels of a demo leaderboard mean, one line each: a house bot plays inside
    the referee, the others are processes, and a built-in bot may be there both ways."""
    house = [e for e in entries if e.startswith(HOUSE_PREFIX)]
    lines = [f"  {', '.join(house)} = built into Arena, played inside the referee"] if house else []
    lines += [
        f"  {e[len(HOUSE_PREFIX) :]} = the same bot, run as its own process"
        for e in house
        if e[len(HOUSE_PREFIX) :] in entries
    ]
    lines.append("  the others = bot processes connected over gRPC; @N = the registered version")
    return "\n".join(lines)


def run(
    db: str = "arena.db",
    risk_games: int = 6,
    stratego_games: int = 6,
    workers: int = 2,
    progress: Callable[[], Any] | None = None,
    out: Any = None,
) -> int:
    """The whole demo; returns a process exit status. ``progress`` makes each
    tournament's progress display: a context manager called with the runner's
    ``Progress`` after each result, or None (no display)."""
    from arena.tournament.executor import LocalExecutor, RefereeClient
    from arena.tournament.leaderboard import refresh, render
    from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament

    out = out or sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    bots = list(PYTHON_BOTS)
    why_not = node_available()
    if why_not:
        say(f"(the Node.js bot sits this one out: {why_not})")
    else:
        bots.append(NODE)
    if "://" not in db:  # the referee runs in another directory: an absolute path
        db = str(Path(db).resolve())
    store = Store(db)  # migrate before the referee opens it too
    organiser_key = "demo-" + os.urandom(8).hex()
    logs = Path(tempfile.mkdtemp(prefix="arena-demo-"))
    processes = Processes(logs)
    try:
        address = start_referee(processes, db, organiser_key)
        say(f"referee on {address}; logs in {logs}")
        kept = tokens_dir(db)
        connect_bots(processes, address, bots, store, kept)
        say(f"{len(bots)} bot processes connected: {', '.join(b.name for b in bots)}")
        if kept is not None:
            say(f"their tokens stay in {kept}: the next run on {db} plays the same versions")
        else:
            say("(with a database URL no token is kept: every run registers new bot versions)")
        tournaments = [
            TournamentSpec(
                game="risk",
                name="demo: classic Risk",
                # three remote bots of every kind and the house blitz bot
                bots=[*(b.name for b in bots if "risk" in b.games), "house:blitz"],
                seats=3,
                games_per_pairing=risk_games,
                options={"turn-limit": "100"},
                decision_ms=3000,
            ),
            TournamentSpec(
                game="stratego",
                name="demo: Stratego",
                bots=[*(b.name for b in bots if "stratego" in b.games), "house:heuristic"],
                seats=2,
                games_per_pairing=stratego_games,
                options={"turn-limit": "1000"},
                decision_ms=3000,
            ),
        ]
        executor = LocalExecutor(workers=workers, referee=RefereeClient(address, organiser_key))
        try:
            for spec in tournaments:
                tournament = create_tournament(store, spec)
                total = sum(store.progress(tournament.id).values())
                say()
                say(f"{spec.name}: {len(spec.bots)} bots, {spec.seats} seats, {total} matches")
                display = progress() if progress is not None else None
                with display or contextlib.nullcontext():
                    summary = run_tournament(store, tournament.id, executor, progress=display)
                say(
                    f"tournament {tournament.id} {summary.status}: "
                    f"{summary.finished}/{summary.total} matches"
                )
                if summary.status != "finished":
                    for match_id, why in summary.errors.items():
                        say(f"  {match_id}: {why.splitlines()[0] if why else '?'}")
        finally:
            executor.close()
        for spec, title in zip(tournaments, ("Risk (classic)", "Stratego (classic)"), strict=True):
            say()
            say(render(refresh(store, spec.game, ""), f"leaderboard: {title}, every match in {db}"))
            say(legend(spec.bots))
        say()
        again = f"{arena_command()} leaderboard --db {db}"
        say(f"the results stay in {db}: `{again}` shows them again")
        return 0
    finally:
        with contextlib.suppress(Exception):
            processes.stop()
        store.close()


def arena_command() -> str:
    """How to run ``arena`` again from this shell: ``arena`` when that name finds this
    very command, else the path it was run by (``.venv/bin/arena`` after ``make run``,
    whose shell has no virtual environment active)."""
    run_by = Path(sys.argv[0])
    if run_by.name != "arena":  # python -m arena.cli, or a test: the installed name
        return "arena"
    found = shutil.which("arena")
    if found and Path(found).resolve() == run_by.resolve():
        return "arena"
    return str(run_by)  # as it was run, from this directory
