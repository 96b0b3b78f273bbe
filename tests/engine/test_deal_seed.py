"""The split of a match's chance: a deal seed for the public start, the match's own seed
for everything hidden or still to come (``Game.new_state``'s ``deal_seed``).

Two matches with one deal seed and their own seeds start from the same public position
and share nothing else: not the missions, the draw pile, the dice, the fallback setups.
A game that takes no deal seed still plays (it then shares nothing), and a replay
records the deal seed and verifies from both.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from arena.engine import play_match, replay
from arena.engine.core import Game, State
from arena.plugins import load_registry

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")
STRATEGO = REGISTRY.game("stratego")
DEAL = 8_000_000_000_000_000_001
SEEDS = (11, 12, 13, 14)


def risk(seed: int, deal_seed: int | None, variants: Sequence[str] = (), **options: str) -> Any:
    chosen = REGISTRY.resolve_variants("risk", list(variants))
    return RISK.start_state(
        len(SEEDS) if "neutral" not in variants else 2, seed, options, chosen, deal_seed
    )


def setup_done(state: Any) -> Any:
    """Play the setup's decisions with the default actions, up to the first turn."""
    while state.round == 0 and not state.terminal:
        state.apply(state.current_player, state.default_action())
    return state


def secrets_of(state: Any) -> dict[str, Any]:
    """What no seat sees at the first turn: the draw pile's order, the missions, and the
    dice still to come."""
    rng = state.clone().rng
    return {
        "draw pile": state.draw_pile[:],
        "missions": state.variant_data.get("missions", {}).get("assigned"),
        "dice": [rng.randrange(6) for _ in range(40)],
    }


@pytest.mark.parametrize(
    ("variants", "options"),
    [((), {"setup": "deal"}), (("missions",), {}), (("capital",), {}), (("neutral",), {})],
)
def test_one_deal_seed_deals_the_same_board_and_nothing_else(variants, options):
    states = [risk(seed, DEAL, variants, **options) for seed in SEEDS]
    deals = {json.dumps(s.initial_events) for s in states}
    assert len(deals) == 1, "the rotations of a deal start from one board"
    assert any(e["e"] == "deal" for e in states[0].initial_events)
    owners = {tuple(s.owner) for s in states}
    assert len(owners) == 1 and -1 not in owners.pop()
    hidden = [secrets_of(setup_done(s)) for s in states]
    for name in ("draw pile", "dice") + (("missions",) if "missions" in variants else ()):
        values = [json.dumps(h[name]) for h in hidden]
        assert len(set(values)) == len(values), f"two rotations share their {name}"
    # another deal seed deals another board
    assert json.dumps(risk(SEEDS[0], DEAL + 1, variants, **options).initial_events) not in deals


def test_without_a_deal_seed_the_deal_comes_from_the_match_seed_apart_from_its_secrets():
    a, b = risk(5, None, setup="deal"), risk(5, 5, setup="deal")
    assert a.initial_events == b.initial_events  # None: the same as the seed
    assert a.draw_pile == b.draw_pile
    # the deal and the secrets are different streams of the one seed
    c = risk(5, 6, setup="deal")
    assert c.initial_events != a.initial_events and c.draw_pile == a.draw_pile


def test_a_claim_game_shares_nothing_and_the_deal_is_gone_after_the_setup():
    states = [risk(seed, DEAL) for seed in SEEDS]  # claim: nothing dealt
    assert all(s.initial_events == [] for s in states)
    assert len({tuple(s.draw_pile) for s in states}) == len(SEEDS)
    with pytest.raises(RuntimeError, match="the deal is over"):
        states[0].deal_rng.random()
    with pytest.raises(RuntimeError, match="the deal is over"):
        states[0].clone().deal_rng.random()


def test_stratego_shares_nothing_its_fallback_setups_come_from_the_match_seed():
    setups = []
    for seed in SEEDS:
        state = STRATEGO.start_state(2, seed, {}, [], DEAL)
        setups.append(json.dumps(state.default_action()))
        assert state.default_action() == json.loads(setups[-1])  # the same when asked again
    assert len(set(setups)) == len(setups)
    again = STRATEGO.start_state(2, SEEDS[0], {}, [], DEAL + 7)
    assert json.dumps(again.default_action()) == setups[0]  # the deal seed plays no part


@dataclasses.dataclass(frozen=True)
class OldGame(Game):
    """A third-party game written before deal seeds: its new_state takes none."""

    name: str = "old"
    description: str = "Risk as a game that predates deal seeds"
    min_players: int = 3
    max_players: int = 6

    def new_state(  # type: ignore[override]
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, str] | None = None,
        variants: Sequence[Any] = (),
    ) -> State:
        return RISK.new_state(num_players, seed, {"setup": "deal"}, variants)


def test_a_game_that_takes_no_deal_seed_plays_and_shares_nothing():
    game = OldGame()
    with pytest.raises(TypeError):
        game.new_state(3, 1, {}, [], deal_seed=DEAL)  # type: ignore[call-arg]
    deals = {json.dumps(game.start_state(3, seed, {}, [], DEAL).initial_events) for seed in SEEDS}
    assert len(deals) == len(SEEDS)  # each seed deals its own board: nothing shared


def test_a_replay_records_the_deal_seed_and_verifies_from_both():
    players = [REGISTRY.bot("risk", "blitz").factory(s, 40 + s) for s in range(3)]
    rec = play_match(RISK, players, 17, {"setup": "deal", "turn-limit": "4"}, deal_seed=DEAL)
    data = replay.to_json(rec)
    assert data["seed"] == 17 and data["deal_seed"] == DEAL
    assert list(data)[:5] == ["format", "version", "game", "num_players", "seed"]
    loaded = replay.from_json(json.loads(json.dumps(data)))
    assert loaded.deal_seed == DEAL and replay.verify(loaded) == len(rec.steps)
    with pytest.raises(replay.ReplayMismatch, match="setup: event 0"):
        replay.verify(dataclasses.replace(loaded, deal_seed=None))  # another board
    without = replay.to_json(dataclasses.replace(rec, deal_seed=None))
    assert "deal_seed" not in without  # the format as before: the same as the seed
    for bad in ("7", 1.5, True):
        with pytest.raises(ValueError, match="'deal_seed' must be an integer"):
            replay.from_json({**data, "deal_seed": bad})
