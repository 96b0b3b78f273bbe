"""Hosted bots on real Celery workers: bots submitted over gRPC (``arena bot submit``)
play a whole tournament on two workers with no process of their authors running, and
the referee that took them stopped; a worker takes their code from the store by digest.
And one tournament mixes every kind of bot: connected, hosted, a bot file, a house bot."""

from __future__ import annotations

import re
from pathlib import Path

from arena.sdk.starter import write_starter

STRATEGO = ["--game", "stratego", "--seats", "2", "--option", "turn-limit=150"]
SUBMITTED = re.compile(r"submitted (\S+) version (\d+) .*sha256 ([0-9a-f]{12})")


def submit(cluster, referee, name: str, path: Path) -> str:
    """``arena bot submit NAME PATH --game stratego``: the version's label."""
    done = cluster.arena(
        "bot",
        "submit",
        name,
        str(path),
        "--referee",
        referee.address,
        "--game",
        "stratego",
        "--token-file",
        str(path.with_suffix(".token")),
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    found = SUBMITTED.search(done.stdout)
    assert found, done.stdout
    return f"{found.group(1)}@{found.group(2)}"


def test_hosted_bots_play_on_two_workers_with_no_author_process(cluster, tmp_path) -> None:
    cache = tmp_path / "code-cache"
    cluster.settings["ARENA_CODE_CACHE"] = str(cache)
    referee = cluster.referee()
    labels = []
    for name in ("ann", "ben", "cid"):
        path = write_starter(str(tmp_path / name), "stratego")
        labels.append(submit(cluster, referee, name, path))
        path.unlink()  # its author's file is gone: the store has the code
    referee.proc.stop()  # no referee either: every match is played in a worker
    cluster.referees = []
    cluster.start_workers("w1", "w2")

    done = cluster.tournament_run(
        *STRATEGO, "--games-per-pairing", "2", "--bots", "ann,ben,cid,house:random", timeout=600
    )

    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    tid = cluster.tournament_id(done.stdout)
    assert f"tournament {tid}: finished, 12/12 matches finished (12 in this run)" in done.stdout
    rows = cluster.played_once(tid)
    assert {row.label for row in rows} == {*labels, "house:random@1"}
    matches = cluster.store.tournament_matches(tid)
    assert all(m.attempts == 1 and m.referee == "" for m in matches)
    # each worker played some, no match twice
    done_by = [list(w.succeeded().values()) for w in cluster.workers]
    assert all(done_by) and sorted(m for ids in done_by for m in ids) == sorted(
        m.id for m in matches
    )
    # no hosted seat forfeited: its code started and played in every match
    for match in matches:
        assert not (match.result or {}).get("forfeits"), (match.id, match.result)
    hosted = [b for b in cluster.store.bots() if b.kind == "hosted"]
    assert {b.label for b in hosted} == set(labels)
    assert {p.name for p in cache.iterdir()} == {b.digest for b in hosted}


def test_one_tournament_mixes_connected_hosted_file_and_house_bots(cluster, tmp_path) -> None:
    cluster.settings["ARENA_CODE_CACHE"] = str(tmp_path / "code-cache")
    referee = cluster.referee()
    cluster.run_bot("random", "conn", [referee])  # a connected process
    referee.wait_connected("conn@1")
    hosted = submit(cluster, referee, "hosty", write_starter(str(tmp_path / "hosty"), "stratego"))
    bot_file = write_starter(str(tmp_path / "filed"), "stratego")
    cluster.start_workers("w1", "w2")

    done = cluster.tournament_run(
        *STRATEGO, "--bots", f"conn,hosty,{bot_file},house:random", timeout=600
    )

    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    tid = cluster.tournament_id(done.stdout)
    assert f"tournament {tid}: finished, 6/6 matches finished (6 in this run)" in done.stdout
    rows = cluster.played_once(tid)
    assert {row.label for row in rows} == {"conn@1", hosted, "file:filed@1", "house:random@1"}
    store = cluster.store
    by_id = {b.id: b for b in store.bots()}
    for match in store.tournament_matches(tid):
        kinds = {by_id[seat.bot_id].kind for seat in store.seats(match.id)}
        # with the connected bot: played by the referee (hosted and file code from the
        # store, in its sandbox); without: in a worker
        assert match.referee == (referee.address if "remote" in kinds else ""), match.id
        assert not (match.result or {}).get("forfeits"), (match.id, match.result)
