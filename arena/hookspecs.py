"""Every pluggy hook of Arena, in one place.

Two kinds of hooks live here:

* ``arena_*`` hooks are called once, when the plugin manager is built, on every
  installed plugin (built-in or third-party, found through the ``arena`` entry-point
  group). They take a ``register`` callback.
* ``risk_*`` hooks are called during a Risk game, on the variants chosen for that
  match only, at phase boundaries (never per die roll). The classic rules are the
  default implementations (``trylast``), so a variant overrides a rule by answering
  first.

``docs/plugins.md`` documents every hook; a test fails when one is not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from arena.engine.core import Game, Result
    from arena.games.risk.state import RiskState
    from arena.games.stratego.state import StrategoRules
    from arena.plugins import BotSpec, Variant

hookspec = pluggy.HookspecMarker("arena")


# --- discovery hooks: called once per plugin manager ------------------------------


@hookspec
def arena_register_games(register: Callable[[Game], None]) -> None:
    """Register games by calling ``register(game)`` once per :class:`~arena.engine.Game`.

    Called once when the registry is loaded. Two games with the same name are an error.
    """


@hookspec
def arena_register_variants(register: Callable[[Variant], None]) -> None:
    """Register variants of a game by calling ``register(variant)``.

    A :class:`~arena.plugins.Variant` names its game, its own name, a one-line
    description and the object that implements the game's per-match hooks (for Risk,
    the ``risk_*`` hooks below). Called once when the registry is loaded.
    """


@hookspec
def arena_register_bots(register: Callable[[BotSpec], None]) -> None:
    """Register in-process bots by calling ``register(bot_spec)``.

    A :class:`~arena.plugins.BotSpec` names its game, its name, a one-line description
    and a factory ``factory(seat, seed) -> Player``. Called once when the registry is
    loaded.
    """


# --- Risk per-match hooks: called on the chosen variants and the classic rules -----


@hookspec
def risk_configure(num_players: int, options: dict[str, Any], given: dict[str, Any]) -> None:
    """Check and adjust the parsed ``options`` of a game before it is created.

    Called once per game, on the chosen variants. ``given`` holds the options the user
    actually gave. Raise ``ValueError`` with a message that says why for a combination
    that makes no sense (it is refused before the game starts); change ``options`` for
    a setting the variant implies (missions use the deal setup, say).
    """


@hookspec(firstresult=True)
def risk_starting_armies(num_players: int, options: dict[str, Any]) -> int | None:
    """Armies each player starts with. Called once, when the game is created.

    Return an int to decide; return None to leave it to the next implementation; raise
    ``ValueError`` for a player count the rules do not allow. Classic: 35, 30, 25, 20 for
    3, 4, 5, 6 players.
    """


@hookspec
def risk_passive_owners(num_players: int, options: dict[str, Any]) -> list[str]:
    """Names of board owners that are not players (a neutral army), if any.

    Called once, when the game is created. Passive owners get the owner ids after the
    seats (``num_players``, ...); they never take a turn, reinforce, draw or attack.
    """


@hookspec(firstresult=True)
def risk_setup(state: RiskState, events: list[dict[str, Any]]) -> bool | None:
    """Lay out the board at the start of the game; return True once done.

    Classic: claim or deal, by the ``setup`` option (``state.setup_claim`` /
    ``state.setup_deal``). A variant with its own setup places territories with
    ``state.give``, shuffles the deck (``state.shuffle_deck``), asks for placements with
    ``state.ask`` and calls ``state.finish_setup(events)`` when all armies are placed.

    Who holds which territory is public, and drawn from ``state.deal_rng`` (the deal's
    seed, shared by the rotations of a tournament's deal); anything private (the deck's
    order, a secret goal) from ``state.rng``, the match's own secret. ``deal_rng`` is gone
    once this hook returns.
    """


@hookspec
def risk_after_setup(state: RiskState, events: list[dict[str, Any]]) -> bool:
    """Called once when the initial placement is complete, before the first turn.
    Chance here is secret: ``state.rng`` (missions are dealt here).

    Return True if the variant asked for decisions (``state.ask``) and will call
    ``state.begin_first_turn(events)`` itself when they are done; else False.
    """


@hookspec
def risk_reinforcement_bonus(state: RiskState, player: int) -> list[tuple[str, int]]:
    """Extra reinforcement items for ``player`` at the start of their turn.

    Called once per turn, after the classic count (territories // 3, at least 3, plus
    continent bonuses) and before card trades. Return ``[(label, armies), ...]``; every
    item is added to the turn's reinforcements and shown in its breakdown event.
    """


@hookspec(firstresult=True)
def risk_card_set_value(state: RiskState, sets_traded: int, cards: list[int]) -> int | None:
    """Armies a traded set of ``cards`` (card ids) is worth.

    ``sets_traded`` is the number of sets anyone traded before this one. Called once per
    trade. Classic (progressive): 4, 6, 8, 10, 12, 15, then 5 more per further set.
    """


@hookspec(firstresult=True)
def risk_check_victory(state: RiskState, player: int) -> Result | None:
    """The game's result if someone has won, else None.

    Called after every applied action that can have reached a goal when a variant
    implements it: one that placed or moved armies, conquered a territory (an
    elimination is a conquest), or answered a variant's own decision; not after an
    attack or a defence roll that conquered nothing, nor after ending an attack or a
    turn or declining a trade, which only take armies away or change nothing on the
    board (so a goal must be one that taking armies away cannot reach); and not while a
    conquest awaits its move-in or a roll its defence dice. ``player`` is the seat whose
    turn the action belonged to, the player acting (-1 during setup). A goal can be
    reached through another player's action (secret missions: a "destroy" mission that
    becomes "occupy 24"), so a variant checks every seat it needs to, and answers for
    ``player`` when that decision completed its goal too. Called too when the turn limit
    is reached, before it ends the game. The classic rule (world domination: one player
    left) is checked after every elimination.
    """


@hookspec
def risk_eliminated(state: RiskState, loser: int, by: int, events: list[dict[str, Any]]) -> None:
    """Called right after seat ``loser`` lost its last territory to seat ``by``.

    The cards have changed hands already. A variant may append events and update its
    data; to end the game, answer ``risk_check_victory``, which runs once the conquest
    is complete.
    """


@hookspec(firstresult=True)
def risk_defence_chooser(state: RiskState, attacker: int, defender: int) -> int | None:
    """The seat that chooses the defending dice with ``defender-dice=choose``.

    Called once per attack in that mode. Return a seat, or None for the automatic
    choice (the most dice allowed). Classic: the defending owner if it is a player still
    taking turns.
    """


@hookspec
def risk_observation(state: RiskState, player: int, observation: dict[str, Any]) -> None:
    """Add what ``player`` privately knows because of a variant to ``observation``.

    Called whenever an observation is built. Add only what that player may know: the
    observation goes to the bot as it is. A plugin whose hook only adds entries names
    them in ``risk_observation_keys`` (a tuple on the plugin object): the rest of the
    observation is then built alone for a bot that reads only that. Without it the hook
    may change any entry, and every observation is built whole.
    """


@hookspec
def risk_spectator_view(state: RiskState, view: dict[str, Any], reveal: bool) -> None:
    """Add a variant's public facts to a spectator's ``view`` of the position
    (``RiskState.spectator_view``: the web's replay viewer, the referee's spectators).

    Add only what every seat may know at this point of the game (a pick revealed to
    all, a mission once the game is over). ``reveal`` is true only for a match that has
    ended, whose replay is public: then add its secrets too.
    """


@hookspec
def risk_game_over(state: RiskState, result: Result, events: list[dict[str, Any]]) -> None:
    """Called once when the game ends, before the ``game_over`` event.

    A variant appends events that reveal what was secret (the missions, say): the replay
    is public after the game.
    """


# --- Stratego per-match hooks -------------------------------------------------------


@hookspec
def stratego_rules(rules: StrategoRules, options: dict[str, Any]) -> None:
    """Adjust the rules of a Stratego game before it starts.

    Called once per game, on each chosen variant in the order given, with the classic
    rules as the starting point. Change the fields of ``rules`` (the army, the Scout's
    strike, the repetition rules, ...); ``options`` are the game's parsed options.
    """
