"""Full Risk states rebuilt from one player's observation: determinization.

A search needs whole states to play forward, but a bot knows only its observation. The
observation shows the board, its own hand and mission, the discard pile and every
count (hand sizes, the draw pile's size); what it does not show is sampled here, each
time afresh, consistently with those counts:

- the other players' cards and the draw pile's order: the cards neither in the bot's
  hand nor in the discard pile, shuffled and dealt by the public hand sizes;
- the other players' secret missions: drawn from the mission deck without the bot's
  own (a "destroy" mission whose colour is its holder's own, or already destroyed,
  becomes "occupy 24 territories", as the variant's rules make it), and redrawn while a
  sampled mission would already be complete (the game would have ended);
- the dice: a fresh generator for every sample.

What the observation does not say of the rules is taken from what it shows: missions,
capital and the neutral from their observation fields, fixed or no cards from what the
bot has seen so far (see :class:`RulesGuess`). Nothing here reads a true state: the
only input is the observation dict a bot receives.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from arena.games.risk import cards as cardlib
from arena.games.risk.map import load_map
from arena.games.risk.state import ATTACK, PHASE_NAMES, TRADE, RiskState
from arena.games.risk.variants import missions as missionlib
from arena.plugins import Registry, load_registry

#: phases in which a state is rebuilt (the bot searches only during its own turn)
SEARCHED_PHASES = ("reinforce", "attack", "move_in", "fortify")
#: tries to draw other players' missions that are not already complete
MISSION_TRIES = 20


@cache
def registry() -> Registry:
    """The plugins' registry, loaded once (loading it asks every plugin: milliseconds)."""
    return load_registry()


@dataclass
class RulesGuess:
    """The rule options a bot cannot read from one observation, inferred as it plays.

    ``cards``: ``fixed`` once a trade decision values the next set at 0 (fixed values
    depend on the cards), ``none`` once two rounds have passed without a card leaving
    the draw pile, ``progressive`` until then. The turn limit is unknown: searched games
    run a round or two ahead, so none is assumed; the defender's dice are assumed
    automatic (the most allowed), the best defence almost always.
    """

    cards: str = "progressive"
    #: extra armies of the +2 card bonus already placed this turn: (turn, armies)
    bonus_used: tuple[int, int] = (0, 0)

    def observe(self, obs: dict[str, Any], decision: Any) -> None:
        if decision.kind == "trade" and decision.options["next_set_value"] == 0:
            self.cards = "fixed"
        elif (
            self.cards == "progressive"
            and obs["round"] >= 3
            and obs["draw_pile_size"] == cardlib.deck_size(load_map(obs["map"]))
            and not obs["discard"]
            and not any(obs["hand_sizes"])
        ):
            self.cards = "none"

    def bonus_this_turn(self, turn: int) -> int:
        return self.bonus_used[1] if self.bonus_used[0] == turn else 0


def variants_of(obs: dict[str, Any]) -> list[str]:
    """The variants an observation shows: each adds fields of its own."""
    if "mission" in obs:
        return ["missions"]
    if "headquarters" in obs:
        return ["capital"]
    if obs["num_owners"] > obs["num_players"]:
        return ["neutral"]
    return []


def options_of(obs: dict[str, Any], rules: RulesGuess) -> dict[str, str]:
    options = {"map": obs["map"], "cards": rules.cards, "turn-limit": "0"}
    variants = variants_of(obs)
    if "neutral" not in variants:
        options["setup"] = "deal"  # what missions and capital require; never played out
    if "capital" in variants and obs["headquarters_needed"] < obs["num_players"] - 1:
        options["short-capital"] = "on"
    return options


@dataclass
class Determinizer:
    """Samples full states consistent with ``obs`` (one of the bot's own turn phases).

    ``template`` holds everything public once, with the hidden cards dealt in card
    order by the public hand sizes (a fixed stand-in: what is read of it is the counts);
    :meth:`sample` clones it and deals the hidden facts anew from ``rng``.
    """

    obs: dict[str, Any]
    rules: RulesGuess
    must_trade: bool = False
    template: RiskState = field(init=False)
    unknown_cards: list[int] = field(init=False)

    def __post_init__(self) -> None:
        obs = self.obs
        game = registry().game("risk")
        variants = [registry().variant("risk", v) for v in variants_of(obs)]
        n = obs["num_players"]
        state = game.new_state(n, 0, options_of(obs, self.rules), variants)
        self.template = state
        self._fill_public(state)
        deck = cardlib.deck_size(state.map)
        known = set(obs["hand"]) | set(obs["discard"])
        self.unknown_cards = [c for c in range(deck) if c not in known]
        self._deal(state, self.unknown_cards)

    def _fill_public(self, st: RiskState) -> None:
        obs = self.obs
        me = obs["seat"]
        n = obs["num_players"]
        st.owner[:] = obs["owner"]
        st.armies[:] = obs["armies"]
        counts = [0] * st.num_owners
        for o in st.owner:
            if o >= 0:
                counts[o] += 1
        st.territory_count = counts
        st.alive = list(obs["alive"])
        st.passive = list(obs["passive"])
        st.eliminated = list(obs["eliminated"])
        st.forfeited = [s for s in range(n) if obs["passive"][s]]
        st.exits = st.eliminated + [s for s in st.forfeited if s not in st.eliminated]
        st.hands = [[] for _ in range(st.num_owners)]
        st.hands[me] = list(obs["hand"])
        st.discard = list(obs["discard"])
        st.sets_traded = obs["sets_traded"]
        st.turn = obs["turn"]
        st.round = obs["round"]
        st.player = obs["current_player"]
        st.turn_seat = obs["current_player"]
        st.phase = PHASE_NAMES.index(obs["phase"])
        st._setup_left = list(obs["setup_armies_left"])
        st._reinforce_left = obs["reinforcements_left"]
        st._reinforce_then = ATTACK
        st._conquered = obs["conquered_this_turn"]
        st._bonus_used = self.rules.bonus_this_turn(obs["turn"])
        # a trade phase after a conquest is the trade-down of an elimination
        st._trade_down = st.phase == TRADE and obs["conquered_this_turn"]
        st._forced_trade = self.must_trade and not st._trade_down
        move_in = obs.get("move_in")
        st._move_in = (
            None
            if move_in is None
            else (move_in["from"], move_in["to"], move_in["min"], move_in["max"])
        )
        st._attack = None
        st._custom = None
        st._result = None
        st.variant_data = {}
        st.untradable = set()
        if "headquarters" in obs:
            hq = list(obs["headquarters"])
            st.variant_data["capital"] = {"hq": hq, "revealed": None not in hq}
            if None not in hq:
                st.untradable = set(hq)
        if "mission" in obs:
            assigned = [obs["mission"]["id"]] * n  # the others' are drawn in sample()
            st.variant_data["missions"] = missionlib.match_data(assigned, [])

    def sample(self, rng: random.Random) -> RiskState:
        """One full state: the template with the hidden facts drawn from ``rng``."""
        st = self.template.clone()
        st.rng = random.Random(rng.getrandbits(64))
        pool = self.unknown_cards[:]
        rng.shuffle(pool)
        self._deal(st, pool)
        if "missions" in st.variant_data:
            self._draw_missions(st, rng)
        return st

    def _deal(self, st: RiskState, pool: list[int]) -> None:
        """The other hands from ``pool`` by the public hand sizes; the rest is the draw
        pile (drawn from its end)."""
        me = self.obs["seat"]
        at = 0
        for owner, size in enumerate(self.obs["hand_sizes"]):
            if owner != me:
                st.hands[owner] = pool[at : at + size]
                at += size
        st.draw_pile = pool[at:]

    def _draw_missions(self, st: RiskState, rng: random.Random) -> None:
        obs = self.obs
        me = obs["seat"]
        n = obs["num_players"]
        colours = missionlib.COLOURS
        mine = obs["mission"]["id"]
        deck = [m.id for m in missionlib.deck_for("standard", n) if m.id != mine]
        others = [s for s in range(n) if s != me]
        assigned = st.variant_data["missions"]["assigned"]
        for _ in range(MISSION_TRIES):
            drawn = rng.sample(deck, len(others))
            for seat, mission_id in zip(others, drawn, strict=True):
                target = missionlib.BY_ID[mission_id].destroy
                if target and (target == colours[seat] or not obs["alive"][colours.index(target)]):
                    mission_id = missionlib.OCCUPY_24.id
                assigned[seat] = mission_id
            if not any(
                st.alive[s]
                and not st.passive[s]
                and missionlib.completed(st, s, missionlib.BY_ID[assigned[s]], {})
                for s in others
            ):
                return
