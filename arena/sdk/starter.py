"""``arena bot new NAME --game GAME``: a starter bot file that plays legal moves.

The file runs both ways, unchanged: in process (``arena play GAME --players ./NAME.py,...``)
and as its own process against a referee (``python NAME.py --token T``).
"""

from __future__ import annotations

import re
from pathlib import Path

HEADER = '''"""{name}: a {title} bot for Arena, made by `arena bot new`.

Play it in process against the house bots (no referee, no registration):

    arena play {game} --players ./{name}.py,{opponents}

Play it in a tournament in process:

    arena tournament run --game {game} --bots ./{name}.py,{tournament_bots}

Run it as its own process against a referee (the same file, unchanged):

    arena bot register {name} --referee HOST:PORT     # prints its token, once
    python {name}.py --referee HOST:PORT --token TOKEN

The observation (what you may see) and every decision are described in Arena's
docs/{game}.md. Each match gets a new instance of the class: keep what you learn about
the match on self.
"""

from __future__ import annotations

import random
from typing import Any

from arena.engine import Decision
from arena.sdk import Bot, MatchContext, main


class {cls}(Bot):
    def __init__(self, match: MatchContext) -> None:
        super().__init__(match)  # self.match: match_id, game, seat, players, variants, options
        self.rng = random.Random()
'''

RISK = '''
    def decide_risk(self, observation: dict[str, Any], decision: Decision) -> dict[str, Any]:
        """Territories are indices into observation["owner"] and observation["armies"]."""
        options = decision.options
        armies = observation["armies"]
        kind = decision.kind
        if kind == "claim":
            # options["territories"]: the unclaimed ones; claim one
            return {{"type": "claim", "territory": self.rng.choice(options["territories"])}}
        if kind == "setup_place":
            # options["territories"]: yours; options["armies_left"]; place one army
            return {{"type": "place", "territory": self.rng.choice(options["territories"])}}
        if kind == "trade":
            # options["sets"]: card-id triples you may trade; options["must_trade"]
            if options["sets"]:
                return {{"type": "trade", "cards": options["sets"][0]}}
            return {{"type": "no_trade"}}
        if kind == "reinforce":
            # options["armies"] to place, all of them, on options["territories"] (yours)
            strongest = max(options["territories"], key=lambda t: armies[t])
            return {{"type": "reinforce", "armies": {{strongest: options["armies"]}}}}
        if kind == "attack":
            # options["attacks"]: {{from, to, max_dice}} for every legal attack; options["can_end"]
            for attack in options["attacks"]:
                if armies[attack["from"]] > armies[attack["to"]] + 2:  # the strategy goes here
                    return {{
                        "type": "attack",
                        "from": attack["from"],
                        "to": attack["to"],
                        "dice": attack["max_dice"],
                    }}
            if options["can_end"] or not options["attacks"]:
                return {{"type": "end_attack"}}
            first = options["attacks"][0]
            return {{"type": "attack", "from": first["from"], "to": first["to"]}}
        if kind == "move_in":
            # after a conquest: move options["min"]..options["max"] armies into options["to"]
            return {{"type": "move_in", "armies": options["max"]}}
        if kind == "fortify":
            # options["moves"]: {{from, to, max_armies}}; one move, or end the turn
            return {{"type": "end_turn"}}
        if kind == "defend":
            # (option defender-dice=choose) roll 1..options["max_dice"] dice
            return {{"type": "defend", "dice": options["max_dice"]}}
        if kind == "neutral_place":
            # (variant neutral) options["armies"] on yours, one neutral army if options["neutral"]
            action: dict[str, Any] = {{
                "type": "place",
                "armies": {{self.rng.choice(options["territories"]): options["armies"]}},
            }}
            if options["neutral"]:
                action["neutral"] = self.rng.choice(options["neutral_territories"])
            return action
        if kind == "headquarters":
            # (variant capital) options["territories"]: yours; pick your headquarters
            strongest = max(options["territories"], key=lambda t: armies[t])
            return {{"type": "headquarters", "territory": strongest}}
        raise ValueError(f"unknown decision {{kind!r}}")
'''

STRATEGO = '''
    def decide_stratego(
        self, observation: dict[str, Any], decision: Decision
    ) -> dict[str, Any]:
        """Squares are numbers 0-99 (row * 10 + column: 0 is a1, your corner if you are
        seat 0); an action may also name them ("a1"). observation["board"] shows what
        you may see, a square a number."""
        options = decision.options
        kind = decision.kind
        if kind == "setup":
            # options["squares"]: your setup squares; options["army"]: piece name -> count.
            # Answer {{"type": "setup", "placement": {{square: piece, ...}}}}; this one is
            # random, with the flag on the back row and bombs around it
            return self.default_setup(decision, self.rng)
        if kind == "move":
            # options["moves"]: every legal [from, to]; onto an enemy piece it is a strike
            source, target = self.rng.choice(options["moves"])  # the strategy goes here
            return {{"type": "move", "from": source, "to": target}}
        if kind == "rescue":
            # (some variants) options["pieces"] you may rescue onto options["squares"]
            return {{"type": "no_rescue"}}
        raise ValueError(f"unknown decision {{kind!r}}")
'''

FOOTER = """

if __name__ == "__main__":  # python {name}.py --referee HOST:PORT --token TOKEN
    main({cls})
"""

GAMES = {
    "risk": ("Risk", RISK, "aggressive,defensive", "aggressive,defensive,random"),
    "stratego": ("Stratego", STRATEGO, "random", "random,heuristic"),
}


def class_name(stem: str) -> str:
    """``my_bot`` -> ``MyBot``: the bot's class, named after its file."""
    name = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]+", stem) if part)
    return name if name[:1].isalpha() else f"Bot{name}"


def write_starter(target: str, game: str) -> Path:
    """Write the starter bot ``target`` (``NAME`` or ``path/NAME``, ``.py`` optional) for
    ``game``; never over an existing file."""
    from arena.store.db import BOT_NAME_RULE, check_bot_name

    if game not in GAMES:
        raise ValueError(f"--game {game!r}: expected one of {', '.join(sorted(GAMES))}")
    path = Path(target if target.endswith(".py") else f"{target}.py")
    try:
        check_bot_name(path.stem)
    except ValueError:
        raise ValueError(
            f"bot name {path.stem!r}: {BOT_NAME_RULE} (it names the file and the bot)"
        ) from None
    title, body, opponents, others = GAMES[game]
    fields = {
        "name": path.stem,
        "title": title,
        "game": game,
        "cls": class_name(path.stem),
        "opponents": opponents,
        "tournament_bots": others,
    }
    text = HEADER.format(**fields) + body.format(**fields) + FOOTER.format(**fields)
    if not path.parent.is_dir():
        raise ValueError(f"{path.parent}: no such directory")
    try:
        with path.open("x") as out:  # "x": refuse to overwrite, even in a race
            out.write(text)
    except FileExistsError:
        raise ValueError(f"{path} exists: choose another name or remove it first") from None
    return path
