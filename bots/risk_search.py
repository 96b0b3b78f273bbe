"""The search bot for Risk: Monte Carlo search over turn plans, on sampled states.

**Why this search.** A Risk turn is a long chain of decisions (trades, a distribution
of reinforcements, any number of attacks with their dice, move-ins, a fortify), and
chance decides every battle: a tree over single actions would spend its whole budget
a few rolls deep inside one turn. What matters for a turn is its *plan*: where the
reinforcements go and what to take (a continent, a break into an opponent's continent,
a weak opponent to wipe out for their cards, the mission's targets, an opposing
headquarters, or only a card). So the bot searches over plans, and judges each by what
it leads to once every opponent has answered: a one-level Monte Carlo tree search (a
bandit at the root, successive halving) whose leaves are positions at the start of
its next turn. An expectimax over attack plans would be exact for the bot's own
battles but blind to the replies, which decide whether a conquest holds; sampled
replies see them. The exact battle odds of :mod:`arena.games.risk.odds` steer every
attack inside the samples (each seat attacks while its odds of capturing are good
enough), the dice themselves are the engine's, rolled from their exact distribution.

**Decisions.** At a ``reinforce``, ``attack``, ``move_in`` or ``fortify`` decision the
bot lists candidates, each a first action and a plan for the rest of the turn:

- reinforce: the plans of :func:`arena.bots._risk_policy.candidate_plans`, each placing
  every army on its launch territory (the hold plan on the most threatened border);
- attack: the first attack each plan would make now (and ``end_attack``);
- move_in: the fewest, the most, and a split by the threat on each side;
- fortify: ``end_turn`` and the moves of the largest stacks toward the most
  threatened territories.

One iteration samples a full state from the observation (determinization, see
:mod:`arena.bots._risk_determinize`: the other hands, the draw pile, the other missions and
the dice), applies the candidate's first action, plays the rest of the turn by its
plan, plays every opponent's turn with a fast greedy model (reinforce the best edge,
attack at 60% odds or better, trade every set), and scores the position at the start
of the bot's next turn with :func:`arena.bots._risk_policy.evaluate`: its share of the
players' strength (armies, three turns of income, cards), blended with the progress
of its mission or toward the headquarters it needs; a finished game scores 1 for a
win. Candidates are compared on the same samples (common random numbers): sample
``j`` is the same hidden cards, missions and dice seed for every candidate.
Successive halving spends the iteration budget: each round gives the candidates
still in an equal share, then drops the worse half.

The other decisions need no search: trade the set worth most whenever one is held
(with the +2 bonus on the most threatened of its territories), claim toward the
continent the bot can take most cheaply, place setup armies on that continent's
borders, put the neutral's army where it blocks the opponent, pick the headquarters
least threatened, defend with the most dice.

**Budget.** ``iterations`` (default :data:`DEFAULT_ITERATIONS`) samples per searched
decision; with a fixed budget and seed the bot plays the same game every time.
``time_limit`` (seconds, optional, for live play under a clock) stops a search early
when it runs out; decisions then depend on the machine's speed.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any

from arena.bots._risk_determinize import SEARCHED_PHASES, Determinizer, RulesGuess
from arena.bots._risk_policy import (
    HOLD,
    ODDS,
    Goals,
    Plan,
    attack_action,
    candidate_plans,
    default_placement,
    evaluate,
    move_in_amount,
    play_round,
    play_turn,
    threat,
)
from arena.engine import Decision
from arena.games.risk.map import RiskMap, load_map
from arena.games.risk.state import RiskState

DEFAULT_ITERATIONS = 48
#: at most this many candidates are searched (the most promising first)
MAX_CANDIDATES = 10


@dataclass(frozen=True)
class Candidate:
    action: dict[str, Any]
    plan: Plan


class RiskSearchBot:
    def __init__(
        self,
        seat: int = 0,
        seed: int | None = None,
        iterations: int = DEFAULT_ITERATIONS,
        time_limit: float | None = None,
    ) -> None:
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        self.rng = random.Random(seed)
        self.iterations = iterations
        self.time_limit = time_limit
        self.rules = RulesGuess()
        self.plan: Plan = HOLD
        #: simulations run and searched decisions, for benchmarks
        self.simulations = 0
        self.searches = 0

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        self.rules.observe(obs, decision)
        kind = decision.kind
        if kind in SEARCHED_PHASES:
            return self._search(obs, decision)
        game_map = load_map(obs["map"])
        if kind == "trade":
            return self._trade(obs, decision, game_map)
        if kind == "claim":
            return {"type": "claim", "territory": claim_choice(game_map, obs, decision.options)}
        if kind == "setup_place":
            return {"type": "place", "territory": setup_choice(game_map, obs, decision.options)}
        if kind == "neutral_place":
            return neutral_choice(game_map, obs, decision.options)
        if kind == "headquarters":
            return {"type": "headquarters", "territory": safest(game_map, obs, decision.options)}
        if kind == "defend":
            return {"type": "defend", "dice": decision.options["max_dice"]}
        raise ValueError(f"search bot: unknown decision {kind!r}")

    # --- the search --------------------------------------------------------------------

    def _search(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        det = Determinizer(obs, self.rules)
        base = det.template
        goals = Goals.of(obs, base.map.continents)
        candidates = self._candidates(base, goals, decision.kind)
        if len(candidates) == 1:
            chosen = candidates[0]
        else:
            chosen = candidates[self._best(det, goals, candidates)]
        self.plan = chosen.plan
        return chosen.action

    def _candidates(self, st: RiskState, goals: Goals, kind: str) -> list[Candidate]:
        me = goals.me
        out: list[Candidate] = []
        seen: set[str] = set()

        def add(action: dict[str, Any], plan: Plan) -> None:
            key = repr(sorted(action.items())) + repr(sorted(plan.targets))
            if key not in seen and len(out) < MAX_CANDIDATES:
                seen.add(key)
                out.append(Candidate(action, plan))

        if kind == "reinforce":
            for plan in candidate_plans(st, goals, st._reinforce_left):
                where = plan.placement if plan.placement is not None else default_placement(st, me)
                add({"type": "reinforce", "armies": {where: st._reinforce_left}}, plan)
        elif kind == "attack":
            add({"type": "end_attack"}, HOLD)
            for plan in [self.plan, *candidate_plans(st, goals, 0)]:
                add(attack_action(st, me, plan), plan)
        elif kind == "move_in":
            _, _, lo, hi = st._move_in  # type: ignore[misc]
            add({"type": "move_in", "armies": move_in_amount(st, me, self.plan)}, self.plan)
            for n in (lo, hi):
                add({"type": "move_in", "armies": n}, self.plan)
        else:
            add({"type": "end_turn"}, HOLD)
            for move in fortify_moves(st, me):
                add(move, HOLD)
        return out

    def _best(self, det: Determinizer, goals: Goals, candidates: list[Candidate]) -> int:
        """Successive halving over ``candidates`` with common random numbers."""
        self.searches += 1
        k = len(candidates)
        seeds: list[int] = []
        totals = [0.0] * k
        counts = [0] * k
        alive = list(range(k))
        rounds = max(1, math.ceil(math.log2(k)))
        per_round = max(len(alive), self.iterations // rounds)
        deadline = None if self.time_limit is None else time.monotonic() + self.time_limit
        for _ in range(rounds):
            share = max(1, per_round // len(alive))
            for i in alive:
                for _ in range(share):
                    j = counts[i]
                    while len(seeds) <= j:
                        seeds.append(self.rng.getrandbits(64))
                    totals[i] += self._simulate(det, goals, candidates[i], seeds[j])
                    counts[i] += 1
                    if deadline is not None and time.monotonic() > deadline:
                        return max(alive, key=lambda i: (totals[i] / max(1, counts[i]), -i))
            alive.sort(key=lambda i: (-totals[i] / max(1, counts[i]), i))
            if len(alive) > 1:
                alive = alive[: (len(alive) + 1) // 2]
        return alive[0]

    def _simulate(self, det: Determinizer, goals: Goals, cand: Candidate, seed: int) -> float:
        self.simulations += 1
        me = goals.me
        st = det.sample(random.Random(seed))
        st.apply(me, cand.action)
        play_turn(st, me, cand.plan, ODDS)
        play_round(st, me, ODDS)
        return evaluate(st, goals)

    # --- decisions without search ------------------------------------------------------

    def _trade(self, obs: dict[str, Any], decision: Decision, game_map: RiskMap) -> dict[str, Any]:
        opts = decision.options
        sets, values = opts["sets"], opts["values"]
        me, owner = obs["seat"], obs["owner"]

        def owned(s: list[int]) -> list[int]:
            return [c for c in s if c < game_map.size and owner[c] == me]

        def worth(i: int) -> tuple[int, int, int]:
            s = sets[i]
            return (values[i], min(1, len(owned(s))), -sum(c >= game_map.size for c in s))

        best = sets[max(range(len(sets)), key=worth)]
        action: dict[str, Any] = {"type": "trade", "cards": best}
        mine = owned(best)
        if mine:
            action["bonus"] = max(mine, key=lambda t: (obs_threat(game_map, obs, t), -t))
        if self.rules.bonus_this_turn(obs["turn"]) < 2 and mine:
            self.rules.bonus_used = (obs["turn"], self.rules.bonus_this_turn(obs["turn"]) + 2)
        return action


def fortify_moves(st: RiskState, me: int) -> list[dict[str, Any]]:
    """The fortify moves worth searching: from each of the largest stacks, all it can
    spare to the most threatened neighbour, and from a safe stack, everything."""
    owner, armies, nb = st.owner, st.armies, st.map.neighbours
    moves = []
    for t in sorted(
        (t for t, o in enumerate(owner) if o == me and armies[t] >= 2), key=lambda t: -armies[t]
    )[:5]:
        own = [n for n in nb[t] if owner[n] == me]
        if not own:
            continue
        to = max(own, key=lambda n: (threat(st, n) - armies[n], -n))
        safe = threat(st, t) == 0
        spare = armies[t] - 1 if safe else (armies[t] - 1) // 2
        if spare >= 1 and (safe or threat(st, to) > threat(st, t)):
            moves.append({"type": "fortify", "from": t, "to": to, "armies": spare})
    return moves


# --- setup, the headquarters, the neutral: rules of thumb ---------------------------------


def obs_threat(game_map: RiskMap, obs: dict[str, Any], t: int) -> int:
    owner, armies, passive = obs["owner"], obs["armies"], obs["passive"]
    return sum(
        armies[n]
        for n in game_map.neighbours[t]
        if owner[n] >= 0 and owner[n] != owner[t] and not passive[owner[n]]
    )


def continent_appeal(game_map: RiskMap, obs: dict[str, Any]) -> list[float]:
    """How good each continent is to make one's own: its bonus per territory, times the
    share the bot holds, less the share others hold, plus the mission's continents."""
    owner, me = obs["owner"], obs["seat"]
    mission = obs.get("mission") or {}
    wanted = [game_map.continents.index(c) for c in mission.get("continents", ())]
    out = []
    for c, ts in enumerate(game_map.continent_members):
        mine = sum(1 for t in ts if owner[t] == me)
        theirs = sum(1 for t in ts if owner[t] >= 0 and owner[t] != me)
        value = game_map.continent_bonus[c] / len(ts) + 2.0 / len(ts)
        out.append(value * (1 + 2 * mine - theirs) / len(ts) + (1.0 if c in wanted else 0.0))
    return out


def claim_choice(game_map: RiskMap, obs: dict[str, Any], opts: dict[str, Any]) -> int:
    appeal = continent_appeal(game_map, obs)
    owner, me = obs["owner"], obs["seat"]

    def score(t: int) -> tuple[float, int]:
        near = sum(1 for n in game_map.neighbours[t] if owner[n] == me)
        return (appeal[game_map.territory_continent[t]] + 0.05 * near, -t)

    return max(opts["territories"], key=score)


def setup_choice(game_map: RiskMap, obs: dict[str, Any], opts: dict[str, Any]) -> int:
    """On the border of the bot's best continent where it is most outnumbered."""
    appeal = continent_appeal(game_map, obs)
    armies = obs["armies"]
    mine = opts["territories"]
    front = [t for t in mine if obs_threat(game_map, obs, t) > 0] or mine
    best_c = max({game_map.territory_continent[t] for t in front}, key=lambda c: (appeal[c], -c))
    inside = [t for t in front if game_map.territory_continent[t] == best_c]
    return max(inside, key=lambda t: (obs_threat(game_map, obs, t) - armies[t], -t))


def safest(game_map: RiskMap, obs: dict[str, Any], opts: dict[str, Any]) -> int:
    armies = obs["armies"]
    return min(opts["territories"], key=lambda t: (obs_threat(game_map, obs, t) - armies[t], t))


def neutral_choice(game_map: RiskMap, obs: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    """Own armies where the bot is most outnumbered; the neutral's army on the neutral
    territory that borders the opponent most (it stands in the opponent's way)."""
    armies = obs["armies"]
    mine = opts["territories"]
    t = max(mine, key=lambda t: (obs_threat(game_map, obs, t) - armies[t], -t))
    action: dict[str, Any] = {"type": "place", "armies": {t: opts["armies"]}}
    if opts["neutral"]:
        owner, me = obs["owner"], obs["seat"]

        def blocks(n: int) -> tuple[int, int]:
            theirs = sum(1 for x in game_map.neighbours[n] if owner[x] not in (me, owner[n]))
            ours = sum(1 for x in game_map.neighbours[n] if owner[x] == me)
            return (theirs - ours, -n)

        action["neutral"] = max(opts["neutral_territories"], key=blocks)
    return action


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.bots.risk_search``: the house bot ``search`` as its own process, with
    its budget as options (``arena bot run search`` plays the default budget)."""
    from arena.sdk.house import run_search_bot

    run_search_bot(
        "risk_search",
        DEFAULT_ITERATIONS,
        "samples a searched decision",
        (
            "--time-limit",
            "seconds a searched decision at most (default none: the iterations alone)",
        ),
        RiskSearchBot,
        argv,
    )


if __name__ == "__main__":  # python -m arena.bots.risk_search --referee HOST:PORT --token T
    main()
