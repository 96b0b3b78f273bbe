"""A referee runs for weeks: ended matches leave its memory, and stay readable from the
store (GetMatch, WatchMatch) and idempotent (RunMatch of a finished id replays nothing)."""

from __future__ import annotations

import asyncio
import json

import grpc

from arena.referee.server import Referee, RefereeConfig, start_server
from arena.store import Store
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

HOUSE_RISK = ["house:random", "house:aggressive", "house:defensive"]


async def _scenario(db: str) -> dict:
    referee = Referee(Store(db), RefereeConfig(finished_linger_s=0.2))
    server, port = await start_server(referee, "127.0.0.1:0")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            arena = pb_grpc.ArenaServiceStub(channel)
            request = pb.RunMatchRequest(
                game="risk",
                players=HOUSE_RISK,
                options={"turn-limit": "20"},
                seed=5,
                match_id="kept-in-the-store",
                wait=True,
            )
            first = (await arena.RunMatch(request)).match
            held_after_end = "kept-in-the-store" in referee.matches
            await asyncio.sleep(0.6)
            out = {
                "first": first,
                "held_after_end": held_after_end,
                "held_later": dict(referee.matches),
                "got": await arena.GetMatch(pb.GetMatchRequest(match_id="kept-in-the-store")),
                "watched": [
                    m
                    async for m in arena.WatchMatch(
                        pb.WatchMatchRequest(match_id="kept-in-the-store")
                    )
                ],
                "again": (await arena.RunMatch(request)).match,
                "held_at_last": dict(referee.matches),
            }
            try:
                await arena.GetMatch(pb.GetMatchRequest(match_id="never-was"))
            except grpc.aio.AioRpcError as exc:
                out["unknown"] = exc.code()
            return out
    finally:
        await server.stop(None)
        referee.store.close()


def test_an_ended_match_leaves_memory_and_is_still_served_from_the_store(tmp_path):
    out = asyncio.run(_scenario(str(tmp_path / "arena.db")))
    first = out["first"]
    assert first.status == "finished"
    assert out["held_after_end"]  # its waiters could still read it from memory
    assert out["held_later"] == {}  # then it is gone
    got = out["got"]
    assert (got.status, list(got.result.places)) == ("finished", list(first.result.places))
    # the store keeps the very text served while the match was in memory
    assert got.replay_json == first.replay_json
    assert json.loads(got.replay_json)["steps"]
    (watched,) = out["watched"]
    assert watched.WhichOneof("kind") == "finished"
    assert watched.finished.replay_json == got.replay_json
    # the same id again: the stored result, not a new game
    again = out["again"]
    assert (again.status, list(again.result.places)) == ("finished", list(first.result.places))
    assert out["held_at_last"] == {}
    assert out["unknown"] == grpc.StatusCode.NOT_FOUND


async def _tournament_scenario(db: str) -> dict:
    from arena.tournament.runner import TournamentSpec, create_tournament

    store = Store(db)
    tournament = create_tournament(
        store,
        TournamentSpec(
            game="risk",
            bots=["house:random", "house:aggressive", "house:defensive"],
            seats=3,
            games_per_pairing=3,
            options={"turn-limit": "20"},
            seed=424242,
        ),
    )
    first, *_ = store.tournament_matches(tournament.id)
    referee = Referee(store, RefereeConfig(organiser_key="k"))
    server, port = await start_server(referee, "127.0.0.1:0")
    organiser = (("authorization", "Bearer k"),)
    out: dict = {}
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            arena = pb_grpc.ArenaServiceStub(channel)
            run = pb.RunMatchRequest(
                game="risk",
                players=HOUSE_RISK,
                options={"turn-limit": "20"},
                seed=first.seed,
                match_id=first.id,
                wait=True,
            )
            await arena.RunMatch(run, metadata=organiser)
            get = pb.GetMatchRequest(match_id=first.id)
            out["public"] = await arena.GetMatch(get)
            out["organiser"] = await arena.GetMatch(get, metadata=organiser)
            watch = pb.WatchMatchRequest(match_id=first.id)
            out["watched"] = [m async for m in arena.WatchMatch(watch)]
            ask = pb.GetTournamentRequest(tournament_id=tournament.id)
            out["tournament_public"] = await arena.GetTournament(ask)
            out["tournament_organiser"] = await arena.GetTournament(ask, metadata=organiser)
            out["listed"] = await arena.ListTournaments(pb.ListTournamentsRequest())
            store.set_tournament_status(tournament.id, "finished")
            out["public_after"] = await arena.GetMatch(get)
    finally:
        await server.stop(None)
        store.close()
    return out


def test_a_tournaments_replays_and_seed_stay_with_the_organiser_until_it_ends(tmp_path):
    # duplicate seeds replay one deal in several matches: a replay seen early would tell
    # a bot the cards and dice of the rotations still to come
    out = asyncio.run(_tournament_scenario(str(tmp_path / "arena.db")))
    assert out["organiser"].status == "finished"
    assert json.loads(out["organiser"].replay_json)["seed"] > 0
    assert out["public"].status == "finished"
    assert out["public"].replay_json == ""
    assert list(out["public"].result.places) == list(out["organiser"].result.places)
    (watched,) = out["watched"]
    assert watched.finished.replay_json == ""
    assert out["tournament_public"].seed == 0
    assert out["tournament_organiser"].seed == 424242
    assert [t.seed for t in out["listed"].tournaments] == [0]
    assert out["public_after"].replay_json == out["organiser"].replay_json
