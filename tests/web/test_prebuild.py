"""Frames built as matches end (arena.web.prebuild): a match that ends while the web runs
has its frames made by a worker process before anyone asks, byte for byte what a viewer's
request would build; a viewer who asks meanwhile waits for that build; hidden replays are
not built; a worker killed mid-build loses nothing; the web stopping ends the worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.plugins import load_registry
from arena.store import Store
from arena.store.readonly import ReadOnlyStore
from arena.tournament.executor import LocalExecutor
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament
from arena.web import browser, create_app, viewers
from arena.web.prebuild import Prebuilder

from .conftest import long_replay


def wait_for(condition, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what}"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (not reaped) still answers: look at its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


@pytest.fixture(scope="module")
def long_text() -> str:
    return long_replay()


def counting_builds(cache: viewers.FrameCache) -> list[tuple]:
    """The builds the web makes itself from now on (the real method, counted)."""
    calls: list[tuple] = []
    build = cache._build

    def counted(*args):
        calls.append(args[1:])
        return build(*args)

    cache._build = counted  # type: ignore[method-assign]
    return calls


def test_a_match_that_ends_while_the_web_runs_has_its_frames_built_ahead(
    database_url: str, long_text: str
):
    db = database_url  # SQLite and PostgreSQL
    before = browser.store_replay(db, long_text)  # ended before the web started
    app = create_app(str(db), prebuild_s=0.05)
    prebuilder, cache = app.state.prebuilder, app.state.frames
    with TestClient(app) as web:
        wait_for(lambda: prebuilder.looks > 0, "the first look")
        match_id = browser.store_replay(db, long_text)
        wait_for(lambda: match_id in prebuilder.built, "the frames built ahead")
        assert before not in prebuilder.built
        worker = prebuilder.worker.pid
        assert worker is not None and worker != os.getpid()
        # the store's URL (a password, with PostgreSQL) is not on its command line, and
        # it has a process group of its own (a terminal's Ctrl-C is for the web)
        command = Path(f"/proc/{worker}/cmdline").read_text().replace("\0", " ")
        assert "arena.web.prebuild" in command and db not in command
        assert os.getpgid(worker) != os.getpgid(0)

        builds = counting_builds(cache)
        tail = viewers.tail_start(cache.steps(app.state.store, match_id))
        assert tail > 0, "a replay long enough that its page would start from its tail"
        page = web.get(f"/matches/{match_id}")
        # the whole frames are kept: the page takes them, and its viewer loads them at once
        assert page.status_code == 200 and 'id="viewer"' in page.text
        assert "data-first=" not in page.text
        whole = web.get(f"/api/matches/{match_id}/frames")
        assert whole.status_code == 200
        assert builds == [], "the page and the frames came from the build made ahead"

        # byte for byte what the web would have built itself
        store = ReadOnlyStore(str(db))
        try:
            made = viewers.build_entry(store, load_registry(), match_id)
        finally:
            store.close()
        assert whole.content == made["json"]

        # a match that ended before the web started is built when first viewed: its
        # page from its tail, then the whole frames
        assert f'data-first="{tail}"' in web.get(f"/matches/{before}").text
        assert web.get(f"/api/matches/{before}/frames").content == whole.content
        assert builds == [(before, False, tail), (before, False, 0)]
    assert gone(worker), "the web stopping ended its frames' worker"


def test_a_viewer_who_asks_during_a_build_ahead_waits_for_it(tmp_path: Path, long_text: str):
    db = tmp_path / "arena.db"
    match_id = browser.store_replay(db, long_text)
    store = ReadOnlyStore(str(db))
    registry = load_registry()
    cache = viewers.FrameCache(registry)
    builds = counting_builds(cache)
    release, building = threading.Event(), threading.Event()

    def slow_build(mid: str) -> dict:
        building.set()
        assert release.wait(30)
        return viewers.build_entry(store, registry, mid)

    got: dict[str, dict] = {}
    try:
        ahead = threading.Thread(target=cache.prebuild, args=(store, match_id, slow_build))
        ahead.start()
        assert building.wait(30)
        viewer = threading.Thread(target=lambda: got.update(entry=cache.get(store, match_id)))
        viewer.start()
        viewer.join(0.5)
        assert viewer.is_alive() and not got, "the viewer waits for the build under way"
        release.set()
        ahead.join(30)
        viewer.join(30)
        assert got["entry"] is cache.get(store, match_id), "the viewer has the build made ahead"
        assert builds == []
        # kept: asked again, nothing more is built
        assert cache.prebuild(store, match_id, slow_build) is False
    finally:
        release.set()
        store.close()


def test_a_viewer_does_not_wait_long_for_a_starved_build_ahead(
    tmp_path: Path, long_text: str, monkeypatch
):
    monkeypatch.setattr(viewers, "WAIT_S", 0.3)
    db = tmp_path / "arena.db"
    match_id = browser.store_replay(db, long_text)
    store = ReadOnlyStore(str(db))
    cache = viewers.FrameCache(load_registry())
    builds = counting_builds(cache)
    release, building = threading.Event(), threading.Event()

    def starved(mid: str) -> dict:
        building.set()
        assert release.wait(30)
        raise RuntimeError("the worker gave up")

    try:

        def build_ahead() -> None:
            with pytest.raises(RuntimeError, match="gave up"):
                cache.prebuild(store, match_id, starved)

        ahead = threading.Thread(target=build_ahead)
        ahead.start()
        assert building.wait(30)
        entry = cache.get(store, match_id)  # waits 0.3 s, then builds itself
        assert builds == [(match_id, False, 0)]
        assert entry is cache.get(store, match_id)
    finally:
        release.set()
        ahead.join(30)
        store.close()


def test_a_tournament_s_replays_are_built_ahead_once_it_has_finished(tmp_path: Path):
    db = tmp_path / "arena.db"
    store = Store(str(db))
    spec = TournamentSpec(
        game="stratego", bots=["random", "heuristic"], seats=2, games_per_pairing=4
    )
    tournament = create_tournament(store, spec)
    seen_running: list[list[str]] = []
    reader = ReadOnlyStore(str(db))
    cache = viewers.FrameCache(load_registry())
    prebuilder = Prebuilder(reader, cache, str(db), newest=3)

    def while_running(progress) -> None:
        if progress.finished in (1, 3):
            # matches of a running tournament finish: none is offered, and one asked
            # for is refused (its replay is hidden until the tournament has finished)
            seen_running.append(prebuilder.look())
            done = store.tournament_matches(tournament.id, ["finished"])
            assert prebuilder.build(done[0].id) is False

    try:
        assert prebuilder.look() == []  # the first look: nothing before
        run_tournament(store, tournament.id, LocalExecutor(workers=0), progress=while_running)
        assert seen_running == [[], []]
        assert prebuilder.worker.pid is None, "nothing went to a worker"
        assert list(prebuilder.built) == []
        # the tournament has ended: its latest matches are offered once, and built
        offered = prebuilder.look()
        finished = sorted(
            store.tournament_matches(tournament.id, ["finished"]),
            key=lambda m: (m.finished, m.id),
            reverse=True,
        )
        assert offered == [m.id for m in finished[:3]]
        assert prebuilder.look() == []
        assert all(prebuilder.build(m) for m in offered)
        assert prebuilder.build(offered[0]) is False  # kept already
        # built without reveal: the every-rank frames are still built only when asked
        assert cache._kept((offered[0], True, 0), touch=False) is None
    finally:
        prebuilder.worker.close()
        reader.close()
        store.close()


def test_a_worker_killed_mid_build_loses_nothing(tmp_path: Path, long_text: str):
    db = tmp_path / "arena.db"
    first = browser.store_replay(db, long_text)
    second = browser.store_replay(db, long_text)
    reader = ReadOnlyStore(str(db))
    registry = load_registry()
    cache = viewers.FrameCache(registry)
    prebuilder = Prebuilder(reader, cache, str(db))
    result: list[bool] = []
    try:
        ahead = threading.Thread(target=lambda: result.append(prebuilder.build(first)))
        ahead.start()
        wait_for(lambda: prebuilder.worker.pid is not None, "the worker started")
        killed = prebuilder.worker.pid
        os.kill(killed, signal.SIGKILL)
        ahead.join(60)
        assert result == [False], "the build in the killed worker is given up"
        assert gone(killed)
        # the next match starts a new worker, and is built
        assert prebuilder.build(second) is True
        assert prebuilder.worker.pid not in (None, killed)
        # the first is built when first viewed, as without a prebuilder
        builds = counting_builds(cache)
        entry = cache.get(reader, first)
        assert builds == [(first, False, 0)]
        assert entry["json"] == cache.get(reader, second)["json"]  # the same replay
        # once stopped (the web stopping), no worker is started again
        third = browser.store_replay(db, long_text)
        before = prebuilder.worker.pid
        prebuilder.stop()
        assert prebuilder.build(third) is False
        assert prebuilder.worker.pid in (None, before)
        wait_for(lambda: gone(before), "the stopped worker to end", 15)
    finally:
        prebuilder.worker.close()
        reader.close()


def whole_frames_kept(base: str, match_id: str) -> bool:
    """The match page of a long replay starts its viewer from its tail unless the web
    keeps the whole frames (data-first: where the page's frames start)."""
    with urllib.request.urlopen(f"{base}/matches/{match_id}", timeout=30) as answer:
        return "data-first=" not in answer.read().decode()


@pytest.mark.parametrize("flags", [(), ("--no-prebuild",)], ids=["default", "no-prebuild"])
def test_arena_web_builds_ahead_unless_told_not_to(tmp_path: Path, long_text: str, flags):
    db = tmp_path / "arena.db"
    browser.store_replay(db, long_text)
    with browser.serve(db, *flags) as base:
        # a match ends every second (the web's first look, 2 s after it starts, may
        # come after the first of them: those it notes, and does not build)
        ended: list[str] = []
        kept = None
        deadline = time.monotonic() + (60 if not flags else 6)
        while time.monotonic() < deadline and kept is None:
            ended.append(browser.store_replay(db, long_text))
            time.sleep(1)
            if not flags:  # the newest first: each page looked at makes a build
                kept = next((m for m in reversed(ended) if whole_frames_kept(base, m)), None)
        if flags:
            kept = next((m for m in reversed(ended) if whole_frames_kept(base, m)), None)
            assert kept is None, "built ahead with --no-prebuild"
        else:
            assert kept is not None, "no match's frames were built ahead"


def test_ctrl_c_during_builds_ahead_ends_arena_web_at_once_and_quietly(
    tmp_path: Path, long_text: str
):
    db = tmp_path / "arena.db"
    browser.store_replay(db, long_text)
    port = browser.free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "web", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal gives
    )
    try:
        wait_for(lambda: web.stdout.readline().startswith("arena web: http"), "the web")
        # matches end while it runs, until its frames' worker is seen building one
        deadline = time.monotonic() + 60
        busy = False
        while not busy:
            assert time.monotonic() < deadline, "the frames' worker was never seen building"
            browser.store_replay(db, long_text)
            until = time.monotonic() + 3  # the next look comes within 2 s
            while not busy and time.monotonic() < until:
                workers = descendants(web.pid, "arena.web.prebuild")
                before = [cpu_ticks(w) for w in workers]
                time.sleep(0.03)
                busy = any(cpu_ticks(w) > b for w, b in zip(workers, before, strict=True))
        helpers = descendants(web.pid)
        os.killpg(web.pid, signal.SIGINT)  # Ctrl-C: to every process of the group
        said, _ = web.communicate(timeout=15)
        assert web.returncode == 130
        assert said == "", f"Ctrl-C printed {said!r}"
        wait_for(lambda: all(gone(pid) for pid in helpers), "the web's helpers to end", 15)
    finally:
        if web.poll() is None:
            os.killpg(web.pid, signal.SIGKILL)
            web.wait()


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def descendants(pid: int, named: str = "") -> list[int]:
    """The processes ``pid`` started, and theirs (their command line holds ``named``)."""
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [  # started by any of its threads
            int(child)
            for listed in Path(f"/proc/{parent}/task").glob("*/children")
            for child in listed.read_text().split()
        ]
        out += children
        todo += children
    return [p for p in out if named in Path(f"/proc/{p}/cmdline").read_text().replace("\0", " ")]
