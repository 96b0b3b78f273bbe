"""The Stratego game plugin: options, rule-set variants and the state factory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from arena import hookspecs
from arena.engine.core import Game, OptionSpec, non_negative_int
from arena.games.stratego.board import COLUMNS, LAKES, SIZE
from arena.games.stratego.pieces import NAMES
from arena.games.stratego.state import StrategoRules, StrategoState

#: one-letter codes for the board picture: B bomb, F flag, S spy, 2-9 and M (Marshal 10)
_CODES = {
    "flag": "F",
    "spy": "S",
    "scout": "2",
    "miner": "3",
    "sergeant": "4",
    "lieutenant": "5",
    "captain": "6",
    "major": "7",
    "colonel": "8",
    "general": "9",
    "marshal": "M",
    "bomb": "B",
}


STRATEGO_OPTIONS = (
    OptionSpec(
        "rescue", "the manual's optional rescue rule (classic rules only)", "off", ("off", "on")
    ),
    OptionSpec(
        "turn-limit",
        "moves (of both players together) after which the game is drawn (0: no limit)",
        "3000",
        parse=non_negative_int,
        # a bound on a game's length, as a time control bounds a move's: the rules are
        # the same, so the results share a board
        splits_board=False,
    ),
)


@dataclass(frozen=True)
class StrategoGame(Game):
    name: str = "stratego"
    description: str = "Stratego: capture the hidden flag; ranks stay secret until a strike"
    min_players: int = 2
    max_players: int = 2
    option_specs: tuple[OptionSpec, ...] = STRATEGO_OPTIONS

    def rules_for(
        self, options: Mapping[str, str] | None, variants: Sequence[Any]
    ) -> StrategoRules:
        opts = self.parse_options(options or {})
        rules = StrategoRules(turn_limit=opts["turn-limit"])
        if variants:
            pm = pluggy.PluginManager("arena")
            pm.add_hookspecs(hookspecs)
            for variant in reversed(variants):  # pluggy calls the last registered first
                pm.register(variant.plugin)
            pm.hook.stratego_rules(rules=rules, options=opts)
        if opts["rescue"] == "on":
            if rules.name != "classic":
                raise ValueError(
                    f"the rescue rule is an option of the classic rules, not of {rules.name}"
                )
            rules.rescue = True
        return rules

    def public_event(self, event: dict[str, Any], seat: int | None) -> dict[str, Any] | None:
        """As the base rule, and a setup reaches its own seat only: seat 1 sets up after
        seat 0, and the events seat 0's setup caused would travel with seat 1's setup
        decision. The board at the start of play shows both armies' squares."""
        if event["e"] == "setup" and event["p"] != seat:
            return None
        return super().public_event(event, seat)

    def render(self, state: StrategoState) -> str:  # type: ignore[override]
        """The whole board, both armies shown (upper case seat 0, lower case seat 1)."""
        lines = []
        for row in range(SIZE - 1, -1, -1):
            cells = []
            for col in range(SIZE):
                s = row * SIZE + col
                if s in LAKES:
                    cells.append("~")
                elif state.owner[s] < 0:
                    cells.append(".")
                else:
                    code = _CODES[NAMES[state.rank[s]]]
                    cells.append(code if state.owner[s] == 0 else code.lower())
            lines.append(f"{row + 1:>2} " + " ".join(cells))
        lines.append("   " + " ".join(COLUMNS))
        return "\n".join(lines)

    def new_state(
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, str] | None = None,
        variants: Sequence[Any] = (),
        deal_seed: int | None = None,
    ) -> StrategoState:
        """As ``Game.new_state`` says. Stratego's start is the two setups, secret until
        the first move: nothing follows from ``deal_seed``, so rotations share nothing
        (the fallback setups come from ``seed``)."""
        self.check_players(num_players)
        return StrategoState(self.rules_for(options, variants), seed)
