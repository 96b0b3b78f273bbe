"""The rotations of a tournament's deal share the board, never the secrets: the audit's
spy test, on a real referee over real sockets.

Spy bots, raw gRPC clients that record the exact bytes of every message they receive,
play real tournaments with duplicate deals (one deal, every seat rotation: each spy sits
in every seat once): Risk with secret missions, classic Risk with cards, Risk with a
neutral army, capital Risk, and Stratego with the fallback setups (the spies send a bad
setup, so the referee plays its own). The spies play alike in a seat whichever spy sits
there (a built-in bot seeded by the seat), so whatever differs between two rotations
comes from their chance: had the rotations shared one secret seed, as before, they would
have been the same game, byte for byte.

From each rotation's bytes, read as a spy reads them, come the facts that were hidden:
the missions by seat, the cards as drawn, the dice by index, each seat's fallback setup;
then the bytes of one rotation are searched for the hidden facts of the others. The
public deal is the same in every rotation; the secrets differ as chance has them differ.
Anonymous spectators of every rotation (``WatchMatch``, and the web's live view over it)
see nothing of another rotation either, the end of one (all its missions) included.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from arena.referee.codec import observation_from_proto
from arena.store import Store
from arena.v1 import arena_pb2 as pb
from arena.web.live import Feed

from .conftest import RPC_TIMEOUT, LegalPlayer, wait_until

ORGANISER = "rotations-organiser"
REGISTRATION = "rotations-registration"
#: (game, variants, options, seats): every case is one deal in all its seat rotations
CASES = {
    "risk-missions": ("risk", ["missions"], {"turn-limit": "8"}, 3),
    "risk-cards": ("risk", [], {"setup": "deal", "turn-limit": "8"}, 3),
    "risk-neutral": ("risk", ["neutral"], {"turn-limit": "10"}, 2),
    "risk-capital": ("risk", ["capital"], {"turn-limit": "8"}, 3),
    "stratego-fallback": ("stratego", [], {"turn-limit": "40"}, 2),
}
SPIES = ["spy-a", "spy-b", "spy-c"]
MATCH_TIMEOUT = 180.0


class Spy(LegalPlayer):
    """Plays as the built-in bot of its seat (the same in every rotation), but not a
    Stratego setup: it sends an empty one, so the referee plays its fallback setup. It
    holds every decision until ``gate`` opens (the spectators watch from the start)."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__({"risk": "aggressive", "stratego": "random"})
        self.gate = gate

    def handle(self, message: pb.RefereeMessage) -> pb.BotMessage | None:
        if message.WhichOneof("kind") == "decision":
            self.gate.wait(MATCH_TIMEOUT)
        return super().handle(message)

    def action(self, request: pb.DecisionRequest) -> dict[str, Any]:
        if request.kind == "setup":
            return {"type": "setup", "placement": {}}  # refused: the fallback is played
        return super().action(request)


class Spectator:
    """An anonymous ``WatchMatch`` of one match, its messages' exact bytes kept."""

    def __init__(self, channel: grpc.Channel, match_id: str) -> None:
        watch = channel.unary_stream(
            "/arena.v1.ArenaService/WatchMatch",
            request_serializer=pb.WatchMatchRequest.SerializeToString,
            response_deserializer=None,
        )
        self.raws: list[bytes] = []
        self.call = watch(pb.WatchMatchRequest(match_id=match_id), timeout=MATCH_TIMEOUT)
        self.thread = threading.Thread(target=lambda: self.raws.extend(self.call), daemon=True)
        self.thread.start()


class LiveView:
    """The web's live view of one match (``arena.web.live.Feed`` on the referee's
    WatchMatch): what a browser is sent, its frames and its end."""

    def __init__(self, address: str, match_id: str, game: str) -> None:
        self.feed = Feed(match_id, address, {"game": game, "players": [], "board": {}})
        self.thread = threading.Thread(target=lambda: asyncio.run(self.feed.run()), daemon=True)
        self.thread.start()

    def sent(self) -> bytes:
        self.thread.join(MATCH_TIMEOUT)
        assert self.feed.ended is not None and self.feed.problem is None, self.feed.problem
        start = b"".join(piece.plain for piece in self.feed.start_pieces())
        return start + self.feed.ended.encode()


@dataclass
class Rotation:
    """One match of a deal, as its spies received it."""

    match_id: str
    #: its seed and deal seed (the organiser's store), and whether it ended last of its deal
    seeds: tuple[int, int] = (0, 0)
    last: bool = False
    #: seat -> the (bytes, message) of that seat's spy in this match, in order
    seats: dict[int, list[tuple[bytes, pb.RefereeMessage]]] = field(default_factory=dict)
    #: the anonymous spectator's messages, each as it was on the wire
    watched: list[bytes] = field(default_factory=list)
    #: what the web's live view sent its browsers
    live: bytes = b""

    @property
    def spectator(self) -> bytes:
        return b"".join(self.watched)

    @property
    def raw(self) -> bytes:
        """Every byte any seat of this match received."""
        return b"".join(raw for messages in self.seats.values() for raw, _ in messages)

    def texts(self, seat: int) -> list[str]:
        """The events' JSON texts seat ``seat`` received, in order."""
        out: list[str] = []
        for _, message in self.seats[seat]:
            kind = message.WhichOneof("kind")
            if kind in ("decision", "match_ended"):
                out += getattr(message, kind).events_json
        return out

    def events(self, seat: int = 0) -> list[dict[str, Any]]:
        return [json.loads(text) for text in self.texts(seat)]

    def observations(self, seat: int) -> Iterator[tuple[str, dict[str, Any]]]:
        for _, message in self.seats[seat]:
            if message.WhichOneof("kind") == "decision":
                yield message.decision.kind, observation_from_proto(message.decision.observation)

    # --- the facts that were hidden, as the spies learnt them ---------------------------

    def deal(self) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["e"] == "deal"]

    def missions(self) -> tuple[str, ...]:
        """Each seat's mission as its spy was first shown it."""
        return tuple(
            next(obs["mission"]["id"] for _, obs in self.observations(seat) if "mission" in obs)
            for seat in sorted(self.seats)
        )

    def revealed_missions(self) -> list[str]:
        (event,) = [e for e in self.events() if e["e"] == "missions"]
        return event["missions"]

    def draws(self) -> list[tuple[int, int]]:
        """(seat, card) of every card drawn, in order: the drawer alone saw the card."""
        seen = {seat: [e for e in self.events(seat) if e["e"] == "draw"] for seat in self.seats}
        return [(e["p"], seen[e["p"]][i]["card"]) for i, e in enumerate(seen[0])]

    def rolls(self) -> str:
        """Every roll's outcome, in order: the dice by index."""
        return "".join(e["rolls"] for e in self.events() if e["e"] == "battle")

    def longest_battle(self) -> bytes:
        """The text of the battle event with the most rolls, as it was on the wire."""
        battles = [t for t in self.texts(0) if json.loads(t)["e"] == "battle"]
        return max(battles, key=lambda t: len(json.loads(t)["rolls"])).encode()

    def setups(self) -> dict[int, dict[int, str]]:
        """Each seat's fallback setup (square -> rank), as its first move showed it."""
        out = {}
        for seat in self.seats:
            obs = next(obs for kind, obs in self.observations(seat) if kind == "move")
            out[seat] = {
                square: piece["rank"]
                for square, piece in enumerate(obs["board"])
                if piece is not None and piece["owner"] == seat
            }
        return out


def rotations_of(
    spies: dict[str, Any], matches: list[Any], watched: dict[str, tuple[Any, Any]]
) -> list[Rotation]:
    """The deal's matches in seat-rotation order, with what each seat's spy received."""
    out = []
    ending = max(matches, key=lambda m: m.finished)
    for match in sorted(matches, key=lambda m: m.match_key):
        rotation = Rotation(match.id, (match.seed, match.deal_seed), match is ending)
        for bot in spies.values():
            received = [(raw, m) for raw, m in bot.messages if _match_of(m) == match.id]
            started = [m.match_started for _, m in received if m.HasField("match_started")]
            if started:
                rotation.seats[started[0].seat] = received
        spectator, live = watched[match.id]
        spectator.thread.join(MATCH_TIMEOUT)
        rotation.watched = list(spectator.raws)
        rotation.live = live.sent()
        out.append(rotation)
    return out


def _match_of(message: pb.RefereeMessage) -> str | None:
    kind = message.WhichOneof("kind")
    return getattr(message, kind).match_id if kind not in (None, "welcome", "pong") else None


def agreement(a: str, b: str) -> float:
    """The share of indices where two roll sequences agree."""
    common = min(len(a), len(b))
    return sum(x == y for x, y in zip(a, b, strict=False)) / common


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Rotation]]:
    """Every case's tournament, played at once by the spies on one referee, each match
    watched by an anonymous spectator and by the web's live view from its first step."""
    from .conftest import RawBot, RefereeServer

    ref = RefereeServer(
        tmp_path_factory.mktemp("rotations"),
        organiser_key=ORGANISER,
        registration_key=REGISTRATION,
        decision_ms=60_000,  # the spies hold their moves until the spectators watch
        time_bank_ms=0,
    )
    gate = threading.Event()
    spies: dict[str, RawBot] = {}
    try:
        for name in SPIES:
            spies[name] = RawBot(ref.address, ref.register(name).token, player=Spy(gate))
        ref.wait_connected(*SPIES)
        tournaments = {}
        for index, (case, (game, variants, options, seats)) in enumerate(CASES.items()):
            request = pb.CreateTournamentRequest(
                name=case,
                game=game,
                variants=variants,
                options=options,
                bots=SPIES[:seats],
                seats=seats,
                games_per_pairing=seats,  # one deal, in every seat rotation
                seed=20261203 + index,
                start=True,
            )
            created = ref.arena.CreateTournament(
                request, metadata=ref.organiser(), timeout=RPC_TIMEOUT
            )
            tournaments[case] = created.tournament_id
        store = Store(ref.db)
        with closing(store):

            def all_running() -> list[Any] | None:
                matches = [m for t in tournaments.values() for m in store.tournament_matches(t)]
                return matches if all(m.status == "running" for m in matches) else None

            matches = wait_until(all_running, 60, "every rotation to start")
            channel = grpc.insecure_channel(ref.address)
            watched = {}
            for match in matches:  # nobody has moved yet: the spies wait at the gate
                watched[match.id] = (
                    Spectator(channel, match.id),
                    LiveView(ref.address, match.id, match.game),
                )
            wait_until(
                lambda: all(lv.feed.base is not None for _, lv in watched.values()),
                30,
                "every live view to see its match",
            )
            gate.set()

            def finished() -> bool:
                for tournament_id in tournaments.values():
                    ask = pb.GetTournamentRequest(tournament_id=tournament_id)
                    info = ref.arena.GetTournament(ask, timeout=RPC_TIMEOUT)
                    if info.status != "finished":
                        return False
                return True

            wait_until(finished, MATCH_TIMEOUT, "every tournament to finish", interval=0.5)
            out = {}
            for case, tournament_id in tournaments.items():
                deal = store.tournament_matches(tournament_id)
                assert len({m.deal_seed for m in deal}) == 1  # one deal...
                assert len({m.seed for m in deal}) == len(deal)  # ...each its own secrets
                out[case] = rotations_of(spies, deal, watched)
            channel.close()
        yield out
    finally:
        gate.set()
        for bot in spies.values():
            bot.close()
        ref.close()


def pairs(rotations: list[Rotation]) -> Iterator[tuple[Rotation, Rotation]]:
    return itertools.permutations(rotations, 2)


@pytest.mark.parametrize("case", ["risk-missions", "risk-cards", "risk-neutral", "risk-capital"])
def test_risk_rotations_share_the_deal_and_not_the_cards_or_the_dice(played, case):
    rotations = played[case]
    assert len(rotations) == CASES[case][3]
    for rotation in rotations:  # every seat was a spy's, and heard the whole match
        assert sorted(rotation.seats) == list(range(len(rotations)))
    # the public start: the same territories, seat by seat, in every rotation
    deals = [json.dumps(r.deal()) for r in rotations]
    assert len(set(deals)) == 1 and rotations[0].deal(), "the rotations' deals differ"
    # the cards as drawn and the dice by index: what each rotation hid, its own
    for rotation in rotations:
        assert rotation.draws() and len(rotation.rolls()) >= 20
    for a, b in itertools.combinations(rotations, 2):
        assert a.draws() != b.draws(), "two rotations drew the same cards"
        assert agreement(a.rolls(), b.rolls()) < 0.7, "two rotations rolled alike"
    # searched for in the bytes: another rotation's longest battle (its dice, roll by
    # roll) is in no message of this one's seats, spectators or live view
    for a, b in pairs(rotations):
        battle = b.longest_battle()
        assert battle in b.raw and battle in b.spectator  # the search finds what is there
        assert battle not in a.raw and battle not in a.spectator and battle not in a.live


def test_missions_by_seat_are_each_rotation_s_own(played):
    rotations = played["risk-missions"]
    missions = [r.missions() for r in rotations]
    assert len(set(missions)) == len(missions), f"rotations share missions: {missions}"
    for rotation, dealt in zip(rotations, missions, strict=True):
        revealed = rotation.revealed_missions()  # the end shows every seat's mission
        assert len(revealed) == len(dealt)
        shown = json.dumps({"e": "missions", "missions": revealed}, separators=(",", ":"))
        assert shown.encode() in rotation.raw and shown.encode() in rotation.spectator
    # the end of one rotation, to its seats and to its spectators, tells no other's
    for a, b in pairs(rotations):
        theirs = json.dumps(b.revealed_missions(), separators=(",", ":")).encode()
        assert theirs not in a.raw and theirs not in a.spectator and theirs not in a.live
        assert a.missions() != b.missions()
        # seat by seat: what a seat's spy learnt of its own mission in one rotation is
        # not the mission of the same seat elsewhere, but as chance has it (14 missions)
    same_seat = sum(
        x == y for a, b in itertools.combinations(missions, 2) for x, y in zip(a, b, strict=True)
    )
    assert same_seat < len(missions)  # 9 seat pairs, each alike once in 12 or so


def test_headquarters_stay_hidden_until_their_reveal(played):
    """A seat sees no other pick before the reveal, in its rotation or from another:
    the picks are the spies' (alike in a seat, as the spies are), the rest the dice's."""
    for rotation in played["risk-capital"]:
        (reveal,) = [e for e in rotation.events() if e["e"] == "headquarters"]
        assert all(t is not None for t in reveal["hq"])
        for seat in rotation.seats:
            before = 0
            for _, obs in rotation.observations(seat):
                hq = obs.get("headquarters")
                if hq is None:
                    continue  # still placing armies: no headquarters yet
                if all(t is not None for t in hq):
                    break  # revealed
                before += 1
                assert all(t is None for s, t in enumerate(hq) if s != seat), hq
            assert before >= 1  # the seat decided before the reveal (its own pick)


def test_stratego_fallback_setups_are_each_rotation_s_own(played):
    first, second = played["stratego-fallback"]
    for rotation in (first, second):
        rejected = [
            m
            for messages in rotation.seats.values()
            for _, m in messages
            if m.WhichOneof("kind") == "rejected"
        ]
        assert len(rejected) >= 2 * 2  # each seat's empty setups refused: the fallback
    setups = (first.setups(), second.setups())
    for seat in (0, 1):
        assert len(setups[0][seat]) == len(setups[1][seat]) == 40
        assert setups[0][seat] != setups[1][seat], f"seat {seat}'s fallback is the same"
        same = sum(setups[0][seat][s] == rank for s, rank in setups[1][seat].items())
        assert same < 30, f"seat {seat}'s fallbacks agree on {same} of 40 squares"


def encodings(seed: int) -> list[bytes]:
    """How a seed could travel: a varint (any integer field), decimal text, 8 bytes."""
    varint = pb.MatchInfo(seed=seed).SerializeToString()[1:]  # less the field's tag
    return [
        varint,
        str(seed).encode(),
        seed.to_bytes(8, "little", signed=True),
        seed.to_bytes(8, "big", signed=True),
    ]


def test_spectators_and_seats_see_no_seed_while_the_tournament_goes_on(played):
    """WatchMatch and the web's live view of a rotation: its public events and, at its
    end, its own secrets (the missions, above), but no replay and no seed while the
    tournament goes on: neither its own nor another rotation's. (Only the deal's last
    match may end after its tournament, and then shows its replay.) No seat ever gets
    one, nor any other rotation's facts (searched for above, case by case)."""
    for case, rotations in played.items():
        seeds = [s for r in rotations for s in r.seeds]
        for rotation in rotations:
            # WatchMatch sends the steps of 100 ms as one message: a few messages a match
            assert rotation.live and len(rotation.watched) >= 3, case
            end = pb.SpectatorMessage.FromString(rotation.watched[-1])
            assert end.HasField("finished") and end.finished.status == "finished"
            heard = [raw for messages in rotation.seats.values() for raw, _ in messages]
            if not rotation.last:
                assert not end.finished.replay_json and not end.finished.HasField("seed")
                heard += rotation.watched
            for seed in seeds:
                for encoded in encodings(seed):
                    assert not any(encoded in raw for raw in heard), (case, seed)
                    assert str(seed).encode() not in rotation.live
