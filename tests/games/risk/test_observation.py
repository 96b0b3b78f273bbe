"""Hidden information: an observation shows one's own hand, and of the others only counts.

Card ids are small ints, the same ones that name territories and count armies, so a
search for them in the JSON text proves nothing. The check is instead one of
non-interference on the SERIALIZED observation: rearrange everything a seat may not
know (the other players' hands and the draw pile, its order and its contents) while
keeping every public fact (hand sizes, pile size, the discard pile, the board), and
the seat's ``json.dumps(observation)`` must not change by a single byte. Any leak of a
hidden card id or of the pile's order, under any key, shows as a difference; the
checker is shown to catch leaky observations built on purpose.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from arena.games.risk.state import RiskState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")
BOTS = ("random", "aggressive", "blitz", "defensive")

Observe = Callable[[RiskState, int], dict[str, Any]]


def engine_observe(state: RiskState, seat: int) -> dict[str, Any]:
    return state.observation(seat)


def rearranged(state: RiskState, seat: int, shift: int) -> RiskState:
    """A copy in which every card hidden from ``seat`` has moved ``shift`` places along.

    The hidden cards (the other seats' hands, then the draw pile bottom to top) are
    rotated as one sequence and dealt back into the same slots, so every size stays.
    All hidden cards are different, so a rotation by less than their number moves
    every one of them to another slot.
    """
    other = state.clone()
    seats = [q for q in range(state.num_players) if q != seat]
    hidden = [c for q in seats for c in state.hands[q]] + state.draw_pile
    k = shift % len(hidden) if hidden else 0
    rotated = hidden[k:] + hidden[:k]
    pos = 0
    for q in seats:
        size = len(state.hands[q])
        other.hands[q] = rotated[pos : pos + size]
        pos += size
    other.draw_pile = rotated[pos:]
    assert pos + len(other.draw_pile) == len(hidden)
    return other


def hidden_count(state: RiskState, seat: int) -> int:
    return len(state.draw_pile) + sum(len(h) for q, h in enumerate(state.hands) if q != seat)


def check_observation(state: RiskState, seat: int, observe: Observe = engine_observe) -> None:
    """``seat``'s serialized observation shows its own hand and hides the rest."""
    text = json.dumps(observe(state, seat), sort_keys=True)
    data = json.loads(text)
    # The seat's own hand is there, exactly; the others only as counts.
    assert sorted(data["hand"]) == sorted(state.hands[seat])
    assert data["hand_sizes"] == [len(h) for h in state.hands]
    assert data["draw_pile_size"] == len(state.draw_pile)
    assert data["discard"] == state.discard  # public: traded cards are shown
    if hidden_count(state, seat) < 2:
        return
    for shift in (1, 2, hidden_count(state, seat) // 2):
        other = rearranged(state, seat, shift)
        assert other.hands[seat] == state.hands[seat]
        assert other.discard == state.discard
        leaked = json.dumps(observe(other, seat), sort_keys=True)
        assert leaked == text, (
            f"seat {seat}'s observation depends on hidden cards (shift {shift}): "
            f"{_first_diff(text, leaked)}"
        )


def _first_diff(a: str, b: str) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"...{a[max(0, i - 60) : i + 60]}... vs ...{b[max(0, i - 60) : i + 60]}..."


def play_and_check(seed: int, num_players: int, setup: str, every: int = 7) -> dict[str, int]:
    """Play a whole game, checking every seat's observation every ``every`` decisions."""
    names = [BOTS[(seed + s) % len(BOTS)] for s in range(num_players)]
    bots = [REGISTRY.bot("risk", n).factory(s, seed + s) for s, n in enumerate(names)]
    state = GAME.new_state(num_players, seed, {"setup": setup, "turn-limit": "200"})
    stats = {"checks": 0, "with_other_hands": 0, "with_discard": 0}
    step = 0
    while not state.terminal:
        if step % every == 0:
            for seat in range(num_players):
                check_observation(state, seat)
                stats["checks"] += 1
                stats["with_other_hands"] += any(
                    state.hands[q] for q in range(num_players) if q != seat
                )
                stats["with_discard"] += bool(state.discard)
        decision = state.decision()
        seat = decision.player
        state.apply(seat, bots[seat].decide(state.observation(seat), decision))
        step += 1
    for seat in range(num_players):
        check_observation(state, seat)
    return stats


@pytest.mark.parametrize("seed", range(8))
def test_observations_hide_other_hands_and_the_draw_pile(seed):
    stats = play_and_check(seed, 3 + seed % 4, ("claim", "deal")[seed % 2])
    # the sample really holds the situations that could leak
    assert stats["checks"] > 100
    assert stats["with_other_hands"] > 20
    assert stats["with_discard"] > 0


def test_own_hand_is_shown_by_card_id():
    state = GAME.new_state(4, 3, {"setup": "deal"})
    bots = [REGISTRY.bot("risk", "blitz").factory(s, s) for s in range(4)]
    while not all(state.hands[s] for s in range(4)) and not state.terminal:
        decision = state.decision()
        state.apply(
            decision.player,
            bots[decision.player].decide(state.observation(decision.player), decision),
        )
    assert all(state.hands[s] for s in range(4)), "every seat should hold cards by now"
    for seat in range(4):
        obs = json.loads(json.dumps(state.observation(seat)))
        assert obs["hand"] == sorted(state.hands[seat])
        assert obs["hand_sizes"][seat] == len(state.hands[seat])
        assert "draw_pile" not in obs and "hands" not in obs


# --- the checker catches leaks -----------------------------------------------------------------


def a_state_with_cards(seed: int = 2) -> RiskState:
    state = GAME.new_state(3, seed, {"setup": "deal"})
    bots = [REGISTRY.bot("risk", "blitz").factory(s, s) for s in range(3)]
    while not (state.hands[1] and state.hands[2] and state.discard) and not state.terminal:
        decision = state.decision()
        state.apply(
            decision.player,
            bots[decision.player].decide(state.observation(decision.player), decision),
        )
    assert state.hands[1] and state.hands[2] and state.discard
    return state


def leak_other_hands(state: RiskState, seat: int) -> dict[str, Any]:
    obs = state.observation(seat)
    obs["debug"] = {"hands": [sorted(h) for h in state.hands]}
    return obs


def leak_sum_of_another_hand(state: RiskState, seat: int) -> dict[str, Any]:
    obs = state.observation(seat)
    other = (seat + 1) % state.num_players
    obs["hand_sizes"] = [len(h) for h in state.hands]
    obs["threat"] = sum(state.hands[other])  # even a sum of another hand's ids leaks
    return obs


def leak_top_card(state: RiskState, seat: int) -> dict[str, Any]:
    obs = state.observation(seat)
    obs["next_card"] = state.draw_pile[-1]
    return obs


def leak_pile_contents(state: RiskState, seat: int) -> dict[str, Any]:
    obs = state.observation(seat)
    obs["pile"] = sorted(state.draw_pile)  # contents without order
    return obs


def leak_pile_order(state: RiskState, seat: int) -> dict[str, Any]:
    obs = state.observation(seat)
    pile = state.draw_pile
    obs["pile_parity"] = [c % 2 for c in pile]  # not the ids, but their order
    return obs


@pytest.mark.parametrize(
    "leaky",
    [
        leak_other_hands,
        leak_sum_of_another_hand,
        leak_top_card,
        leak_pile_contents,
        leak_pile_order,
    ],
)
def test_the_checker_catches_a_leaky_observation(leaky):
    state = a_state_with_cards()
    check_observation(state, 0)  # the engine's own observation passes
    with pytest.raises(AssertionError, match="depends on hidden cards"):
        check_observation(state, 0, leaky)


def test_the_checker_allows_public_and_own_information():
    """Leaking only what the seat may know does not trip the checker."""
    state = a_state_with_cards()

    def honest_extras(s: RiskState, seat: int) -> dict[str, Any]:
        obs = s.observation(seat)
        obs["my_cards_again"] = sorted(s.hands[seat])
        obs["discard_sum"] = sum(s.discard)
        obs["cards_out"] = sum(len(h) for h in s.hands)
        return obs

    check_observation(state, 0, honest_extras)


def test_rearranging_really_moves_hidden_cards():
    state = a_state_with_cards()
    other = rearranged(state, 0, 1)
    assert other.hands[0] == state.hands[0]
    assert other.hands[1] != state.hands[1] and other.hands[2] != state.hands[2]
    assert other.draw_pile != state.draw_pile
    assert [len(h) for h in other.hands] == [len(h) for h in state.hands]
    assert len(other.draw_pile) == len(state.draw_pile)
    everything = other.draw_pile + other.discard + [c for h in other.hands for c in h]
    assert sorted(everything) == list(range(44))
    # and the original is untouched
    assert rearranged(state, 0, 0).draw_pile == state.draw_pile


def test_random_rearrangements_never_show():
    """Beyond rotations: shuffling hidden cards at random keeps every observation."""
    rng = random.Random(7)
    state = a_state_with_cards(7)
    for seat in range(3):
        text = json.dumps(state.observation(seat))
        for _ in range(20):
            other = state.clone()
            seats = [q for q in range(3) if q != seat]
            hidden = [c for q in seats for c in state.hands[q]] + state.draw_pile
            rng.shuffle(hidden)
            for q in seats:
                n = len(state.hands[q])
                other.hands[q], hidden = hidden[:n], hidden[n:]
            other.draw_pile = hidden
            assert json.dumps(other.observation(seat)) == text
