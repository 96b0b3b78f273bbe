"""Classic Risk: the state of one game and its rules.

Territories, seats and cards are small ints internally; actions may name a territory
by name or by its index in the map. Every action is validated completely before the
state changes, so a refused action (``IllegalAction``) leaves the game untouched.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import ne
from typing import Any

from arena.engine.chance import SecureRandom
from arena.engine.core import (
    Action,
    ClonedRandom,
    Decision,
    EndReason,
    Event,
    IllegalAction,
    Result,
    State,
    check_kind,
    check_turn,
)
from arena.games.risk import cards as cardlib
from arena.games.risk.dice import CUMULATIVE, compare, outcome_code
from arena.games.risk.map import RiskMap

# Phases, in the order a turn goes through them.
CLAIM, SETUP_PLACE, TRADE, REINFORCE, ATTACK, MOVE_IN, FORTIFY, GAME_OVER, DEFEND, VARIANT = range(
    10
)
PHASE_NAMES = (
    "claim",
    "setup_place",
    "trade",
    "reinforce",
    "attack",
    "move_in",
    "fortify",
    "game_over",
    "defend",
    "variant",  # a decision a variant asked for; its kind is the variant's
)
#: the action types each phase accepts
PHASE_ACTIONS: tuple[tuple[str, ...], ...] = (
    ("claim",),
    ("place",),
    ("trade", "no_trade"),
    ("reinforce",),
    ("attack", "end_attack"),
    ("move_in",),
    ("fortify", "end_turn"),
    (),
    ("defend",),
    (),  # the variant's decision says which
)


@dataclass(frozen=True)
class RiskConfig:
    """The rule switches of one game (see ``RiskGame.option_specs``)."""

    num_players: int
    starting_armies: int
    setup: str = "claim"  # "claim" or "deal"
    cards: str = "progressive"  # "progressive" or "none" (no spoils)
    dice: str = "distribution"  # "distribution" (one draw per roll) or "faces"
    turn_limit: int = 500  # rounds; 0 means none
    defender_dice: str = "automatic"  # "automatic" (the most allowed) or "choose"
    #: board owners that are not players (a neutral army): owner ids num_players, ...
    passive_owners: tuple[str, ...] = ()


@dataclass(frozen=True)
class RiskHooks:
    """The per-match rule hooks, resolved once so a turn calls plain functions."""

    setup: Callable[..., Any]
    after_setup: Callable[..., list[bool]] | None
    reinforcement_bonus: Callable[..., list[list[tuple[str, int]]]] | None
    card_set_value: Callable[..., int | None]
    check_victory: Callable[..., Result | None] | None
    eliminated: Callable[..., Any] | None
    defence_chooser: Callable[..., int | None]
    observation: Callable[..., Any] | None
    game_over: Callable[..., Any] | None
    spectator_view: Callable[..., Any] | None = None
    #: the parts of an observation built alone (``observation_parts``): the board part
    #: unless a variant's observation hook may change its entries
    observation_parts: Mapping[str, Callable[..., dict[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class CustomDecision:
    """A decision a variant asks for (``RiskState.ask``): who, what, and its handlers."""

    player: int
    kind: str
    #: options(state): the legal options (computed from the state it is given, so that
    #: a clone answers for itself)
    options: Callable[[Any], dict[str, Any]]
    #: action type -> handler(state, action, events); validates, then changes the state
    handlers: dict[str, Callable[[Any, Action, list[Event]], None]]
    #: default(state): a safe legal action for a seat that timed out or forfeited
    default: Callable[[Any], Action]


class RiskState(ClonedRandom, State):
    """One game of Risk. Create it through ``RiskGame.new_state``."""

    __slots__ = (
        "_attack",
        "_bonus_used",
        "_conquered",
        "_custom",
        "_deal_rng",
        "_deal_seed",
        "_draw_cards",
        "_forced_trade",
        "_move_in",
        "_quiet",
        "_reinforce_left",
        "_reinforce_then",
        "_result",
        "_setup_left",
        "_trade_down",
        "alive",
        "armies",
        "config",
        "conquests",
        "discard",
        "draw_pile",
        "eliminated",
        "exits",
        "forfeited",
        "hands",
        "hooks",
        "initial_events",
        "map",
        "num_owners",
        "num_players",
        "options",
        "owner",
        "passive",
        "phase",
        "player",
        "round",
        "sets_traded",
        "territory_count",
        "turn",
        "turn_seat",
        "untradable",
        "variant_data",
    )

    def __init__(
        self,
        game_map: RiskMap,
        config: RiskConfig,
        hooks: RiskHooks,
        seed: int,
        deal_seed: int | None = None,
    ):
        n = config.num_players
        owners = n + len(config.passive_owners)
        self.map = game_map
        self.config = config
        self.hooks = hooks
        self.num_players = n
        #: players first (seats 0..n-1), then passive owners such as a neutral army
        self.num_owners = owners
        #: the secret chance: missions, the draw pile, every die (``rng``)
        self._rng = SecureRandom(seed, "match")
        self._rng_shared = False  # True while a clone may hold the same generator
        #: the public deal's chance (``deal_rng``), made if the setup draws from it
        self._deal_seed = seed if deal_seed is None else deal_seed
        self._deal_rng: SecureRandom | None = None
        self.owner = [-1] * game_map.size
        self.armies = [0] * game_map.size
        self.territory_count = [0] * owners
        #: owners that never take a turn: passive owners, and seats a referee forfeited
        self.passive = [False] * n + [True] * (owners - n)
        self.alive = [True] * n
        self.eliminated: list[int] = []
        #: seats removed by the referee, in order; they stay on the board, passive
        self.forfeited: list[int] = []
        #: seats out of the game (eliminated or forfeited), in the order they left
        self.exits: list[int] = []
        self.hands: list[list[int]] = [[] for _ in range(owners)]
        #: cards that may not be traded in sets (a variant's choice)
        self.untradable: set[int] = set()
        #: per-match data of variants, keyed by variant; copied by clone()
        self.variant_data: dict[str, Any] = {}
        #: every parsed option of the game and its variants, by name (read-only)
        self.options: dict[str, Any] = {}
        self.draw_pile: list[int] = []  # drawn from the end
        self.discard: list[int] = []
        self.sets_traded = 0
        self.turn = 0  # turns started, over all players
        self.turn_seat = -1  # whose turn it is (-1 during setup)
        self.round = 0  # 1 during the first round of turns
        self.player = 0
        self.phase = CLAIM
        self._draw_cards = config.cards != "none"
        self._setup_left = [config.starting_armies] * n
        self._reinforce_left = 0
        self._reinforce_then = ATTACK  # the phase after placing reinforcements
        self._conquered = False
        #: territories conquered so far in the game (an ownership changes only by one)
        self.conquests = 0
        self._bonus_used = 0
        self._forced_trade = False
        self._trade_down = False  # trading because an elimination brought 6+ cards
        self._move_in: tuple[int, int, int, int] | None = None  # from, to, min, max
        self._attack: dict[str, Any] | None = None  # an attack waiting for defence dice
        self._custom: CustomDecision | None = None
        self._result: Result | None = None
        #: True from a ``simulate`` to the next ``apply``: the frequent events are not made
        self._quiet = False
        self.initial_events: list[Event] = []

    # --- setup --------------------------------------------------------------------

    def start(self) -> list[Event]:
        """Lay out the game (the ``risk_setup`` hook); returns the setup events."""
        events: list[Event] = []
        self.hooks.setup(state=self, events=events)
        self._deal_seed = None  # the deal is over: nothing else may draw from it
        self._deal_rng = None
        return events

    @property
    def deal_rng(self) -> SecureRandom:
        """The generator of the public deal, for the ``risk_setup`` hook only: who holds
        which territory at the start (the deal, the neutral's piles), what every seat
        sees before the first decision. The rotations of a tournament's deal share its
        seed, so nothing private (missions, cards) may come from it: that is ``rng``'s."""
        if self._deal_rng is None:
            if self._deal_seed is None:
                raise RuntimeError("the deal is over: draw from the state's rng")
            self._deal_rng = SecureRandom(self._deal_seed, "deal")
        return self._deal_rng

    def setup_claim(self, events: list[Event]) -> None:
        """Claim setup: players claim free territories in turn, then place the rest."""
        self.shuffle_deck()
        self.phase = CLAIM
        self.player = 0

    def setup_deal(self, events: list[Event]) -> None:
        """Deal setup: the territory cards dealt round the table, one army on each."""
        territory_cards = list(range(self.map.size))
        self.deal_rng.shuffle(territory_cards)
        dealt: list[list[int]] = [[] for _ in range(self.num_players)]
        for i, t in enumerate(territory_cards):
            dealt[i % self.num_players].append(t)
        for seat, territories in enumerate(dealt):
            self.give(seat, territories, 1)
            self._setup_left[seat] -= len(territories)
            events.append({"e": "deal", "p": seat, "t": sorted(territories)})
        self.shuffle_deck()
        self.phase = SETUP_PLACE
        self.player = self._next_setup_seat(self.num_players - 1)
        if self.player < 0:
            self.finish_setup(events)

    def give(self, owner: int, territories: list[int], armies: int) -> None:
        """Set ``owner`` on unowned ``territories`` with ``armies`` each (setup only)."""
        for t in territories:
            self.owner[t] = owner
            self.armies[t] = armies
        self.territory_count[owner] += len(territories)

    def shuffle_deck(self) -> None:
        """Every card (territories and wilds) shuffled into the draw pile."""
        self.draw_pile = list(range(cardlib.deck_size(self.map)))
        self.rng.shuffle(self.draw_pile)

    def finish_setup(self, events: list[Event]) -> None:
        """Initial placement is over: variants may ask for more, then the first turn."""
        if self.hooks.after_setup is not None and any(
            self.hooks.after_setup(state=self, events=events)
        ):
            return  # a variant asked for decisions; it calls begin_first_turn() itself
        self.begin_first_turn(events)

    def begin_first_turn(self, events: list[Event]) -> None:
        self._custom = None
        self._begin_turn(0, events)

    def ask(self, decision: CustomDecision) -> None:
        """A variant asks a player for a decision of its own kind (handled by it)."""
        self._custom = decision
        self.phase = VARIANT
        self.player = decision.player

    def _next_setup_seat(self, after: int) -> int:
        for k in range(1, self.num_players + 1):
            seat = (after + k) % self.num_players
            if self._setup_left[seat] > 0:
                return seat
        return -1

    # --- State protocol -------------------------------------------------------------

    @property
    def terminal(self) -> bool:
        return self._result is not None

    @property
    def current_player(self) -> int:
        return self.player

    def result(self) -> Result | None:
        return self._result

    def decision(self) -> Decision:
        if self.phase == VARIANT:
            custom = self._custom
            assert custom is not None
            return Decision(custom.player, custom.kind, lambda: custom.options(self))
        return Decision(self.player, PHASE_NAMES[self.phase], self.legal_options)

    def apply(self, player: int, action: Action) -> list[Event]:
        events: list[Event] = []
        self.simulate(player, action, events)
        return events

    def simulate(self, player: int, action: Action, events: list[Event] | None = None) -> None:
        """As the base class says; ``events``: the list ``apply`` collects every event in
        (None: the frequent events are not made, until the next ``apply``)."""
        if events is None:
            self._quiet = True
            events = []  # for the rare events (an elimination, the game's end)
        else:
            self._quiet = False
        if self._result is not None or player != self.player or type(action) is not dict:
            check_turn(self._result is not None, self.player, player, action)  # raises
        turn_seat = self.turn_seat
        phase = self.phase
        conquests = self.conquests
        if phase == VARIANT:
            custom = self._custom
            assert custom is not None
            kind = check_kind(action, custom.handlers, f"the {custom.kind} decision")
            custom.handlers[kind](self, action, events)
            kind = ""  # a variant's own decision may change anything: the goal is checked
        else:
            kind = action.get("type")
            if type(kind) is not str or kind not in PHASE_ACTIONS[phase]:
                check_kind(action, PHASE_ACTIONS[phase], f"the {PHASE_NAMES[phase]} phase")
            _HANDLERS[kind](self, action, events)
        # A goal is checked where it can have been reached: after an action that placed
        # or moved armies, or conquered a territory (an elimination is a conquest); an
        # attack or a defence that conquered nothing, or the end of an attack or a turn,
        # only takes armies away (the risk_check_victory hook says so). Not while a
        # conquest awaits its move-in or a roll its defence: the board is between two
        # states then.
        if (
            self.hooks.check_victory is not None
            and self._result is None
            and (kind not in _GAINS_NOTHING or self.conquests != conquests)
            and self.phase != MOVE_IN
            and self.phase != DEFEND
        ):
            result = self.hooks.check_victory(self, turn_seat)
            if result is not None:
                self.finish(result, events)

    def clone(self) -> RiskState:
        other = RiskState.__new__(RiskState)
        other.map = self.map
        other.config = self.config
        other.hooks = self.hooks
        other.num_players = self.num_players
        other.num_owners = self.num_owners
        # the generator is shared until either state draws from it (copy on write)
        self.share_rng(other)
        other._deal_seed = None  # a clone is of a game that has started: no deal
        other._deal_rng = None
        other.owner = self.owner[:]
        other.armies = self.armies[:]
        other.territory_count = self.territory_count[:]
        other.alive = self.alive[:]
        other.passive = self.passive[:]
        other.untradable = set(self.untradable)
        other.options = self.options
        other.variant_data = copy.deepcopy(self.variant_data) if self.variant_data else {}
        other._custom = self._custom
        other._attack = None if self._attack is None else copy.deepcopy(self._attack)
        other.eliminated = self.eliminated[:]
        other.forfeited = self.forfeited[:]
        other.exits = self.exits[:]
        other.hands = list(map(list.copy, self.hands))
        other.draw_pile = self.draw_pile[:]
        other.discard = self.discard[:]
        other.sets_traded = self.sets_traded
        other.turn = self.turn
        other.turn_seat = self.turn_seat
        other.round = self.round
        other.player = self.player
        other.phase = self.phase
        other._draw_cards = self._draw_cards
        other._setup_left = self._setup_left[:]
        other._reinforce_left = self._reinforce_left
        other._reinforce_then = self._reinforce_then
        other._conquered = self._conquered
        other.conquests = self.conquests
        other._bonus_used = self._bonus_used
        other._forced_trade = self._forced_trade
        other._trade_down = self._trade_down
        other._move_in = self._move_in
        other._result = self._result
        other._quiet = False
        other.initial_events = self.initial_events
        return other

    # --- observation ------------------------------------------------------------------

    def observation(self, player: int) -> dict[str, Any]:
        """Public board and card facts, plus ``player``'s own hand. Nothing else."""
        game_map = self.map
        obs: dict[str, Any] = {
            "game": "risk",
            "seat": player,
            "num_players": self.num_players,
            "num_owners": self.num_owners,
            "passive": self.passive[:],
            "map": game_map.name,
            "phase": PHASE_NAMES[self.phase],
            "current_player": self.player,
            "turn": self.turn,
            "round": self.round,
            "owner": self.owner[:],
            "armies": self.armies[:],
            "alive": self.alive[:],
            "eliminated": self.eliminated[:],
            "hand": sorted(self.hands[player]),
            "hand_sizes": list(map(len, self.hands)),
            "discard": self.discard[:],
            "draw_pile_size": len(self.draw_pile),
            "sets_traded": self.sets_traded,
            "setup_armies_left": self._setup_left[:],
            "reinforcements_left": self._reinforce_left if player == self.player else 0,
            "conquered_this_turn": self._conquered,
        }
        if self.phase == MOVE_IN and self._move_in is not None:
            src, dst, lo, hi = self._move_in
            obs["move_in"] = {"from": src, "to": dst, "min": lo, "max": hi}
        elif self.phase == DEFEND and self._attack is not None:
            obs["attack"] = self._attack_view()
        if self.hooks.observation is not None:
            self.hooks.observation(self, player, obs)
        return obs

    def spectator_view(self, reveal: bool = False) -> dict[str, Any]:
        """The board, whose turn it is, and per owner (the seats, then passive owners)
        its territories, armies and number of cards (never which); the holder of each
        continent (-1: none). A variant adds its public facts (``risk_spectator_view``).
        With ``reveal`` (a match that has ended), every hand too."""
        owner, armies = self.owner, self.armies
        strength = [0] * self.num_owners
        for o, n in zip(owner, armies, strict=True):
            strength[o] += n  # an unowned territory (claim setup) has no armies: o -1 adds 0
        view: dict[str, Any] = {
            "phase": self._phase_name(),
            "player": self.player,
            "turn": self.turn,
            "round": self.round,
            "owner": owner[:],
            "armies": armies[:],
            "territories": self.territory_count[:],
            "strength": strength,
            "continents": self._holders(),
            "cards": list(map(len, self.hands)),
            "alive": self.alive[:],
            "passive": self.passive[:],
            "draw_pile": len(self.draw_pile),
            "sets_traded": self.sets_traded,
        }
        if reveal:
            view["hands"] = [sorted(hand) for hand in self.hands]
        if self.hooks.spectator_view is not None:
            self.hooks.spectator_view(state=self, view=view, reveal=reveal)
        return view

    def _phase_name(self) -> str:
        if self.phase == VARIANT and self._custom:
            return self._custom.kind
        return PHASE_NAMES[self.phase]

    def _holders(self) -> list[int]:
        """The owner of each whole continent, -1 where none holds all of it."""
        holders = []
        at = self.owner.__getitem__
        for members in self.map.continent_members:
            held = set(map(at, members))
            holders.append(held.pop() if len(held) == 1 else -1)
        return holders

    def spectator_tracker(self, reveal: bool = False) -> SpectatorTracker | None:
        """:class:`SpectatorTracker`; None with ``reveal`` or a variant's spectator view
        (the hands, or what the variant adds, are then compared whole)."""
        if reveal or self.hooks.spectator_view is not None:
            return None
        return SpectatorTracker(self)

    def observation_parts(self) -> Mapping[str, Callable[[RiskState, int], dict[str, Any]]]:
        return self.hooks.observation_parts

    # --- legal options ----------------------------------------------------------------

    def legal_options(self) -> dict[str, Any]:
        """The current decision's legal options, described for a bot author."""
        p = self.player
        phase = self.phase
        owner = self.owner
        if phase == CLAIM:
            return {"territories": [t for t, o in enumerate(owner) if o < 0]}
        if phase == SETUP_PLACE:
            return {"territories": self.owned(p), "armies_left": self._setup_left[p]}
        if phase == TRADE:
            sets = [list(s) for s in cardlib.sets_in(self.map, self.tradable(p))]
            return {
                "sets": sets,
                "values": [self._set_value(s) for s in sets],
                "must_trade": self._must_trade(),
                "next_set_value": self.next_set_value(),
            }
        if phase == REINFORCE:
            return {"armies": self._reinforce_left, "territories": self.owned(p)}
        if phase == ATTACK:
            armies = self.armies
            attacks = []
            for t in self.owned(p):
                a = armies[t]
                if a < 2:
                    continue
                for n in self.map.neighbours[t]:
                    if owner[n] != p:
                        attacks.append({"from": t, "to": n, "max_dice": min(3, a - 1)})
            return {"attacks": attacks, "can_end": True}
        if phase == MOVE_IN:
            src, dst, lo, hi = self._move_in  # type: ignore[misc]
            return {"from": src, "to": dst, "min": lo, "max": hi}
        if phase == FORTIFY:
            armies = self.armies
            moves = []
            for t in self.owned(p):
                if armies[t] < 2:
                    continue
                for n in self.map.neighbours[t]:
                    if owner[n] == p:
                        moves.append({"from": t, "to": n, "max_armies": armies[t] - 1})
            return {"moves": moves, "can_end": True}
        if phase == DEFEND:
            return {
                "max_dice": min(2, self.armies[self._attack["to"]]),  # type: ignore[index]
                "attack": self._attack_view(),
            }
        return {}

    def owned(self, player: int) -> list[int]:
        return [t for t, o in enumerate(self.owner) if o == player]

    def next_set_value(self) -> int:
        """The value of the next set, as far as it does not depend on the cards."""
        return self._set_value([])

    def _set_value(self, cards: list[int]) -> int:
        value = self.hooks.card_set_value(state=self, sets_traded=self.sets_traded, cards=cards)
        return int(value)

    def tradable(self, player: int) -> list[int]:
        """``player``'s cards that may go into a set."""
        hand = self.hands[player]
        if not self.untradable:
            return hand
        return [c for c in hand if c not in self.untradable]

    def _must_trade(self) -> bool:
        return self._trade_down or self._forced_trade

    # --- action handlers: validate everything first, then change the state --------------

    def _territory(self, action: Action, key: str) -> int:
        ref = action.get(key)
        if type(ref) is int and 0 <= ref < len(self.owner):  # the common case, first
            return ref
        try:
            return self.map.territory(ref)
        except ValueError:
            raise IllegalAction(
                f"{key!r}: unknown territory {ref!r}",
                allowed=f"a territory name of the map or its index 0..{self.map.size - 1}",
            ) from None

    def _do_claim(self, action: Action, events: list[Event]) -> None:
        t = self._territory(action, "territory")
        if self.owner[t] >= 0:
            raise IllegalAction(
                f"{self.map.territories[t]} is already claimed by seat {self.owner[t]}",
                allowed="an unclaimed territory",
            )
        p = self.player
        self.owner[t] = p
        self.armies[t] = 1
        self.territory_count[p] += 1
        self._setup_left[p] -= 1
        if not self._quiet:
            events.append({"e": "claim", "p": p, "t": t})
        if -1 in self.owner:
            self.player = (p + 1) % self.num_players
        else:
            self._after_setup_army(p, events)

    def _do_place(self, action: Action, events: list[Event]) -> None:
        t = self._territory(action, "territory")
        p = self.player
        if self.owner[t] != p:
            raise IllegalAction(
                f"{self.map.territories[t]} is not yours", allowed="one of your territories"
            )
        self.armies[t] += 1
        self._setup_left[p] -= 1
        if not self._quiet:
            events.append({"e": "place", "p": p, "t": t})
        self._after_setup_army(p, events)

    def _after_setup_army(self, p: int, events: list[Event]) -> None:
        nxt = self._next_setup_seat(p)
        if nxt < 0:
            self.finish_setup(events)
        else:
            self.phase = SETUP_PLACE
            self.player = nxt

    def _begin_turn(self, seat: int, events: list[Event]) -> None:
        if seat <= self.player or self.turn == 0:
            self.round += 1
            limit = self.config.turn_limit
            if limit and self.round > limit:
                self._finish_turn_limit(events)
                return
        self.player = seat
        self.turn_seat = seat
        self.turn += 1
        self._conquered = False
        self._bonus_used = 0
        game_map = self.map
        owner = self.owner
        count = self.territory_count[seat]
        base = count // 3
        total = base if base > 3 else 3
        breakdown: list[tuple[str, int]] = [("territories", total)]
        for c, members in enumerate(game_map.continent_members):
            for t in members:
                if owner[t] != seat:
                    break
            else:
                bonus = game_map.continent_bonus[c]
                total += bonus
                breakdown.append((game_map.continents[c], bonus))
        if self.hooks.reinforcement_bonus is not None:
            for items in self.hooks.reinforcement_bonus(state=self, player=seat):
                for label, armies in items:
                    total += armies
                    breakdown.append((label, armies))
        if not self._quiet:
            events.append({"e": "turn", "p": seat, "turn": self.turn, "round": self.round})
            events.append(
                {
                    "e": "reinforcements",
                    "p": seat,
                    "total": total,
                    "breakdown": [list(item) for item in breakdown],
                }
            )
        self._reinforce_left = total
        self._reinforce_then = ATTACK
        # every card counts towards the 5 that force a trade, untradable ones (headquarters)
        # too; the trade itself is of tradable cards, and without such a set there is none
        can_trade = len(self.hands[seat]) >= 3 and cardlib.has_set(game_map, self.tradable(seat))
        self._forced_trade = can_trade and len(self.hands[seat]) >= 5
        self._trade_down = False
        self.phase = TRADE if can_trade else REINFORCE

    def _do_trade(self, action: Action, events: list[Event]) -> None:
        p = self.player
        hand = self.hands[p]
        raw = action.get("cards")
        if type(raw) is not list or len(raw) != 3 or any(type(c) is not int for c in raw):
            raise IllegalAction(
                f"'cards' must be a list of 3 card ids, got {raw!r}",
                allowed="one of the sets in the decision's options",
            )
        if len(set(raw)) != 3 or any(c not in hand for c in raw):
            raise IllegalAction(
                f"cards {raw} are not 3 different cards of your hand {sorted(hand)}"
            )
        held_back = [c for c in raw if c in self.untradable]
        if held_back:
            raise IllegalAction(f"cards {held_back} may not be traded in a set in this game")
        if not cardlib.is_set(self.map, raw):
            names = [cardlib.design_name(self.map, c) for c in raw]
            raise IllegalAction(
                f"cards {raw} ({', '.join(names)}) are not a set",
                allowed="three of one design, one of each design, or any two plus a wild",
            )
        owned_on_cards = [c for c in raw if c < self.map.size and self.owner[c] == p]
        bonus_t = None
        if action.get("bonus") is not None:  # checked even when no bonus is due any more
            bonus_t = self._territory(action, "bonus")
            if bonus_t not in owned_on_cards:
                raise IllegalAction(
                    f"bonus territory {self.map.territories[bonus_t]} is not on a traded "
                    "card that you own",
                    allowed=", ".join(self.map.territories[c] for c in owned_on_cards) or "none",
                )
        elif owned_on_cards:
            bonus_t = owned_on_cards[0]
        if self._bonus_used >= 2:
            bonus_t = None  # at most 2 extra armies per turn
        value = self._set_value(list(raw))
        for c in raw:
            hand.remove(c)
        self.discard.extend(raw)
        self.sets_traded += 1
        self._reinforce_left += value
        event: Event = {"e": "trade", "p": p, "cards": list(raw), "value": value}
        if bonus_t is not None:
            self.armies[bonus_t] += 2
            self._bonus_used += 2
            event["bonus"] = bonus_t
        events.append(event)
        self._forced_trade = False
        if self._trade_down:
            if len(hand) > 4 and cardlib.has_set(self.map, self.tradable(p)):
                return  # keep trading down
            self._trade_down = False
            self.phase = REINFORCE
        elif not cardlib.has_set(self.map, self.tradable(p)):
            self.phase = REINFORCE

    def _do_no_trade(self, action: Action, events: list[Event]) -> None:
        if self._must_trade():
            why = (
                "you hold 6 or more cards after an elimination"
                if self._trade_down
                else "you began the turn with 5 or more cards"
            )
            raise IllegalAction(f"you must trade a set: {why}", allowed="trade")
        self.phase = REINFORCE

    def _do_reinforce(self, action: Action, events: list[Event]) -> None:
        raw = action.get("armies")
        if isinstance(raw, dict):
            items = list(raw.items())
        elif isinstance(raw, list) and all(
            isinstance(x, list | tuple) and len(x) == 2 for x in raw
        ):
            items = [tuple(x) for x in raw]
        else:
            raise IllegalAction(
                f"'armies' must map territories to army counts, got {raw!r}",
                allowed='{"Alaska": 3, ...} or [["Alaska", 3], ...]',
            )
        p = self.player
        owner = self.owner
        placements: dict[int, int] = {}
        total = 0
        size = len(owner)
        for ref, n in items:
            try:
                t = ref if type(ref) is int and 0 <= ref < size else self.map.territory(ref)
            except ValueError:
                raise IllegalAction(
                    f"'armies': unknown territory {ref!r}",
                    allowed="your territories, by name or index: "
                    + ", ".join(self.map.territories[t] for t in self.owned(p)),
                ) from None
            if owner[t] != p:
                raise IllegalAction(
                    f"{self.map.territories[t]} is not yours", allowed="your own territories"
                )
            if type(n) is not int or n < 0:
                raise IllegalAction(
                    f"armies for {self.map.territories[t]} must be a whole "
                    f"number of at least 0, got {n!r}"
                )
            placements[t] = placements.get(t, 0) + n
            total += n
        if total != self._reinforce_left:
            raise IllegalAction(
                f"placed {total} armies but {self._reinforce_left} must be placed",
                allowed=f"exactly {self._reinforce_left} armies in all",
            )
        armies = self.armies
        for t, n in placements.items():
            armies[t] += n
        if not self._quiet:
            events.append(
                {"e": "reinforce", "p": p, "armies": [[t, n] for t, n in placements.items() if n]}
            )
        self._reinforce_left = 0
        self.phase = self._reinforce_then

    def _do_attack(self, action: Action, events: list[Event]) -> None:
        owner = self.owner
        src = action.get("from")
        if type(src) is not int or not 0 <= src < len(owner):  # the common case: an index
            src = self._territory(action, "from")
        dst = action.get("to")
        if type(dst) is not int or not 0 <= dst < len(owner):
            dst = self._territory(action, "to")
        p = self.player
        armies = self.armies
        game_map = self.map
        if owner[src] != p:
            raise IllegalAction(
                f"you can only attack from your own territory; "
                f"{game_map.territories[src]} is not yours"
            )
        if dst not in game_map.adjacent[src]:
            raise IllegalAction(
                f"{game_map.territories[src]} does not border {game_map.territories[dst]}",
                allowed=", ".join(game_map.territories[n] for n in game_map.neighbours[src]),
            )
        if owner[dst] == p:
            raise IllegalAction(
                f"{game_map.territories[dst]} is your own territory",
                allowed=", ".join(
                    game_map.territories[n] for n in game_map.neighbours[src] if owner[n] != p
                )
                or "no enemy territory borders it",
            )
        a = armies[src]
        if a < 2:
            raise IllegalAction(
                f"{game_map.territories[src]} has {a} army; attacking needs at least 2"
            )
        dice = action.get("dice", min(3, a - 1))
        if type(dice) is not int or not 1 <= dice <= 3 or dice > a - 1:
            raise IllegalAction(
                f"cannot roll {dice!r} dice from {game_map.territories[src]} with {a} armies",
                allowed=f"1 to {min(3, a - 1)} dice (one fewer than the armies there, at most 3)",
            )
        until = action.get("until")
        if until is not None and (type(until) is not int or not 1 <= until < a):
            raise IllegalAction(
                f"'until' must be a whole number of armies from 1 to {a - 1}, got {until!r}",
                allowed="omit 'until' for a single roll",
            )
        stop_at = until if until is not None else a  # single roll: stop after one
        rolls: list[str] = []
        faces_log: list[str] | None = [] if self.config.dice == "faces" else None
        if self.config.defender_dice == "choose":
            chooser = self.hooks.defence_chooser(state=self, attacker=p, defender=owner[dst])
            if chooser is not None:
                self._attack = {
                    "p": p,
                    "from": src,
                    "to": dst,
                    "dice": dice,
                    "stop": stop_at,
                    "start": [a, armies[dst]],
                    "rolls": rolls,
                    "faces": faces_log,
                    "def_dice": [],
                    "chooser": chooser,
                }
                self.phase = DEFEND
                self.player = chooser
                return
        d = armies[dst]
        random_ = self.rng.random
        start_a, start_d = a, d
        ad = dice
        quiet = self._quiet
        while True:
            ad = dice if dice < a else a - 1
            dd = 2 if d >= 2 else 1
            if faces_log is None:  # the hot path: one random number per roll
                u = random_()
                for threshold, al, dl, code in CUMULATIVE[ad][dd]:  # noqa: B007 - used after the loop
                    if u < threshold:
                        break
                if not quiet:
                    rolls.append(code)
            else:
                al, dl = self._roll(ad, dd, rolls, faces_log)
            a -= al
            d -= dl
            if d == 0 or a <= stop_at or a < 2:
                break
        armies[src] = a
        armies[dst] = d
        self._end_battle(src, dst, dice, (start_a, start_d), rolls, faces_log, None, ad, events)

    def _roll(
        self, ad: int, dd: int, rolls: list[str], faces_log: list[str] | None
    ) -> tuple[int, int]:
        """One roll of ``ad`` against ``dd`` dice; logs it; returns the two sides' losses."""
        random_ = self.rng.random
        if faces_log is None:
            u = random_()
            for threshold, al, dl, code in CUMULATIVE[ad][dd]:  # noqa: B007 - used after the loop
                if u < threshold:
                    break
            rolls.append(code)
            return al, dl
        af = sorted((int(random_() * 6) + 1 for _ in range(ad)), reverse=True)
        df = sorted((int(random_() * 6) + 1 for _ in range(dd)), reverse=True)
        al, dl = compare(af, df)
        rolls.append(outcome_code(al, dl))
        faces_log.append("".join(map(str, af)) + "-" + "".join(map(str, df)))
        return al, dl

    def _end_battle(
        self,
        src: int,
        dst: int,
        dice: int,
        start: tuple[int, int],
        rolls: list[str],
        faces_log: list[str] | None,
        def_dice: list[int] | None,
        last_dice: int,
        events: list[Event],
    ) -> None:
        if not self._quiet:
            event: Event = {
                "e": "battle",
                "p": self.player,
                "from": src,
                "to": dst,
                "dice": dice,
                "rolls": "".join(rolls),
                "att_loss": start[0] - self.armies[src],
                "def_loss": start[1] - self.armies[dst],
            }
            if faces_log is not None:
                event["faces"] = " ".join(faces_log)
            if def_dice is not None:
                event["def_dice"] = "".join(map(str, def_dice))
            events.append(event)
        if self.armies[dst] == 0:
            self._conquer(src, dst, last_dice, events)

    def _attack_view(self) -> dict[str, Any]:
        at = self._attack
        assert at is not None
        return {
            "attacker": at["p"],
            "from": at["from"],
            "to": at["to"],
            "dice": at["dice"],
            "rolls": "".join(at["rolls"]),
        }

    def _do_defend(self, action: Action, events: list[Event]) -> None:
        at = self._attack
        assert at is not None
        src, dst = at["from"], at["to"]
        armies = self.armies
        most = min(2, armies[dst])
        dd = action.get("dice", most)
        if type(dd) is not int or not 1 <= dd <= most:
            raise IllegalAction(
                f"cannot defend {self.map.territories[dst]} with {dd!r} dice",
                allowed=f"1 to {most} dice (2 only with at least 2 armies there)",
            )
        ad = min(at["dice"], armies[src] - 1)
        al, dl = self._roll(ad, dd, at["rolls"], at["faces"])
        at["def_dice"].append(dd)
        armies[src] -= al
        armies[dst] -= dl
        if armies[dst] == 0 or armies[src] <= at["stop"] or armies[src] < 2:
            self._attack = None
            self.player = at["p"]
            self.phase = ATTACK
            self._end_battle(
                src,
                dst,
                at["dice"],
                tuple(at["start"]),
                at["rolls"],
                at["faces"],
                at["def_dice"],
                ad,
                events,
            )

    def _conquer(self, src: int, dst: int, last_dice: int, events: list[Event]) -> None:
        p = self.player
        loser = self.owner[dst]
        self.owner[dst] = p
        self.territory_count[p] += 1
        self.territory_count[loser] -= 1
        self._conquered = True
        self.conquests += 1
        if not self._quiet:
            events.append({"e": "conquer", "p": p, "from": src, "to": dst, "prev": loser})
        lo = last_dice
        hi = self.armies[src] - 1
        if self.territory_count[loser] == 0 and loser < self.num_players:
            self._eliminate(loser, p, events)
            if sum(self.alive) == 1:  # world domination: the most armies move in, the end
                self._move_armies(src, dst, hi, events)
                self.finish(
                    Result(
                        EndReason.VICTORY, self.places(winners=[p]), f"seat {p} conquered the world"
                    ),
                    events,
                )
                return
        if lo >= hi:
            self._move_armies(src, dst, hi, events)
            self._after_move_in()
        else:
            self._move_in = (src, dst, lo, hi)
            self.phase = MOVE_IN

    def _eliminate(self, loser: int, by: int, events: list[Event]) -> None:
        self.alive[loser] = False
        self.eliminated.append(loser)
        if loser not in self.exits:
            self.exits.append(loser)
        taken = self.hands[loser]
        self.hands[loser] = []
        self.hands[by].extend(taken)
        events.append({"e": "eliminate", "p": loser, "by": by, "cards": len(taken)})
        if len(taken) and len(self.hands[by]) >= 6:
            self._trade_down = True
        if self.hooks.eliminated is not None:
            self.hooks.eliminated(state=self, loser=loser, by=by, events=events)

    def _do_move_in(self, action: Action, events: list[Event]) -> None:
        src, dst, lo, hi = self._move_in  # type: ignore[misc]
        n = action.get("armies")
        if type(n) is not int or not lo <= n <= hi:
            raise IllegalAction(
                f"cannot move {n!r} armies into {self.map.territories[dst]}",
                allowed=f"{lo} to {hi} armies (at least the dice of the last roll, "
                "leaving at least 1 behind)",
            )
        self._move_armies(src, dst, n, events)
        self._move_in = None
        self._after_move_in()

    def _move_armies(self, src: int, dst: int, n: int, events: list[Event]) -> None:
        self.armies[src] -= n
        self.armies[dst] += n
        if not self._quiet:
            events.append({"e": "move_in", "p": self.player, "from": src, "to": dst, "armies": n})

    def _after_move_in(self) -> None:
        if self._trade_down and not cardlib.has_set(self.map, self.tradable(self.player)):
            self._trade_down = False  # only untradable cards make up the hand
        if self._trade_down:
            # An elimination brought 6+ cards: trade down to 4 or fewer now, place them now.
            self._reinforce_left = 0
            self._reinforce_then = ATTACK
            self.phase = TRADE
        else:
            self.phase = ATTACK

    def _do_end_attack(self, action: Action, events: list[Event]) -> None:
        p = self.player
        if self._conquered and self._draw_cards:
            if not self.draw_pile and self.discard:
                self.draw_pile = self.discard
                self.discard = []
                self.rng.shuffle(self.draw_pile)
                events.append({"e": "reshuffle", "cards": len(self.draw_pile)})
            if self.draw_pile:
                card = self.draw_pile.pop()
                self.hands[p].append(card)
                events.append({"e": "draw", "p": p, "card": card})
        self.phase = FORTIFY

    def _do_fortify(self, action: Action, events: list[Event]) -> None:
        src = self._territory(action, "from")
        dst = self._territory(action, "to")
        p = self.player
        game_map = self.map
        if self.owner[src] != p or self.owner[dst] != p:
            theirs = src if self.owner[src] != p else dst
            raise IllegalAction(
                f"{game_map.territories[theirs]} is not yours: fortify moves armies between "
                "two of your own territories",
                allowed="your territories bordering " + game_map.territories[src]
                if self.owner[src] == p
                else "a territory of yours with 2 or more armies",
            )
        if dst not in game_map.adjacent[src]:
            raise IllegalAction(
                f"{game_map.territories[src]} does not border {game_map.territories[dst]}",
                allowed="an adjacent territory of yours",
            )
        n = action.get("armies")
        a = self.armies[src]
        if type(n) is not int or not 1 <= n <= a - 1:
            raise IllegalAction(
                f"cannot move {n!r} armies from {game_map.territories[src]} with {a} armies",
                allowed=f"1 to {a - 1} armies (at least 1 stays behind)"
                if a > 1
                else "nothing: a territory with 1 army cannot fortify",
            )
        self.armies[src] -= n
        self.armies[dst] += n
        events.append({"e": "fortify", "p": p, "from": src, "to": dst, "armies": n})
        self._end_turn(events)

    def _do_end_turn(self, action: Action, events: list[Event]) -> None:
        self._end_turn(events)

    def _end_turn(self, events: list[Event]) -> None:
        n = self.num_players
        alive = self.alive
        passive = self.passive
        seat = self.player
        for _ in range(n):
            seat = (seat + 1) % n
            if alive[seat] and not passive[seat]:
                break
        self._begin_turn(seat, events)

    # --- the end ----------------------------------------------------------------------

    def places(self, winners: list[int]) -> tuple[int, ...]:
        """Winners first (tied), then the others still in (tied), then those who left
        (eliminated or forfeited), the last to leave best."""
        places = [0] * self.num_players
        for w in winners:
            places[w] = 1
        still_in = self.still_in()
        others = [s for s in still_in if s not in winners]
        for seat in others:
            places[seat] = len(winners) + 1
        place = len(winners) + len(others) + 1  # competition ranking: 1, 2, 2, 4
        gone = [s for s in self.eliminated if s not in self.exits] + self.exits
        for seat in reversed(gone):
            if seat not in winners and seat not in still_in:
                places[seat] = place
                place += 1
        return tuple(places)

    def still_in(self) -> list[int]:
        """Seats neither eliminated nor forfeited."""
        return [s for s in range(self.num_players) if self.alive[s] and s not in self.forfeited]

    # --- the referee's interface --------------------------------------------------------

    def forfeit(self, seat: int) -> list[Event]:
        if not 0 <= seat < self.num_players or seat in self.exits or self._result is not None:
            return []
        self.passive[seat] = True
        self.forfeited.append(seat)
        self.exits.append(seat)
        events: list[Event] = [{"e": "forfeit", "p": seat}]
        active = self.still_in()
        if len(active) <= 1:
            self.finish(
                Result(EndReason.FORFEIT, self.places(active), "every other player forfeited"),
                events,
            )
        return events

    def default_action(self) -> Action:
        """Claim or place on the first territory allowed, trade only when forced, put
        every reinforcement on the first own territory, never attack, move in the
        fewest armies, defend with the most dice, never fortify."""
        phase = self.phase
        if phase == VARIANT:
            return self._custom.default(self)  # type: ignore[union-attr]
        opts = self.legal_options()
        if phase in (CLAIM, SETUP_PLACE):
            return {
                "type": "claim" if phase == CLAIM else "place",
                "territory": opts["territories"][0],
            }
        if phase == TRADE:
            if opts["must_trade"]:
                return {"type": "trade", "cards": opts["sets"][0]}
            return {"type": "no_trade"}
        if phase == REINFORCE:
            return {"type": "reinforce", "armies": {opts["territories"][0]: opts["armies"]}}
        if phase == ATTACK:
            return {"type": "end_attack"}
        if phase == MOVE_IN:
            return {"type": "move_in", "armies": opts["min"]}
        if phase == DEFEND:
            return {"type": "defend", "dice": opts["max_dice"]}
        if phase == FORTIFY:
            return {"type": "end_turn"}
        raise IllegalAction("the game is over: no action is due")

    def _finish_turn_limit(self, events: list[Event]) -> None:
        # a goal reached by the last action of the last turn (a fortify) wins: first
        if self.hooks.check_victory is not None:
            won = self.hooks.check_victory(self, self.turn_seat)
            if won is not None:
                self.finish(won, events)
                return
        survivors = self.still_in()
        self.finish(
            Result(
                EndReason.TURN_LIMIT,
                self.places(winners=survivors),
                f"turn limit of {self.config.turn_limit} rounds reached",
            ),
            events,
        )

    def finish(self, result: Result, events: list[Event]) -> None:
        if self.hooks.game_over is not None:
            self.hooks.game_over(state=self, result=result, events=events)
        self._result = result
        self.phase = GAME_OVER
        events.append(
            {"e": "game_over", "reason": result.reason.value, "places": list(result.places)}
        )


def _board_part(state: RiskState, player: int) -> dict[str, Any]:
    """The entries of ``RiskState.observation`` that a bot reads at nearly every decision,
    built alone for a bot that reads no more (``State.observation_parts``); the tests
    compare them with the whole observation's in every phase."""
    return {
        "seat": player,
        "map": state.map.name,
        "owner": state.owner[:],
        "armies": state.armies[:],
        "reinforcements_left": state._reinforce_left if player == state.player else 0,
    }


#: the actions after which no goal can have been reached, unless they conquered a
#: territory: they take armies away, or change nothing on the board
_GAINS_NOTHING = frozenset(("attack", "defend", "end_attack", "no_trade", "end_turn"))

OBSERVATION_PARTS = dict.fromkeys(
    ("seat", "map", "owner", "armies", "reinforcements_left"), _board_part
)


_HANDLERS: dict[str, Callable[[RiskState, Action, list[Event]], None]] = {
    "claim": RiskState._do_claim,
    "place": RiskState._do_place,
    "trade": RiskState._do_trade,
    "no_trade": RiskState._do_no_trade,
    "reinforce": RiskState._do_reinforce,
    "attack": RiskState._do_attack,
    "move_in": RiskState._do_move_in,
    "end_attack": RiskState._do_end_attack,
    "fortify": RiskState._do_fortify,
    "defend": RiskState._do_defend,
    "end_turn": RiskState._do_end_turn,
}


def _changed(out: dict[str, Any], key: str, old: list[Any], new: list[Any]) -> list[int]:
    """Put in ``out`` what changed from list ``old`` to ``new`` (not equal), as
    ``arena.web.frames.delta`` does: the items that changed, if the lengths are the
    same and fewer than half of them changed, else the whole list. The indices that
    changed."""
    changed = list(compress(range(len(new)), map(ne, old, new)))
    if len(old) == len(new) and 2 * len(changed) < len(new):
        out["~" + key] = [[i, new[i]] for i in changed]
    else:
        out[key] = new
    return changed


class SpectatorTracker:
    """:meth:`RiskState.spectator_view` after every step, made from what changed.

    A replay's frames need the view after each of tens of thousands of steps and what
    changed in it, when a step changes a few territories' armies: rather than make the
    whole view (two copies of the board, each owner's strength summed anew, the
    continents' holders) and compare it with the last one key by key, this compares
    the state's lists with the view's, copies only those that changed, brings the
    strengths up to date from the territories that changed, and finds the continents'
    holders again only when a territory changed hands. The view and the changes are
    exactly those of ``spectator_view`` and ``arena.web.frames.delta`` (the tests
    compare them at every step of whole games); without a variant's spectator view
    the view's keys never change, so no key is ever gone.
    """

    __slots__ = ("state", "view")

    def __init__(self, state: RiskState) -> None:
        self.state = state
        self.view: dict[str, Any] = state.spectator_view()

    def changes(self) -> dict[str, Any]:
        """What changed since the last call (or since the tracker was made); ``view``
        becomes the view now (a new dict: the last one is left as it was)."""
        state, before = self.state, self.view
        view = before.copy()
        out: dict[str, Any] = {}
        # the keys in the order of spectator_view's, as delta gives them
        value: Any = state._phase_name()
        if value != before["phase"]:
            view["phase"] = out["phase"] = value
        if state.player != before["player"]:
            view["player"] = out["player"] = state.player
        if state.turn != before["turn"]:
            view["turn"] = out["turn"] = state.turn
        if state.round != before["round"]:
            view["round"] = out["round"] = state.round
        owner, armies = state.owner, state.armies
        old_owner, old_armies = before["owner"], before["armies"]
        taken: list[int] = []
        if owner != old_owner:
            view["owner"] = owner = owner[:]
            taken = _changed(out, "owner", old_owner, owner)
        else:
            owner = old_owner
        if armies != old_armies:
            view["armies"] = armies = armies[:]
            counted = _changed(out, "armies", old_armies, armies)
            if taken:
                counted = set(counted).union(taken)
        else:
            armies, counted = old_armies, taken
        value = state.territory_count
        if value != before["territories"]:
            view["territories"] = value = value[:]
            _changed(out, "territories", before["territories"], value)
        if counted:
            old_strength = before["strength"]
            strength = old_strength[:]
            for i in counted:
                strength[old_owner[i]] -= old_armies[i]
                strength[owner[i]] += armies[i]
            if strength != old_strength:
                view["strength"] = strength
                _changed(out, "strength", old_strength, strength)
        if taken:
            value = state._holders()
            if value != before["continents"]:
                view["continents"] = value
                _changed(out, "continents", before["continents"], value)
        value = list(map(len, state.hands))
        if value != before["cards"]:
            view["cards"] = value
            _changed(out, "cards", before["cards"], value)
        value = state.alive
        if value != before["alive"]:
            view["alive"] = value = value[:]
            _changed(out, "alive", before["alive"], value)
        value = state.passive
        if value != before["passive"]:
            view["passive"] = value = value[:]
            _changed(out, "passive", before["passive"], value)
        value = len(state.draw_pile)
        if value != before["draw_pile"]:
            view["draw_pile"] = out["draw_pile"] = value
        if state.sets_traded != before["sets_traded"]:
            view["sets_traded"] = out["sets_traded"] = state.sets_traded
        self.view = view
        return out
