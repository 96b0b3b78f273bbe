"""The Risk game plugin: options, variant hooks and the state factory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pluggy

from arena import hookspecs
from arena.engine.core import Game, OptionSpec, non_negative_int
from arena.games.risk.map import load_map, map_key, map_option
from arena.games.risk.rules import CLASSIC_RULES
from arena.games.risk.state import OBSERVATION_PARTS, RiskConfig, RiskHooks, RiskState

RISK_OPTIONS = (
    OptionSpec(
        "setup",
        "how territories are first taken: players claim them in turn, "
        "or the territory cards are dealt",
        "claim",
        ("claim", "deal"),
    ),
    OptionSpec(
        "defender-dice",
        "the defender rolls the most dice allowed, or chooses (and is asked each roll)",
        "automatic",
        ("automatic", "choose"),
    ),
    OptionSpec(
        "cards",
        "card sets: progressive values (4, 6, 8, 10, 12, 15, +5), fixed values (three "
        "infantry 4, cavalry 6, artillery 8, one of each 10), or none (no cards are drawn: "
        "'no spoils')",
        "progressive",
        ("progressive", "fixed", "none"),
        aliases=(("fixed-cards", "fixed"), ("no-cards", "none")),
    ),
    OptionSpec(
        "dice",
        "draw each roll's outcome from its exact distribution (faster; faces are not "
        "recorded), or roll every die and record its faces (same odds)",
        "distribution",
        ("distribution", "faces"),
        splits_board=False,  # the same odds: it changes what a replay records, not play
    ),
    OptionSpec(
        "turn-limit",
        "rounds after which the survivors tie (0: no limit)",
        "500",
        parse=non_negative_int,
        # a bound on a game's length, as a time control bounds a move's: the rules are
        # the same, so the results share a board
        splits_board=False,
    ),
    OptionSpec(
        "map",
        "a built-in map name, or a map .json file (a command stores its content)",
        "classic",
        stored=map_option,
        board_value=map_key,
    ),
)


def _positional(caller: Any, argnames: tuple[str, ...]) -> Any:
    """A hook called per decision, as a function of positional arguments ``argnames``.

    A single implementation taking exactly those arguments is returned as it is, so the
    call skips pluggy's dispatch: cheap as that is, a variant must not slow the engine.
    """
    impls = caller.get_hookimpls()
    if len(impls) == 1 and tuple(impls[0].argnames) == argnames:
        return impls[0].function
    return lambda *args: caller(**dict(zip(argnames, args, strict=True)))


@lru_cache(maxsize=64)
def _hooks_for(plugins: tuple[object, ...]) -> tuple[RiskHooks, pluggy.PluginManager]:
    """Resolve the per-match hooks once per combination of variant plugins.

    A hook with no implementation besides the classic one is called directly (or not at
    all), so classic games pay nothing for the plugin machinery.
    """
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    pm.register(CLASSIC_RULES)
    for plugin in plugins:
        pm.register(plugin)
    hook = pm.hook

    def only_classic(name: str) -> bool:
        return all(impl.plugin is CLASSIC_RULES for impl in getattr(hook, name).get_hookimpls())

    def optional(name: str) -> Any:
        caller = getattr(hook, name)
        return caller if caller.get_hookimpls() else None

    check_victory = optional("risk_check_victory")
    observation = optional("risk_observation")
    # The board part of an observation is built alone unless a variant's observation
    # hook may change its entries: one that does not declare the entries it adds
    # (``risk_observation_keys`` on its plugin) may change any, and gets the whole.
    added: set[str] = set()
    for impl in observation.get_hookimpls() if observation is not None else ():
        keys = getattr(impl.plugin, "risk_observation_keys", None)
        if keys is None:
            added = set(OBSERVATION_PARTS)
            break
        added.update(keys)
    parts = {} if added & set(OBSERVATION_PARTS) else OBSERVATION_PARTS
    return (
        RiskHooks(
            setup=hook.risk_setup,
            after_setup=optional("risk_after_setup"),
            reinforcement_bonus=optional("risk_reinforcement_bonus"),
            card_set_value=(
                (
                    lambda state, sets_traded, cards: CLASSIC_RULES.risk_card_set_value(
                        state, sets_traded, cards
                    )
                )
                if only_classic("risk_card_set_value")
                else hook.risk_card_set_value
            ),
            check_victory=(
                None if check_victory is None else _positional(check_victory, ("state", "player"))
            ),
            eliminated=optional("risk_eliminated"),
            defence_chooser=hook.risk_defence_chooser,
            observation=(
                None
                if observation is None
                else _positional(observation, ("state", "player", "observation"))
            ),
            game_over=optional("risk_game_over"),
            spectator_view=optional("risk_spectator_view"),
            observation_parts=parts,
        ),
        pm,
    )


@dataclass(frozen=True)
class RiskGame(Game):
    name: str = "risk"
    description: str = "Risk: world domination on a map of territories, with dice and cards"
    min_players: int = 2  # two only with a variant that allows it (neutral)
    max_players: int = 6
    option_specs: tuple[OptionSpec, ...] = RISK_OPTIONS
    #: 2: chance from a secure stream (SHAKE-256), the deal from a stream of its own
    #: (1: one Mersenne Twister for everything)
    rules_version: int = 2

    def public_event(self, event: dict[str, Any], seat: int | None) -> dict[str, Any] | None:
        """As the base rule, and the card drawn is known to the drawer only."""
        if event["e"] == "draw" and event["p"] != seat:
            return {"e": "draw", "p": event["p"]}
        return super().public_event(event, seat)

    def render(self, state: RiskState) -> str:  # type: ignore[override]
        """The board by continent (each territory's owner and armies), then each seat's
        territories, armies and cards: public facts only, as every seat sees them."""
        obs = state.observation(0)
        game_map = state.map
        n = obs["num_players"]

        def who(owner: int) -> str:
            return "-" if owner < 0 else f"seat {owner}" if owner < n else "neutral"

        width = max(map(len, game_map.territories))
        to_move = "game over" if state.terminal else f"seat {obs['current_player']} to move"
        lines = [f"round {obs['round']}, turn {obs['turn']}: {to_move} ({obs['phase']})"]
        for name, bonus, members in zip(
            game_map.continents, game_map.continent_bonus, game_map.continent_members, strict=True
        ):
            lines.append(f"{name} (+{bonus})")
            for t in members:
                owner, armies = obs["owner"][t], obs["armies"][t]
                lines.append(f"  {game_map.territories[t]:<{width}}  {who(owner):<7} {armies:>4}")
        for owner in range(obs["num_owners"]):
            held = [t for t, o in enumerate(obs["owner"]) if o == owner]
            status = "" if owner >= n or obs["alive"][owner] else ", out"
            lines.append(
                f"{who(owner)}: {len(held)} territories, "
                f"{sum(obs['armies'][t] for t in held)} armies, "
                f"{obs['hand_sizes'][owner]} cards{status}"
            )
        return "\n".join(lines)

    def new_state(
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, str] | None = None,
        variants: Sequence[Any] = (),
        deal_seed: int | None = None,
    ) -> RiskState:
        """As ``Game.new_state`` says: ``deal_seed`` deals the territories (the deal
        setup, the neutral's piles) and nothing else; the claim setup deals nothing, and
        the starting armies follow from the number of players."""
        self.check_players(num_players)
        given = dict(options or {})
        opts = self.parse_options(given, variants)
        hooks, pm = _hooks_for(tuple(v.plugin for v in variants))
        pm.hook.risk_configure(num_players=num_players, options=opts, given=given)
        armies = pm.hook.risk_starting_armies(num_players=num_players, options=opts)
        if armies is None:
            raise ValueError(f"no starting armies are defined for {num_players} players")
        passive = tuple(
            name
            for names in pm.hook.risk_passive_owners(num_players=num_players, options=opts)
            for name in names
        )
        config = RiskConfig(
            num_players=num_players,
            starting_armies=armies,
            setup=opts["setup"],
            cards=opts["cards"],
            dice=opts["dice"],
            turn_limit=opts["turn-limit"],
            defender_dice=opts["defender-dice"],
            passive_owners=passive,
        )
        state = RiskState(load_map(opts["map"]), config, hooks, seed, deal_seed)
        state.options = opts
        state.initial_events = state.start()
        return state
