"""The uniform random bot: picks uniformly among the legal options of each decision.

For a reinforcement (a distribution of armies) each army goes to a uniformly random
own territory; counts (dice, armies moved) are uniform over their legal range.
"""

from __future__ import annotations

import random
from typing import Any

from arena.bots._risk_common import spread, variant_decision
from arena.bots._stratego_common import random_setup
from arena.engine import Decision


class RandomRiskBot:
    def __init__(self, seat: int = 0, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        rng = self.rng
        kind = decision.kind
        opts = decision.options
        if kind in ("claim", "setup_place"):
            return {
                "type": "claim" if kind == "claim" else "place",
                "territory": rng.choice(opts["territories"]),
            }
        if kind == "trade":
            choices: list[Any] = list(opts["sets"])
            if not opts["must_trade"]:
                choices.append(None)
            pick = rng.choice(choices)
            return {"type": "no_trade"} if pick is None else {"type": "trade", "cards": pick}
        if kind == "reinforce":
            return {"type": "reinforce", "armies": spread(rng, opts["armies"], opts["territories"])}
        if kind == "attack":
            k = rng.randrange(len(opts["attacks"]) + 1)
            if k == len(opts["attacks"]):
                return {"type": "end_attack"}
            a = opts["attacks"][k]
            return {
                "type": "attack",
                "from": a["from"],
                "to": a["to"],
                "dice": rng.randint(1, a["max_dice"]),
            }
        if kind == "move_in":
            return {"type": "move_in", "armies": rng.randint(opts["min"], opts["max"])}
        if kind == "defend":
            return {"type": "defend", "dice": rng.randint(1, opts["max_dice"])}
        if kind == "headquarters":
            return {"type": "headquarters", "territory": rng.choice(opts["territories"])}
        if kind == "neutral_place":
            return variant_decision(rng, obs, decision)
        if kind == "fortify":
            k = rng.randrange(len(opts["moves"]) + 1)
            if k == len(opts["moves"]):
                return {"type": "end_turn"}
            m = opts["moves"][k]
            return {
                "type": "fortify",
                "from": m["from"],
                "to": m["to"],
                "armies": rng.randint(1, m["max_armies"]),
            }
        raise ValueError(f"random bot: unknown decision {kind!r}")


class RandomStrategoBot:
    """A random legal setup, then a uniformly random legal move (or rescue) each turn."""

    def __init__(self, seat: int = 0, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        rng = self.rng
        kind = decision.kind
        opts = decision.options
        if kind == "move":
            moves = opts["moves"]
            s, t = moves[int(rng.random() * len(moves))]
            return {"type": "move", "from": s, "to": t}
        if kind == "setup":
            return random_setup(rng, opts)
        if kind == "rescue":
            if rng.random() < 0.5:
                return {"type": "no_rescue"}
            return {
                "type": "rescue",
                "piece": rng.choice(opts["pieces"]),
                "square": rng.choice(opts["squares"]),
            }
        raise ValueError(f"random bot: unknown decision {kind!r}")


if __name__ == "__main__":  # python -m arena.bots.random_bot --referee HOST:PORT --token T
    from arena.sdk.house import main

    main("random")
