"""Secret seeds end to end, on a real ``arena referee`` process over 127.0.0.1.

Every secret of a match (the deal, missions, the draw pile, the dice, a house bot's
setup) follows from its seed: a match or tournament given none draws a secret one, no
message a bot receives carries it, nothing of a match can be rebuilt from public facts
and seed 0, and GetMatch, WatchMatch and GetTournament show a seed only once its match
(a tournament's: the tournament) has ended.
"""

from __future__ import annotations

import json
import threading
import uuid
import zlib
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from typing import Any

import pytest

from arena.engine.replay import ReplayMismatch, from_json, verify
from arena.engine.seeds import house_bot_seed
from arena.plugins import load_registry
from arena.sdk import MatchContext
from arena.sdk.house import house_factory
from arena.store import Store
from arena.tournament.runner import jobs
from arena.v1 import arena_pb2 as pb

REGISTRY = load_registry()
RPC_TIMEOUT = 10.0
MATCH_TIMEOUT = 90.0
QUICK_RISK = {"turn-limit": "3"}
HOUSE_RISK = ["house:random", "house:aggressive", "house:defensive"]


def seed_encodings(seed: int) -> dict[str, bytes]:
    """How a seed could travel in a message: as protobuf varint (any integer field), as
    decimal text (JSON), as 8 bytes either way round (a fixed64 or packed bytes)."""
    varint = pb.MatchInfo(seed=seed).SerializeToString()[1:]  # less field 7's tag byte
    return {
        "varint": varint,
        "decimal": str(seed).encode(),
        "little-endian": seed.to_bytes(8, "little", signed=True),
        "big-endian": seed.to_bytes(8, "big", signed=True),
    }


def assert_never_sent(seed: int, raws: list[bytes], what: str) -> None:
    for name, encoded in seed_encodings(seed).items():
        for index, raw in enumerate(raws):
            assert encoded not in raw, f"{what}: message {index} holds the seed ({name})"


def replay_seed(info: pb.MatchInfo) -> int:
    return json.loads(info.replay_json)["seed"]


# --- drawn from the operating system, or kept as given ----------------------------------


def test_matches_without_a_seed_draw_distinct_secret_ones_and_a_given_seed_is_kept(
    referee_server,
):
    ref = referee_server  # no organiser key: everyone is the organiser
    drawn = [ref.run_match("risk", HOUSE_RISK, options=QUICK_RISK) for _ in range(4)]
    seeds = [info.seed for info in drawn]
    assert all(info.HasField("seed") for info in drawn)
    assert len(set(seeds)) == len(seeds)  # four draws of 63 bits: never twice
    assert all(2**32 <= seed < 2**63 for seed in seeds), seeds  # 2**-31 each to fail
    assert [replay_seed(info) for info in drawn] == seeds
    for given in (0, 7, 2**63 - 1, -12):  # the organiser's choice, 0 included
        info = ref.run_match("risk", HOUSE_RISK, options=QUICK_RISK, seed=given)
        assert info.HasField("seed") and info.seed == given == replay_seed(info)


def _create(ref: Any, **fields: Any) -> pb.TournamentInfo:
    request = pb.CreateTournamentRequest(
        game="stratego", bots=["house:random", "house:heuristic"], seats=2, **fields
    )
    return ref.arena.CreateTournament(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT)


def test_tournaments_without_a_seed_draw_distinct_secret_ones(locked_referee):
    ref = locked_referee
    drawn = [_create(ref, name=f"drawn {n}") for n in range(4)]
    seeds = [info.seed for info in drawn]
    assert len(set(seeds)) == len(seeds)
    assert all(2**32 <= seed < 2**63 for seed in seeds), seeds
    public = ref.arena.GetTournament(
        pb.GetTournamentRequest(tournament_id=drawn[0].tournament_id), timeout=RPC_TIMEOUT
    )
    assert public.status == "created" and not public.HasField("seed")
    for given in (0, 99):
        info = _create(ref, name=f"given {given}", seed=given)
        assert info.HasField("seed") and info.seed == given
    with closing(Store(ref.db)) as store:
        for info in drawn:
            # its matches' seeds: keyed hashes of it, 63 bits, none of them guessable
            match_seeds = {m.seed for m in store.tournament_matches(info.tournament_id)}
            assert all(2**32 <= s < 2**63 for s in match_seeds)
            assert info.seed not in match_seeds


# --- never sent to a bot -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "house", "options", "batches"),
    [
        ("risk", ["house:aggressive", "house:defensive"], {"turn-limit": "30"}, False),
        ("stratego", ["house:heuristic"], {"turn-limit": "300"}, True),
    ],
)
def test_no_message_a_bot_receives_holds_its_matchs_seed(
    referee_server, raw_bots, legal_player, game, house, options, batches
):
    ref = referee_server
    name = f"seed-audit-{game}"
    token = ref.register(name).token
    bot = raw_bots(ref.address, token, player=legal_player({game: "random"}), batches=batches)
    bot.wait_kind("welcome")
    ref.wait_connected(name)
    info = ref.run_match(game, [name, *house], options=options)
    bot.wait_for(
        lambda m: m.WhichOneof("kind") == "match_ended" and m.match_ended.match_id == info.match_id,
        timeout=RPC_TIMEOUT,
        what="its MatchEnded",
    )
    raws = [raw for raw, _ in bot.messages]
    kinds = {m.WhichOneof("kind") for _, m in bot.messages}
    assert {"match_started", "decision", "match_ended"} <= kinds
    assert len(raws) > 20  # a whole match of decisions
    seed = info.seed
    assert seed == replay_seed(info) and seed >= 2**32
    assert_never_sent(seed, raws, f"{game} bot")
    # nor the seeds of the house bots it played against
    for seat in range(1, 1 + len(house)):
        assert_never_sent(house_bot_seed(seed, seat), raws, f"{game} bot (house seat {seat})")


def test_the_audit_finds_a_seed_where_it_is():
    seed = 2**62 + 12345
    for name, encoded in seed_encodings(seed).items():
        with pytest.raises(AssertionError, match=name):
            assert_never_sent(seed, [b"\x01\x02" + encoded + b"\x03"], "a leaky message")
    assert pb.MatchInfo.FromString(b"\x38" + seed_encodings(seed)["varint"]).seed == seed


# --- nothing rebuilt from public facts and seed 0 ------------------------------------------


def _missions(state: Any, actions: Iterator[tuple[int, dict[str, Any]]]) -> list[str]:
    """The missions dealt once the setup is over, playing ``actions`` until then."""
    while "missions" not in state.variant_data:
        seat, action = next(actions)
        state.apply(seat, action)
    return list(state.variant_data["missions"]["assigned"])


def _defaults(state: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    while True:
        yield state.decision().player, state.default_action()


def test_a_match_given_no_seed_cannot_be_rebuilt_from_seed_0(referee_server):
    ref = referee_server
    variants, options = ["missions"], {"turn-limit": "20", "setup": "deal"}
    players = HOUSE_RISK * 2  # six missions: all six guessed by chance once in 2 million
    info = ref.run_match("risk", players, variants=variants, options=options)
    rec = from_json(json.loads(info.replay_json))
    assert verify(rec) == len(rec.steps) > 0  # its own seed replays it exactly
    game = REGISTRY.game("risk")
    chosen = REGISTRY.resolve_variants("risk", variants)
    real = game.new_state(6, rec.seed, options, chosen)
    guess = game.new_state(6, 0, options, chosen)
    assert real.initial_events == rec.initial_events
    assert guess.initial_events != rec.initial_events  # the deal
    dealt = _missions(real, iter((seat, action) for seat, action, _ in rec.steps))
    assert dealt != _missions(guess, _defaults(guess))
    # the same actions from seed 0: the draws and the dice part at once
    with pytest.raises(ReplayMismatch):
        verify(replace(rec, seed=0))


def _first_setup(ref: Any, players: list[str]) -> tuple[pb.MatchInfo, dict[str, str]]:
    """A short Stratego match of ``players`` with no seed given: seat 0's setup."""
    request = ref.match_request("stratego", players, options={"turn-limit": "4"})
    request.match_id = f"seeds-{uuid.uuid4().hex}"
    info = ref.arena.RunMatch(request, timeout=MATCH_TIMEOUT).match
    seat, setup, _ = from_json(json.loads(info.replay_json)).steps[0]
    assert seat == 0 and setup["type"] == "setup"
    return info, setup["placement"]


def _setup_of(player: Any) -> dict[str, str]:
    """The placement ``player`` chooses for seat 0 of a new Stratego game."""
    state = REGISTRY.game("stratego").new_state(2, 0, {}, [])
    decision = state.decision()
    assert (decision.player, decision.kind) == (0, "setup")
    return player.decide(state.observation(0), decision)["placement"]


def test_a_house_bots_setup_is_not_what_public_facts_give(referee_server):
    info, setup = _first_setup(referee_server, ["house:heuristic", "house:random"])
    spec = REGISTRY.bot("stratego", "heuristic")
    # what the seat's bot would be seeded with from what its opponent knows
    for public in {0, 0 * 1000 + 0, house_bot_seed(0, 0)}:
        assert _setup_of(spec.factory(0, public)) != setup
    # and its own secret seed does give that setup
    assert _setup_of(spec.factory(0, house_bot_seed(info.seed, 0))) == setup


def test_a_house_bot_process_seeds_from_its_own_secret_or_from_seed(referee_server, spawn):
    ref = referee_server
    spawn.bot(ref, "heuristic", "seeded-process", "--seed", "77")
    spawn.bot(ref, "heuristic", "secret-process")
    ref.wait_connected("seeded-process", "secret-process")
    info, setup = _first_setup(ref, ["seeded-process", "house:random"])
    context = MatchContext(info.match_id, "stratego", 0, list(info.players))
    assert setup == _setup_of(house_factory("heuristic", 77)(context))  # --seed: repeatable
    info, setup = _first_setup(ref, ["secret-process", "house:random"])
    context = replace(context, match_id=info.match_id)
    public = zlib.crc32(f"{info.match_id}/0".encode())  # what it was seeded with before
    assert _setup_of(REGISTRY.bot("stratego", "heuristic").factory(0, public)) != setup
    assert _setup_of(house_factory("heuristic", 0)(context)) != setup


# --- revealed once the match (a tournament's: the tournament) has ended -------------------


class Watcher:
    """A public WatchMatch stream read in a thread: every SpectatorMessage."""

    def __init__(self, ref: Any, match_id: str) -> None:
        self.messages: list[pb.SpectatorMessage] = []
        self.call = ref.arena.WatchMatch(
            pb.WatchMatchRequest(match_id=match_id), timeout=MATCH_TIMEOUT
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        self.messages.extend(self.call)

    def finished(self) -> pb.MatchInfo:
        self.thread.join(MATCH_TIMEOUT)
        assert not self.thread.is_alive(), "the watch did not end"
        assert self.messages[-1].HasField("finished")
        return self.messages[-1].finished


def _silent_bot(ref: Any, raw_bots: Any) -> str:
    """A registered bot that never answers: its matches run until it forfeits."""
    name = "seed-silent"
    reply = ref.arena.RegisterBot(  # a new version each call: a new silent bot
        pb.RegisterBotRequest(name=name, registration_key=ref.registration_key, new_version=True),
        timeout=RPC_TIMEOUT,
    )
    raw_bots(ref.address, reply.token).wait_kind("welcome")
    ref.wait_connected(name)
    return name


def _hides(info: pb.MatchInfo) -> bool:
    return not info.HasField("seed") and not info.HasField("deal_seed") and not info.replay_json


def _ended(ref: Any, match_id: str) -> pb.MatchInfo:
    """The match once it has ended, as the organiser sees it."""
    ref.wait_match(match_id)
    request = pb.GetMatchRequest(match_id=match_id)
    return ref.arena.GetMatch(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT)


def test_a_match_seed_is_shown_once_the_match_has_ended(locked_referee, raw_bots):
    ref = locked_referee
    silent = _silent_bot(ref, raw_bots)
    request = ref.match_request("stratego", [silent, "house:random"], wait=False)
    match_id = ref.arena.RunMatch(request, metadata=ref.organiser(), timeout=RPC_TIMEOUT).match_id
    watcher = Watcher(ref, match_id)
    running = ref.get_match(match_id)
    organiser = ref.arena.GetMatch(
        pb.GetMatchRequest(match_id=match_id), metadata=ref.organiser(), timeout=RPC_TIMEOUT
    )
    assert running.status == organiser.status == "running"
    assert _hides(running) and _hides(organiser)  # nobody's while it runs
    ended = _ended(ref, match_id)
    public = ref.get_match(match_id)
    assert public.status == "finished" and public.HasField("seed")
    assert public.seed == ended.seed == replay_seed(public) >= 2**32
    watched = watcher.finished()
    assert watched.seed == public.seed and watched.replay_json == public.replay_json


def test_a_tournament_seeds_are_shown_once_the_tournament_has_ended(locked_referee, raw_bots):
    ref = locked_referee
    silent = _silent_bot(ref, raw_bots)
    created = ref.arena.CreateTournament(
        pb.CreateTournamentRequest(
            name="hidden seeds",
            game="stratego",
            bots=[silent, "house:random"],
            seats=2,
            games_per_pairing=2,
        ),
        metadata=ref.organiser(),
        timeout=RPC_TIMEOUT,
    )
    with closing(Store(ref.db)) as store:
        tournament = store.tournament(created.tournament_id)
        first, second = store.tournament_matches(tournament.id)
        (job,) = jobs(store, tournament, [first])
    # the deal's two colours: one board, each its own secrets
    assert first.deal_seed == second.deal_seed and first.seed != second.seed
    players = [seat.player for seat in job.seats]
    run = ref.match_request(job.game, players, options=job.options, seed=job.seed, wait=False)
    run.match_id = job.match_id  # as the tournament's executor asks for it
    ref.arena.RunMatch(run, metadata=ref.organiser(), timeout=RPC_TIMEOUT)
    watcher = Watcher(ref, job.match_id)
    assert _hides(ref.get_match(job.match_id))
    ended = _ended(ref, job.match_id)
    assert ended.seed == job.seed == replay_seed(ended)  # the organiser's at its end
    assert ended.deal_seed == job.deal_seed == json.loads(ended.replay_json)["deal_seed"]
    assert _hides(ref.get_match(job.match_id))  # ended, but its deal is to be played again
    watched = watcher.finished()
    assert watched.status == "finished" and _hides(watched)
    assert not watched.HasField("deal_seed")
    ask = pb.GetTournamentRequest(tournament_id=tournament.id)
    assert not ref.arena.GetTournament(ask, timeout=RPC_TIMEOUT).HasField("seed")
    with closing(Store(ref.db)) as store:
        store.set_tournament_status(tournament.id, "finished")
    after = ref.get_match(job.match_id)
    assert after.seed == job.seed and after.replay_json == ended.replay_json
    assert after.deal_seed == job.deal_seed
    shown = ref.arena.GetTournament(ask, timeout=RPC_TIMEOUT)
    assert shown.HasField("seed") and shown.seed == created.seed
