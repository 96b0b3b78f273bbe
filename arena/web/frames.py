"""What the replay viewer and the live view draw: a match as frames of public facts.

Frame ``f`` is the position after ``f`` steps (frame 0: the game as it was created), as
``State.spectator_view`` shows it to a spectator: the rules live in the engine, the
browser only draws. A match's frames travel as

* ``keyframes``: the whole view of every ``keyframe_every``-th frame;
* ``deltas``: for every frame, what changed since the frame before (:func:`delta`);
* ``log``: for every frame, the seat that acted and the events its step caused, as a
  spectator sees them (``Game.public_event(event, None)``); a Risk battle carries the
  odds it had when it began (:class:`RiskOdds`).

so that showing any frame applies fewer than ``keyframe_every`` deltas to a keyframe.
A stored replay is re-simulated with the engine (:func:`from_replay`), whole or from a
keyframe on (its tail: what the page of a long replay shows first); a live match's
views come from the referee's spectator stream (:mod:`arena.web.live`), through the
same :func:`delta` and :class:`RiskOdds`.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator, Sequence
from itertools import compress
from operator import ne
from typing import Any

from arena.engine.match import MatchRecord

#: a keyframe every so many frames: a jump applies at most this many deltas less one
KEYFRAME_EVERY = 50
_MISSING = object()


def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed from view ``before`` to view ``after``: ``key: value`` for a new
    value; ``"~key": [[index, value], ...]`` for a list of the same length of which
    fewer than half the items changed; ``"-": [keys]`` for keys gone."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old == value:
            continue
        if type(value) is list and type(old) is list and len(old) == len(value):
            # the indices that differ, found in C (a view changes a few items a step)
            changed = list(compress(range(len(value)), map(ne, old, value)))  # type: ignore[arg-type]
            if 2 * len(changed) < len(value):
                out["~" + key] = [[i, value[i]] for i in changed]
                continue
        out[key] = value
    gone = [key for key in before if key not in after]
    if gone:
        out["-"] = gone
    return out


def apply_delta(view: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """``view`` changed by ``change`` (a new dict; what the browser does, for tests)."""
    out = {k: (v[:] if type(v) is list else v) for k, v in view.items()}
    for key, value in change.items():
        if key == "-":
            for gone in value:
                out.pop(gone, None)
        elif key.startswith("~"):
            for index, item in value:
                out[key[1:]][index] = item
        else:
            out[key] = value
    return out


class RiskOdds:
    """Adds to each Risk ``battle`` event the chance of capture it had when it began.

    The attack began at the last frame whose phase was ``attack`` (with the option
    ``defender-dice=choose`` its rolls take several steps, the armies changing on the
    way), so the armies come from that frame's view. When the attack's order is known
    (a replay's action: one roll, or on until ``until`` armies are left) the chance is
    that of the attack as ordered: ``stop`` is the armies it stops at (the armies it
    had: one roll). Live, the order is not public: ``stop`` is null and the chance is
    that of pressing on to the end (until one army is left). Either way the defender
    is taken to roll the most dice allowed, and the attack's own dice.
    """

    def __init__(self, most_cells: int | None = None) -> None:
        from arena.games.risk.odds import attack_odds

        self.armies: list[int] | None = None
        self.order: dict[str, Any] | None = None
        #: battles larger than this (armies x defenders) get no chance (None: any size)
        self.most_cells = most_cells
        self._attack_odds = attack_odds
        #: the chance by (armies, defenders, dice, stop): a long match asks for the same
        #: few battles thousands of times (the rolls of one attack, armies going down)
        self._known: dict[tuple[int, int, int, int], float | None] = {}

    def before_step(self, view: dict[str, Any], action: dict[str, Any] | None) -> None:
        """Called with the view before each step (and its action, when known)."""
        if view.get("phase") == "attack":
            self.armies = view["armies"]
            self.order = action if action is not None and action.get("type") == "attack" else None

    def ordered(self, armies: list[int], action: dict[str, Any]) -> None:
        """Called, instead of :meth:`before_step`, with the armies before each attack
        ordered in steps fast-forwarded without views (``from_replay(since=...)``): a
        battle's odds come from the last attack ordered, so they are the same."""
        self.armies, self.order = armies, action

    def annotate(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``events`` with the odds added to each battle (new dicts; the rest as given)."""
        out = []
        for event in events:
            if event.get("e") == "battle" and self.armies is not None:
                armies, defenders = self.armies[event["from"]], self.armies[event["to"]]
                stop = None
                if self.order is not None:
                    until = self.order.get("until")
                    stop = until if type(until) is int else armies
                odds = {
                    "armies": armies,
                    "defenders": defenders,
                    "stop": stop,
                    "capture": self._capture(armies, defenders, event["dice"], stop or 1),
                }
                event = {**event, "odds": odds}
            out.append(event)
        return out

    def _capture(self, armies: int, defenders: int, dice: int, stop: int) -> float | None:
        """The chance of capture; None for a battle too large to tabulate, or one the
        rules do not allow."""
        key = (armies, defenders, dice, stop)
        known = self._known.get(key, _MISSING)
        if known is not _MISSING:
            return known  # type: ignore[return-value]
        chance = None
        if self.most_cells is None or armies * defenders <= self.most_cells:
            with contextlib.suppress(ValueError):
                chance = self._attack_odds(armies, defenders, dice, stop)
        self._known[key] = chance
        return chance


def public_events(game: Any, events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for event in events if (e := game.public_event(event, None)) is not None]


#: how many paused_gc blocks are open, in every thread; the collector's state before
_pauses = 0
_collecting = False
_pausing = threading.Lock()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The garbage collector off meanwhile, for making a big tree of new lists and
    dicts without cycles (frames, a parsed replay): as the tree grows, the collector's
    passes over it find nothing and cost as much as the work itself, and it is walked
    once more before it is freed. The collector is process-wide: it comes back on (if
    it was on) when the last block open in any thread ends, not while another thread
    is still making its tree."""
    global _pauses, _collecting
    with _pausing:
        if _pauses == 0:
            _collecting = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pausing:
            _pauses -= 1
            if _pauses == 0 and _collecting:
                gc.enable()


def from_replay(
    record: MatchRecord, registry: Any, reveal: bool = False, since: int = 0
) -> dict[str, Any]:
    """The frames of a stored replay, re-simulated with the engine. ``reveal``: every
    fact (hidden ranks, hands) and every event whole: only for a match that has ended.

    ``since``: only the frames from ``first``, ``since`` rounded down to a keyframe, on
    (the doc's ``first``; 0: every frame). The steps before are fast-forwarded with
    ``simulate``, making no view, event or odds; from ``first`` on the frames are those
    of the whole build, byte for byte: ``keyframes[0]`` is frame ``first``,
    ``deltas[0]`` is ``{}`` and ``log[0]`` the entry of step ``first``. ``frames``
    counts every frame of the match either way.

    Raises ValueError when the replay does not re-simulate under this Arena's rules, or
    for a ``since`` outside 0 to the number of steps. The garbage collector is off
    meanwhile (:func:`paused_gc`).
    """
    first = first_frame(since, len(record.steps))
    with paused_gc():
        return _from_replay(record, registry, reveal, first)


def first_frame(since: int, steps: int) -> int:
    """The frame a build asked for from step ``since`` starts at: the keyframe at or
    before it. Raises ValueError for a ``since`` outside 0 to ``steps``."""
    if not 0 <= since <= steps:
        raise ValueError(f"since {since}: the replay has steps 0 to {steps}")
    return since // KEYFRAME_EVERY * KEYFRAME_EVERY


def _replay_error(index: int, exc: Exception) -> ValueError:
    return ValueError(
        f"step {index} does not replay under this arena's rules ({exc}): try `arena replay verify`"
    )


def _from_replay(record: MatchRecord, registry: Any, reveal: bool, first: int) -> dict[str, Any]:
    from arena.engine.core import IllegalAction

    game = registry.game(record.game)
    variants = registry.resolve_variants(record.game, record.variants)
    recorded = game.rules_version if record.rules is None else record.rules.get(game.name, 1)
    if recorded != game.rules_version:
        # its chance came from another generator: the same actions give other dice
        raise ValueError(
            f"the replay was recorded under version {recorded} of the {game.name} rules and "
            f"this arena plays version {game.rules_version}: it does not replay here"
        )
    state = game.start_state(
        record.num_players, record.seed, record.options, variants, record.deal_seed
    )
    public = game.public_event
    odds = RiskOdds() if record.game == "risk" else None
    steps = record.steps
    # the steps before the tail: the state alone (a battle's odds need only the orders)
    for index, (seat, action, _events) in enumerate(steps[:first], start=1):
        try:
            if action.get("type") == "forfeit":
                state.forfeit(seat)
            else:
                if odds is not None and action.get("type") == "attack":
                    odds.ordered(state.armies[:], action)
                state.simulate(seat, action)
        except (IllegalAction, KeyError, TypeError, ValueError) as exc:
            raise _replay_error(index, exc) from None
    # the game's faster way to follow the view, if it has one (the same frames)
    tracker = state.spectator_tracker(reveal)
    view = tracker.view if tracker is not None else state.spectator_view(reveal)
    if first == 0:
        seat, events = None, record.initial_events
    else:
        seat, _action, events = steps[first - 1]
    shown = list(events) if reveal else public_events(game, events)
    keyframes, deltas, log = [view], [{}], [[seat, odds.annotate(shown) if odds else shown]]
    # some 30,000 steps in a long match: what each step calls is looked up once here
    add_delta, add_log = deltas.append, log.append
    annotate = odds.annotate if odds is not None else None
    for index, (seat, action, events) in enumerate(steps[first:], start=first + 1):
        if odds is not None:
            odds.before_step(view, action)
        try:
            if action.get("type") == "forfeit":
                state.forfeit(seat)
            else:  # the events shown are the replay's: the engine need not make them
                state.simulate(seat, action)
        except (IllegalAction, KeyError, TypeError, ValueError) as exc:
            raise _replay_error(index, exc) from None
        if tracker is not None:
            add_delta(tracker.changes())
            after = tracker.view
        else:
            after = state.spectator_view(reveal)
            add_delta(delta(view, after))
        if index % KEYFRAME_EVERY == 0:
            keyframes.append(after)
        if reveal:
            seen = list(events)
        else:
            seen = [e for event in events if (e := public(event, None)) is not None]
        add_log([seat, annotate(seen) if annotate is not None else seen])
        view = after
    return {
        "game": record.game,
        "players": list(record.players),
        "reveal": reveal,
        "keyframe_every": KEYFRAME_EVERY,
        "first": first,
        "frames": len(steps) + 1,
        "keyframes": keyframes,
        "deltas": deltas,
        "log": log,
        "final": view,
        "board": board(state),
        "result": record.result.to_json() if record.result else None,
    }


def board(state: Any) -> dict[str, Any]:
    """What the viewer needs to name things: Risk's territories, continents and owners
    (the seats, then passive owners such as the neutral); nothing for Stratego."""
    game_map = getattr(state, "map", None)
    if game_map is None:
        return {}
    return {
        "map": game_map.name,
        "territories": list(game_map.territories),
        "continents": [
            {"name": name, "bonus": bonus, "territories": list(members)}
            for name, bonus, members in zip(
                game_map.continents,
                game_map.continent_bonus,
                game_map.continent_members,
                strict=True,
            )
        ],
        "passive_owners": list(state.config.passive_owners),
    }
