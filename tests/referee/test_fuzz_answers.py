"""Hostile answers to every decision kind of every game and variant, through a real
referee over real sockets, from a raw client built from the .proto (no SDK).

Each decision kind is answered with every hostile value below before it is answered
legally: JSON nested 100,000 deep or just past the bound, lists of 50,000 items, NaN and
infinities, every field of the wrong type, 32- and 64-bit edges and beyond, strings of
100,000 characters, lone surrogates, the wrong game, an empty action, another match's
and another seat's request ids. The referee never aborts a match: every match ends
"finished" with a real result; every bad answer is refused with a short reason (three
in a row are a strike and the default action), never echoed; the rules raise nothing
but IllegalAction on any of them (the referee's log says nothing else); and every
replay verifies.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from arena.referee.codec import action_to_proto
from arena.v1 import arena_pb2 as pb

from .conftest import LegalPlayer, RawBot, wait_until

#: (game, variants, seats, options): every game and variant, and the options that
#: bring decision kinds of their own (defend; fixed cards; rescues)
CONFIGS = [
    ("risk", [], 3, {"turn-limit": "6"}),
    ("risk", [], 3, {"setup": "deal", "defender-dice": "choose", "cards": "fixed"}),
    ("risk", ["missions"], 3, {"setup": "deal"}),
    ("risk", ["neutral"], 2, {"defender-dice": "choose"}),
    ("risk", ["capital"], 3, {"setup": "deal"}),
    ("stratego", [], 2, {"turn-limit": "60"}),
    ("stratego", [], 2, {"rescue": "on", "turn-limit": "400"}),
    ("stratego", ["isf"], 2, {"turn-limit": "60"}),
    ("stratego", ["barrage"], 2, {"turn-limit": "60"}),
]
RISK_TURNS = "10"  # rounds, unless a config says otherwise: cards and trades come in
#: every kind the games ask (neutral_place: the neutral variant's; headquarters: capital's)
KINDS = {
    "risk": {
        "claim",
        "setup_place",
        "reinforce",
        "attack",
        "move_in",
        "fortify",
        "trade",
        "defend",
        "neutral_place",
        "headquarters",
    },
    "stratego": {"setup", "move", "rescue"},
}
MAX_REASON = 300  # characters: no refusal echoes what it refused
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

Answer = list[pb.BotMessage]


def _reply(request: pb.DecisionRequest, action: pb.Action, **fields: Any) -> pb.BotMessage:
    reply = pb.ActionReply(match_id=request.match_id, request_id=request.request_id)
    reply.action.CopyFrom(action)
    for key, value in fields.items():
        setattr(reply, key, value)
    return pb.BotMessage(action=reply)


def _json(request: pb.DecisionRequest, text: str) -> pb.BotMessage:
    return _reply(request, pb.Action(other_json=text))


def _mutations(legal: dict[str, Any]) -> list[dict[str, Any]]:
    """The legal action with each field in turn given each wrong type or extreme value."""
    wrong: list[Any] = [
        None,
        True,
        "x",
        "é" * 3,
        [],
        [1, [2, [3]]],
        {"a": 1},
        1.5,
        INT32[1] + 1,
        INT32[0] - 1,
        INT64[1],
        INT64[0],
        -1,
        0,
    ]
    out = []
    for key in [*legal, "type", "extra"]:
        for value in wrong:
            out.append({**legal, key: value})
    return out


def _typed_extremes(game: str, legal: dict[str, Any]) -> list[pb.Action]:
    """Typed actions of the right game: every integer field at its 32-bit edges, huge
    lists and maps, huge strings."""
    out = []
    message = pb.RiskAction if game == "risk" else pb.StrategoAction
    fields = message.DESCRIPTOR.fields
    kind = str(legal.get("type", ""))
    for field in fields:
        if field.type == field.TYPE_INT32 and not field.is_repeated:
            for value in (INT32[0], INT32[1], -1):
                typed = message(type=kind, **{field.name: value})
                out.append(pb.Action(**{game: typed}))
    if game == "risk":
        out.append(pb.Action(risk=pb.RiskAction(type=kind, cards=list(range(50_000)))))
        out.append(
            pb.Action(risk=pb.RiskAction(type=kind, placements={i: 1 for i in range(50_000)}))
        )
        out.append(pb.Action(risk=pb.RiskAction(type=kind, placements={0: INT32[1], 1: INT32[1]})))
        out.append(pb.Action(risk=pb.RiskAction(type="x" * 100_000)))
        out.append(pb.Action(risk=pb.RiskAction(type=kind, cards=[INT32[0], INT32[1], -1])))
    else:
        out.append(
            pb.Action(
                stratego=pb.StrategoAction(type=kind, placement={i: "Flag" for i in range(50_000)})
            )
        )
        out.append(
            pb.Action(
                stratego=pb.StrategoAction(type=kind, placement={i: "x" * 1000 for i in range(40)})
            )
        )
        out.append(pb.Action(stratego=pb.StrategoAction(type=kind, piece="x" * 100_000)))
        out.append(pb.Action(stratego=pb.StrategoAction(type="x" * 100_000)))
        out.append(
            pb.Action(stratego=pb.StrategoAction(type=kind, placement={INT32[0]: "Flag", -1: ""}))
        )
    return out


class Fuzzer(LegalPlayer):
    """Plays every seat it is given; each decision kind gets every hostile answer before
    it is answered legally. What the referee answered is kept for the test."""

    def __init__(self, policies: dict[str, str]) -> None:
        super().__init__(policies)
        self.untried: dict[tuple[str, str], list[Callable[[pb.DecisionRequest], Answer]]] = {}
        self.rejected: list[pb.ActionRejected] = []
        self.hostile = Counter[tuple[str, str]]()  # (game, kind) -> hostile answers sent
        self.kinds: dict[str, set[str]] = defaultdict(set)
        self.others: dict[str, pb.DecisionRequest] = {}  # the last request of each match
        self.lock = threading.Lock()

    def handle(self, message: pb.RefereeMessage) -> pb.BotMessage | None:
        kind = message.WhichOneof("kind")
        if kind == "rejected":
            with self.lock:
                self.rejected.append(message.rejected)
            return None
        return super().handle(message)

    def reply(self, request: pb.DecisionRequest) -> pb.BotMessage:
        raise AssertionError("the fuzzer answers with answers(), never one reply")

    def answers(self, request: pb.DecisionRequest) -> Answer:
        game = self.games[request.match_id]
        self.kinds[game].add(request.kind)
        key = (game, request.kind)
        if key not in self.untried:
            self.untried[key] = self._hostile(game, request)
        out: Answer = []
        queue = self.untried[key]
        while queue:
            answer = queue.pop(0)(request)
            self.hostile[key] += 1
            out += answer
            if answer[-1].action.request_id == request.request_id and (
                answer[-1].action.match_id == request.match_id
            ):
                break  # an answer to this request: the referee refuses it (or plays it)
        else:
            out.append(super().reply(request))
        self.others[request.match_id] = request
        return out

    def _hostile(
        self, game: str, request: pb.DecisionRequest
    ) -> list[Callable[[pb.DecisionRequest], Answer]]:
        legal = self.action(request)
        legal_json = json.dumps(legal)
        deep = "[" * 100_000 + "]" * 100_000
        just_past = '{"type":' + "[" * 40 + "]" * 40 + "}"
        within = '{"type":"x","a":' + "[" * 20_000 + "]" * 20_000 + "}"
        texts = [
            deep,
            just_past,
            within,
            '{"type": "' + "x" * 100_000 + '"}',
            '{"type":"x","a":"' + "[" * 60_000 + '"}',
            legal_json.replace("}", ', "n": NaN}', 1),
            legal_json.replace("}", ', "n": Infinity}', 1),
            legal_json.replace("}", ', "n": -Infinity}', 1),
            legal_json.replace("}", ', "n": 1e999}', 1),
            legal_json.replace("}", f', "n": {1 << 64}}}', 1),
            legal_json.replace("}", ', "n": ' + "9" * 5000 + "}", 1),
            '{"type": "\\ud800"}',
            '{"type": "\\udfff\\ud800", "territory": "\\u0000"}',
            "{",
            "null",
            "[]",
            '"attack"',
            "1",
            "",
            "\x00",
        ] + [json.dumps(m) for m in _mutations(legal)]
        wrong_game = "stratego" if game == "risk" else "risk"
        kinds_of_answer: list[list[Callable[[pb.DecisionRequest], Answer]]] = [
            [lambda r, t=text: [_json(r, t)] for text in texts],
            [lambda r, a=action: [_reply(r, a)] for action in _typed_extremes(game, legal)],
            [
                lambda r: [_reply(r, pb.Action())],  # no game at all
                lambda r: [
                    pb.BotMessage(
                        action=pb.ActionReply(match_id=r.match_id, request_id=r.request_id)
                    )
                ],
                lambda r: [_reply(r, action_to_proto(wrong_game, {"type": "move", "from": 1}))],
                lambda r: [_reply(r, action_to_proto(wrong_game, {"type": "setup"}))],
                # stale: another match's request, another seat's (an old) request, an id
                # never sent, a match that does not exist: ignored, then a wrong answer
                lambda r: [*self._stale(r), _json(r, "{}")],
            ],
        ]
        # one of each kind in turn: a kind asked only a few times still gets them all
        mixed = [
            answer
            for row in itertools.zip_longest(*kinds_of_answer)
            for answer in row
            if answer is not None
        ]
        return mixed

    def _stale(self, request: pb.DecisionRequest) -> Answer:
        legal = action_to_proto(self.games[request.match_id], self.action(request))
        out = [
            _reply(request, legal, request_id=request.request_id ^ 1),
            _reply(request, legal, request_id=(1 << 64) - 1),
            _reply(request, legal, request_id=0),
            _reply(request, legal, match_id="x" * 100_000),
            _reply(request, legal, match_id=""),
        ]
        for other in list(self.others.values()):
            if other.match_id != request.match_id:
                out.append(_reply(request, legal, match_id=other.match_id))
                out.append(_reply(other, legal, request_id=request.request_id))
            elif other.request_id != request.request_id:
                out.append(_reply(request, legal, request_id=other.request_id))
        return out


class FuzzBot(RawBot):
    """A raw client whose player may answer a decision with several messages."""

    def _read(self) -> None:  # the conftest's reader, with answers() in place of reply()
        import grpc

        assert isinstance(self.player, Fuzzer)
        try:
            for raw in self.call:
                message = pb.RefereeMessage.FromString(raw)
                with self._cond:
                    self.messages.append((raw, message))
                    self._cond.notify_all()
                if message.WhichOneof("kind") == "decision":
                    with self.player.lock:
                        for answer in self.player.answers(message.decision):
                            self.send(answer)
                else:
                    self.player.handle(message)
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status = exc.code()
            self.details = exc.details() or ""
        except BaseException as exc:
            self.error = exc
            self.call.cancel()
        finally:
            with self._cond:
                self.done.set()
                self._cond.notify_all()


def test_hostile_answers_to_every_decision_kind_never_abort_a_match(referee_factory):
    # many strikes allowed: a kind asked rarely (a rescue, a headquarters) takes its
    # hostile answers three at a time, each three a strike; short decisions
    ref = referee_factory(
        decision_ms=5000,
        time_bank_ms=0,
        max_strikes=100_000,
        extra=("--max-queued-bytes", str(64 << 20)),
    )
    fuzzer = Fuzzer({"risk": "aggressive", "stratego": "heuristic"})
    bot = FuzzBot(ref.address, ref.register("fuzzer").token, player=fuzzer, timeout=600)
    bot.wait_kind("welcome")
    ids = []
    for number, (game, variants, seats, options) in enumerate(CONFIGS):
        if game == "risk":
            options = {"turn-limit": RISK_TURNS, **options}
        ids.append(
            ref.start_match(
                game, ["fuzzer"] * seats, variants=variants, options=options, seed=700 + number
            )
        )
    infos = [ref.wait_match(match_id, timeout=300) for match_id in ids]
    assert bot.error is None, bot.error
    assert not bot.done.is_set(), f"the fuzzer's stream ended: {bot.status} {bot.details}"
    for (game, variants, _, options), info in zip(CONFIGS, infos, strict=True):
        where = f"{game} {variants} {options}"
        assert info.status == "finished", (where, info.status, info.result)
        assert info.result.reason not in ("", "aborted"), (where, info.result)
        assert not info.result.forfeits, (where, info.result.forfeits)
        rec = json.loads(info.replay_json)
        assert rec["steps"], where
    from arena.engine.replay import from_json, verify

    for info in infos:
        assert verify(from_json(json.loads(info.replay_json))) > 0
    # every kind got its hostile answers, and each was refused briefly
    for game, kinds in KINDS.items():
        assert kinds <= fuzzer.kinds[game], (game, kinds - fuzzer.kinds[game])
        for kind in kinds:
            assert fuzzer.hostile[(game, kind)] >= 3, (game, kind, fuzzer.hostile)
    assert fuzzer.rejected, "nothing was refused"
    long = [r.reason[:80] for r in fuzzer.rejected if len(r.reason) >= MAX_REASON]
    assert not long, long[:5]
    assert all(r.reason for r in fuzzer.rejected)
    complete = sum(fuzzer.hostile.values())
    assert len(fuzzer.rejected) > complete / 2, (len(fuzzer.rejected), complete)
    wait_until(lambda: "match" in ref.process.stderr(), 5, "the referee's log")
    log = ref.process.stderr()
    assert "aborted" not in log and "Traceback" not in log, log[-3000:]
    assert "rules raised" not in log, log[-3000:]
