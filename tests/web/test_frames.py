"""The viewer's frames (arena.web.frames) against the engine: rebuilt from keyframes and
deltas, every frame is the engine's spectator view at that step; the bytes sent for a
spectator hold only what every seat may know at that step; a Risk battle's odds are
those it had when it began."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from arena.engine import play_match
from arena.engine.match import MatchRecord
from arena.games.risk.odds import attack_odds
from arena.plugins import load_registry
from arena.web import frames

from .conftest import replay_states

REGISTRY = load_registry()

#: (game, bots, options, variants): Risk with cards, each Risk variant, odd options,
#: and Stratego under two rule sets
MATCHES = {
    "risk-cards": ("risk", ["random", "aggressive", "blitz"], {"turn-limit": "40"}, []),
    "risk-missions": ("risk", ["aggressive", "defensive", "blitz", "random"], {}, ["missions"]),
    "risk-capital": ("risk", ["aggressive", "blitz", "defensive", "random"], {}, ["capital"]),
    "risk-neutral": ("risk", ["aggressive", "blitz"], {}, ["neutral"]),
    "risk-faces-choose": (
        "risk",
        ["blitz", "aggressive", "defensive"],
        {"dice": "faces", "defender-dice": "choose", "turn-limit": "25"},
        [],
    ),
    "stratego": ("stratego", ["heuristic", "random"], {}, []),
    "stratego-isf": ("stratego", ["random", "heuristic"], {}, ["isf"]),
}


def play(name: str, seed: int = 8_746_219_305_117) -> MatchRecord:
    game_name, bots, options, variant_names = MATCHES[name]
    game = REGISTRY.game(game_name)
    variants = REGISTRY.resolve_variants(game_name, variant_names)
    players = [REGISTRY.bot(game_name, b).factory(s, seed + s) for s, b in enumerate(bots)]
    return play_match(game, players, seed, options, variants, names=bots)


@pytest.fixture(scope="module", params=sorted(MATCHES))
def played(request: pytest.FixtureRequest) -> tuple[str, MatchRecord]:
    return request.param, play(request.param)


def states(record: MatchRecord) -> list[Any]:
    """The engine's state after each step (frame i: after i steps), as clones."""
    return replay_states(record)


def view_at(doc: dict[str, Any], index: int) -> dict[str, Any]:
    """Frame ``index`` as the browser builds it: its keyframe, then the deltas after."""
    every = doc["keyframe_every"]
    view = doc["keyframes"][index // every]
    for i in range(index // every * every + 1, index + 1):
        view = frames.apply_delta(view, doc["deltas"][i])
    return view


def test_every_frame_is_the_engines_spectator_view(played):
    _name, record = played
    doc = orjson.loads(orjson.dumps(frames.from_replay(record, REGISTRY)))
    truth = states(record)
    assert doc["frames"] == len(record.steps) + 1 == len(doc["deltas"]) == len(doc["log"])
    for index, state in enumerate(truth):
        assert view_at(doc, index) == json.loads(json.dumps(state.spectator_view())), index
    assert doc["final"] == view_at(doc, len(truth) - 1)
    # the log holds each step's events as a spectator gets them, and its seat
    game = REGISTRY.game(record.game)
    for (seat, _action, events), (shown_seat, shown) in zip(
        record.steps, doc["log"][1:], strict=True
    ):
        assert shown_seat == seat
        public = [e for e in events if game.public_event(e, None) is not None]
        assert [{k: v for k, v in e.items() if k != "odds"} for e in shown] == [
            game.public_event(e, None) for e in public
        ]


def test_a_spectator_frame_holds_only_what_every_seat_may_know(played):
    """Each frame's view against the engine's observations of every seat at that step:
    what the view shows, every seat was shown."""
    name, record = played
    raw = orjson.dumps(frames.from_replay(record, REGISTRY))
    doc = orjson.loads(raw)
    for index, state in enumerate(states(record)):
        view = view_at(doc, index)
        seen = [state.observation(seat) for seat in range(record.num_players)]
        if record.game == "stratego":
            for square, cell in enumerate(view["board"]):
                if cell is None:
                    continue
                for obs in seen:
                    known = obs["board"][square]
                    assert known is not None and known["owner"] == cell[0], (index, square)
                    if cell[1] is not None:  # a rank shown: every seat sees that rank
                        assert known["rank"] == cell[1], (index, square)
            assert view["captured"] == seen[0]["captured"] == seen[1]["captured"]
        else:
            for obs in seen:
                assert view["owner"] == obs["owner"] and view["armies"] == obs["armies"]
                assert view["cards"] == obs["hand_sizes"]
            assert "hands" not in view
            if "headquarters" in view:  # only once every seat sees every pick
                assert all(obs["headquarters"] == view["headquarters"] for obs in seen)
            assert ("missions" in view) == state.terminal or "missions" not in name
    # and in the bytes: no hand, no card drawn, no private event, no seed
    text = raw.decode()
    assert '"hands"' not in text and '"mission_changed"' not in text
    assert str(record.seed) not in text
    for _seat, events in doc["log"]:
        for event in events:
            assert not (event["e"] == "draw" and "card" in event)
            assert "private" not in event


def test_revealing_shows_every_rank_and_every_hand(played):
    """``reveal`` (only for a match that has ended): the whole position."""
    _name, record = played
    doc = frames.from_replay(record, REGISTRY, reveal=True)
    state = states(record)[-1]
    final = doc["final"]
    if record.game == "stratego":
        from arena.games.stratego.pieces import NAMES

        ranks = [None if o < 0 else NAMES[r] for o, r in zip(state.owner, state.rank, strict=True)]
        assert [cell and cell[1] for cell in final["board"]] == ranks
    else:
        assert final["hands"] == [sorted(h) for h in state.hands]


def test_a_battle_carries_the_odds_it_had_when_it_began():
    record = play("risk-faces-choose")
    doc = frames.from_replay(record, REGISTRY)
    truth = states(record)
    checked = 0
    begun: dict[str, Any] | None = None
    for index, ((_seat, action, _events), (_s, shown)) in enumerate(
        zip(record.steps, doc["log"][1:], strict=True)
    ):
        before = truth[index]
        if action["type"] == "attack":  # the armies as the attack begins, and its order
            src, dst = before.map.territory(action["from"]), before.map.territory(action["to"])
            begun = {"armies": before.armies[src], "defenders": before.armies[dst], **action}
        for event in shown:
            if event["e"] != "battle":
                continue
            assert begun is not None
            odds = event["odds"]
            armies, defenders = begun["armies"], begun["defenders"]
            stop = begun.get("until") or armies
            assert (odds["armies"], odds["defenders"], odds["stop"]) == (armies, defenders, stop)
            expected = attack_odds(armies, defenders, event["dice"], stop)
            assert odds["capture"] == pytest.approx(expected, abs=1e-6)
            checked += 1
    assert checked > 20


#: the matches longer than a keyframe's interval: those a tail can start within
#: ("stratego" ends after some 20 steps; "stratego-isf" plays on to 76)
TAILED = [name for name in sorted(MATCHES) if name != "stratego"]


@pytest.mark.parametrize("reveal", [False, True])
@pytest.mark.parametrize("name", TAILED)
def test_a_tail_is_the_whole_frames_from_its_first_keyframe_on(name, reveal):
    """``from_replay(since=N)`` fast-forwards to the keyframe at or before N and builds
    from there: its keyframes, deltas, log (a battle's odds too) and end are the whole
    build's from that frame on, byte for byte; ``frames`` still counts every frame. The
    tails tried: a third of the way, the last step (rounded down), the end, and (Risk
    with defender-dice=choose) frames in the middle of an attack, whose odds come from
    the armies before the tail."""
    record = play(name)
    whole = frames.from_replay(record, REGISTRY, reveal)
    every = whole["keyframe_every"]
    steps = len(record.steps)
    assert whole["first"] == 0
    tried = {steps // 3, steps - 1, steps}
    if name == "risk-faces-choose":
        defending = [k * every for k, v in enumerate(whole["keyframes"]) if v["phase"] == "defend"]
        assert defending
        tried.update(defending[:2])
    assert any(since >= every for since in tried), "the replay is too short to have a tail"
    for since in sorted(tried):
        tail = frames.from_replay(record, REGISTRY, reveal, since)
        first = since // every * every
        assert tail["first"] == first
        assert tail["frames"] == whole["frames"] == steps + 1
        assert len(tail["deltas"]) == len(tail["log"]) == steps + 1 - first
        assert tail["deltas"][0] == {}
        same = orjson.dumps
        assert same(tail["keyframes"]) == same(whole["keyframes"][first // every :]), since
        assert same(tail["deltas"][1:]) == same(whole["deltas"][first + 1 :]), since
        assert same(tail["log"]) == same(whole["log"][first:]), since
        for key in ("game", "players", "reveal", "final", "board", "result"):
            assert same(tail[key]) == same(whole[key]), (since, key)
    if record.game == "risk":  # the odds are there to compare (not all null)
        odds = [
            e["odds"] for _s, events in whole["log"][steps // 3 :] for e in events if "odds" in e
        ]
        assert odds and any(o["capture"] is not None for o in odds)


@pytest.mark.parametrize("since", [-1, -50, 10**6])
def test_a_tail_outside_the_replay_is_refused(since):
    record = play("stratego-isf")
    with pytest.raises(ValueError, match=f"since {since}: the replay has steps 0 to "):
        frames.from_replay(record, REGISTRY, since=since)
    with pytest.raises(ValueError, match="the replay has steps 0 to"):
        frames.from_replay(record, REGISTRY, since=len(record.steps) + 1)


def test_a_delta_names_only_what_changed():
    before = {"a": 1, "owner": [0, 1, 2, 3], "gone": True, "board": [None, [0, "spy"]]}
    after = {"a": 1, "owner": [0, 1, 5, 3], "board": [[1, None], None], "new": [1]}
    change = frames.delta(before, after)
    assert change == {"~owner": [[2, 5]], "board": [[1, None], None], "new": [1], "-": ["gone"]}
    assert frames.apply_delta(before, change) == after
    assert before["owner"] == [0, 1, 2, 3]  # applying copies


@pytest.mark.parametrize("name", [n for n in sorted(MATCHES) if MATCHES[n][0] == "risk"])
def test_the_risk_tracker_gives_the_deltas_of_whole_views(name):
    """The faster path from_replay takes for Risk (``RiskState.spectator_tracker``): at
    every step of a whole game (claims, battles, trades, a seat forfeited on the way),
    its view is ``spectator_view``'s and its changes are ``delta``'s, key order and
    all; the views it gave before stay as they were. A variant with a spectator view
    of its own (missions, capital) gets none: the whole view is compared."""
    record = play(name)
    game = REGISTRY.game("risk")
    variants = REGISTRY.resolve_variants("risk", record.variants)
    state = game.start_state(
        record.num_players, record.seed, record.options, variants, record.deal_seed
    )
    tracker = state.spectator_tracker()
    if state.hooks.spectator_view is not None:
        assert tracker is None and state.spectator_tracker(reveal=True) is None
        return
    assert tracker is not None and state.spectator_tracker(reveal=True) is None
    assert tracker.view == state.spectator_view()
    given: list[tuple[dict[str, Any], str]] = []
    forfeit_at = len(record.steps) // 2
    for index, (seat, action, _events) in enumerate(record.steps):
        if index == forfeit_at:  # the rest of the game is not the record's: play it out
            break
        before = state.spectator_view()
        state.apply(seat, action)
        after = state.spectator_view()
        change = tracker.changes()
        assert orjson.dumps(change) == orjson.dumps(frames.delta(before, after)), index
        assert orjson.dumps(tracker.view) == orjson.dumps(after), index
        given.append((tracker.view, orjson.dumps(tracker.view).decode()))
    before = state.spectator_view()
    state.forfeit(state.player)
    assert tracker.changes() == frames.delta(before, state.spectator_view())
    while state.result() is None:
        before = state.spectator_view()
        state.apply(state.player, state.default_action())
        assert tracker.changes() == frames.delta(before, state.spectator_view())
        assert tracker.view == state.spectator_view()
    assert all(orjson.dumps(view).decode() == text for view, text in given)


def test_the_collector_stays_off_until_the_last_pause_ends():
    """Two threads build at once: the first to finish must not turn the collector back
    on under the other, and it is on again once both have finished."""
    import gc
    import threading

    assert gc.isenabled()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with frames.paused_gc():
            first_in.set()
            second_in.wait()
        first_out.set()

    def second() -> None:
        first_in.wait()
        with frames.paused_gc():
            second_in.set()
            first_out.wait()
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [False]
    assert gc.isenabled()


def test_a_page_starts_from_a_tail_only_for_a_long_replay():
    """viewers.tail_start: every frame up to TAIL_STEPS steps; beyond, the keyframe at
    or before the last TAIL_LENGTH steps (fewer than a keyframe's interval more)."""
    from arena.web.viewers import TAIL_LENGTH, TAIL_STEPS, tail_start

    every = frames.KEYFRAME_EVERY
    assert all(tail_start(steps) == 0 for steps in range(TAIL_STEPS + 1))
    for steps in range(TAIL_STEPS + 1, 3 * TAIL_STEPS):
        first = tail_start(steps)
        assert first % every == 0 and 0 < first <= steps - TAIL_LENGTH < first + every, steps


def test_a_replay_of_older_game_rules_is_refused_with_why():
    """A Risk replay from before the secure chance: the same actions would give other dice,
    so the viewer says it does not replay here rather than draw another game."""
    from pathlib import Path

    from arena.engine.replay import load

    path = Path(__file__).resolve().parents[1] / "engine" / "data" / "risk-mersenne-twister.json.gz"
    with pytest.raises(ValueError, match="version 1 of the risk rules and this arena plays"):
        frames.from_replay(load(path), REGISTRY)
