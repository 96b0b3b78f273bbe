"""Hidden information on the web: the referee's public rules. A running tournament's
replays and seeds, and an unfinished match's, appear in no page and no API answer."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from arena.store import MatchRow, Store
from arena.tournament.executor import LocalExecutor
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament
from arena.web import create_app

from .conftest import pages

# two deals, each played in both seat orders: the second match of a deal repeats the
# first one's secrets (the setups drawn for the house bots, the fallback setups)
SPEC = TournamentSpec(game="stratego", bots=["random", "heuristic"], seats=2, games_per_pairing=4)


def seeds(store: Store, tournament_id: str) -> list[str]:
    with store.session() as s:
        rows = s.scalars(select(MatchRow.seed).where(MatchRow.tournament_id == tournament_id))
        return [str(seed) for seed in rows]


def test_a_running_tournament_shows_no_replay_and_no_seed(tmp_path: Path):
    db = tmp_path / "arena.db"
    store = Store(str(db))
    tournament = create_tournament(store, SPEC)
    secrets = [str(tournament.seed), *seeds(store, tournament.id)]
    seen: dict[str, tuple[int, str]] = {}
    replays: dict[str, tuple[str, int, str]] = {}

    def while_running(progress) -> None:
        if progress.finished != 2 or seen:
            return  # once, with a deal played in both orders and another still to come
        with TestClient(create_app(str(db))) as web:
            for path in pages(web):
                answer = web.get(path)
                seen[path] = (answer.status_code, answer.text)
            for m in web.get(f"/api/tournaments/{tournament.id}").json()["match_list"]:
                for what in ("replay", "events", "frames", "frames?reveal=true", "frames?since=60"):
                    answer = web.get(f"/api/matches/{m['match_id']}/{what}")
                    replays[f"{m['match_id']}/{what}"] = (
                        m["status"],
                        answer.status_code,
                        answer.text,
                    )

    try:
        run_tournament(store, tournament.id, LocalExecutor(workers=0), progress=while_running)
        assert seen, "the checks ran while the tournament was running"
        for path, (status, text) in seen.items():
            assert status == 200, path
            for secret in secrets:
                assert secret not in text, f"{path} shows the seed {secret}"
        assert f'/tournaments/{tournament.id}"' in seen["/"][1]  # listed as running
        assert (
            "hidden until the tournament has finished" in seen[f"/tournaments/{tournament.id}"][1]
        )
        assert len(replays) == 20
        assert sorted(match for match, _, _ in replays.values()).count("finished") == 10
        for key, (match, status, text) in replays.items():
            assert status == 403, key
            # a finished match is hidden for its tournament's sake: its deal is played again
            why = "whole tournament has finished" if match == "finished" else "once it has finished"
            assert why in text, key
        done = [key.split("/")[0] for key, (m, _, _) in replays.items() if m == "finished"]
        for match_id in done:
            page = seen[f"/matches/{match_id}"][1]
            assert "hidden for now" in page and f"/api/matches/{match_id}/replay" not in page
        # once it has finished, everything is shown
        with TestClient(create_app(str(db))) as web:
            t = web.get(f"/api/tournaments/{tournament.id}").json()
            assert t["seed"] == str(tournament.seed)
            for m in t["match_list"]:
                assert web.get(f"/api/matches/{m['match_id']}/replay").status_code == 200
                assert web.get(f"/api/matches/{m['match_id']}/frames").status_code == 200
    finally:
        store.close()


def test_an_unfinished_match_shows_no_replay_and_no_seed(tmp_path: Path):
    db = tmp_path / "arena.db"
    store = Store(str(db))
    try:
        house = store.house_bot("random")
        other = store.house_bot("heuristic")
        seed = 8_123_456_789_012_345_678
        store.start_match(
            "lone", "stratego", [house.label, other.label], [house.id, other.id], seed=seed
        )
        with TestClient(create_app(str(db))) as web:
            answer = web.get("/api/matches/lone/replay")
            assert answer.status_code == 403
            assert answer.json()["detail"] == (
                "the replay of match lone is hidden for now: a match's replay and seed are "
                "shown once it has finished"
            )
            match = web.get("/api/matches/lone").json()
            assert match["seed"] is None and match["status"] == "running"
            # not a rank before the end, nor how many steps it has
            for frames in ("frames", "frames?reveal=true", "frames?since=1", "frames?since=9999"):
                assert web.get(f"/api/matches/lone/{frames}").status_code == 403
            live = web.get("/api/matches/lone/live")  # an app without a referee says why
            assert live.status_code == 404 and "--referee" in live.json()["detail"]
            page = web.get("/matches/lone").text
            assert str(seed) not in page and "hidden for now" in page
            assert "/api/matches/lone/replay" not in page
            assert "started without a referee" in " ".join(page.split())
    finally:
        store.close()
